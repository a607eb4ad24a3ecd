/**
 * Pool task: extract one uploaded PDF. Bounds what its streams inflate to from the raw
 * bytes, reads the text layer with pdf.js in this thread (bounded by the limits in the
 * input), then runs the engine over the plugin registry.
 * Failures to read the file (not a PDF, encrypted, damaged, too many pages, deadline)
 * cross the wire as errors; everything the engine decides (unknown type, blocked parser,
 * no text layer) is a result.
 */
import { readFile } from 'node:fs/promises'
import { TextDocument, extractDocument, looksLikePdf, readPdfText } from '../core/extraction/index.js'
import { refuseRawContentBombs } from '../core/pdf/index.js'
import type { ExtractionResult, PdfTextLimits } from '../core/extraction/index.js'
import { plugins } from '../plugins/index.js'
import { defineTask } from './task.js'

export interface ExtractDocumentInput {
  /** The stored upload. */
  path: string
  limits: PdfTextLimits
}

export type ExtractDocumentOutput = ExtractionResult

export default defineTask(async (input: ExtractDocumentInput): Promise<ExtractDocumentOutput> => await extractPdfBytes(await readFile(input.path), input.limits))

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
