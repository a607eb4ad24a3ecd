/**
 * PDF machinery: for signing, opening, our incremental writer, stamp, final page, signature
 * field; for both signing and extraction, pdf.js's text with positions (pdfjs.ts).
 */
export { openPdf, findStartXref } from './open.js'
export type { OpenedPdf, LastSection, Encryption } from './open.js'
export { missingPermissions } from './security.js'
export type { SecurityHandler, Additions } from './security.js'
export { track, writeUpdate, resolve } from './incremental.js'
export type { Tracked, RawObject } from './incremental.js'
export { addStamp, layoutStamp, stampRect, MIN_FONT_PT, MAX_FONT_PT } from './stamp.js'
export type { StampLayout } from './stamp.js'
export { stampPages, stampWarnings, pageList, readStampObstacles } from './stamp-pages.js'
export type { StampOutcome, StampRequest, TextReadingBudget } from './stamp-pages.js'
export { openWithPdfJs, pageRunBatches } from './pdfjs.js'
export type { PdfJsDocument, PdfJsLoadingTask, PdfJsPage } from './pdfjs.js'
export { readTextPositions, runBox } from './text-positions.js'
export type { TextRun, TextPositions, TextPositionsOptions } from './text-positions.js'
export { pagesWithinContentLimit } from './content-size.js'
export { pageGeometry, visibleBox, pageRotation, userUnit, readerSize, toUserRect, intersect, annotationBoxes, CORNERS } from './page-box.js'
export type { Box, Corner, PageGeometry, Rotation } from './page-box.js'
export { appendFinalPage, drawQrCode } from './final-page.js'
export type { FinalPageContent } from './final-page.js'
export { addSignatureField, BYTE_RANGE_PLACEHOLDER } from './signature-field.js'
