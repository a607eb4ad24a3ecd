/** pdf.js ships no typings for its worker module; it is only handed back to pdf.js (core/pdf/pdfjs.ts). */
declare module 'pdfjs-dist/legacy/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: unknown
}
