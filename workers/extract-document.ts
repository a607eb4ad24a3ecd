/**
 * Pool task: extract one uploaded PDF. Bounds what its streams inflate to from the raw
 * bytes, reads the text layer with pdf.js in this thread (bounded by the limits in the
 * input), then runs the engine over the plugin registry. With `limits.deferOcr`, a scan
 * stops after its text layer and the measure of its images, and says which pages want
 * OCR (the service then gives it an OCR turn: server/extract/run.ts).
 * Failures to read the file (not a PDF, encrypted, damaged, too many pages, deadline)
 * cross the wire as errors; everything the engine decides (unknown type, blocked parser,
 * no text layer) is a result.
 */
import { readFile } from 'node:fs/promises'
import { OcrWanted, TextDocument, currentThreadId, extractDocument, looksLikePdf, readPdfText, threadCpuMs } from '../core/extraction/index.js'
import { refuseRawContentBombs } from '../core/pdf/index.js'
import type { ExtractionResult, PdfTextLimits } from '../core/extraction/index.js'
import { plugins } from '../plugins/index.js'
import { defineTask } from './task.js'

export interface ExtractDocumentInput {
  /** The stored upload. */
  path: string
  limits: PdfTextLimits
  /**
   * Where the task writes, at its start, its thread's system id (an Int32 at 0) and its
   * processor time then (ms, a Float64 at 8): the service's hard limit reads the thread's
   * processor time from there (server/extract/run.ts).
   */
  thread?: SharedArrayBuffer
}

export type ExtractDocumentOutput = ExtractionResult

/**
 * The answer when `limits.deferOcr` is set and pages want OCR (their images measured and
 * within bounds): their numbers; the caller runs the task again without it, on its OCR turn.
 */
export interface OcrWantedOutput { ocrWanted: number[] }

/** What the task answers: a result, or, with `limits.deferOcr`, the pages that want OCR. */
export type ExtractDocumentReply = ExtractDocumentOutput | OcrWantedOutput

export default defineTask(async (input: ExtractDocumentInput): Promise<ExtractDocumentReply> => {
  if (input.thread !== undefined) {
    const tid = currentThreadId()
    const cpu = threadCpuMs()
    if (tid !== undefined && cpu !== undefined) {
      new Float64Array(input.thread, 8, 1)[0] = cpu
      // Last, atomically: a reader that sees the id sees the start written before it.
      Atomics.store(new Int32Array(input.thread, 0, 1), 0, tid)
    }
  }
  try {
    return await extractPdfBytes(await readFile(input.path), input.limits)
  } catch (err) {
    if (err instanceof OcrWanted) return { ocrWanted: err.pages }
    throw err
  }
})

/** One PDF's bytes through the engine, as the service reads an upload (also the warm-up's path, workers/extract-warm.ts). */
export async function extractPdfBytes (bytes: Uint8Array, limits: PdfTextLimits): Promise<ExtractionResult> {
  // A bound from the raw bytes first: readPdfText measures pages through pdf-lib, and a
  // file pdf-lib cannot parse would otherwise reach pdf.js unmeasured.
  if (looksLikePdf(bytes)) refuseRawContentBombs(bytes, limits.maxPageContentBytes, limits.maxTotalContentBytes)
  return extractDocument(new TextDocument(await readPdfText(bytes, limits)), plugins)
}

/** What /api/v1/info lists: the registry's plugins, in order, without their code. */
export function parserDescriptions (): Array<{ id: string, documentType: string, family: string, version: string, schemaVersion: string, status: string, minimumConfidence: number }> {
  return plugins.map((p) => ({ id: p.id, documentType: p.documentType, family: p.family, version: p.version, schemaVersion: p.schemaVersion, status: p.status, minimumConfidence: p.minimumConfidence }))
}

/** Each plugin's declared shape of `data` (its `schema.ts`), by document type, in registry order: the typed `data` of /openapi.json. */
export function dataSchemas (): Array<{ documentType: string, schema: Record<string, unknown> }> {
  return plugins.flatMap((p) => p.dataSchema === undefined ? [] : [{ documentType: p.documentType, schema: p.dataSchema.json }])
}
