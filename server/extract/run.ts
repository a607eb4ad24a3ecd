/**
 * One stored PDF through the pool's `extract-document` task, as the routes and
 * `razao extract` run it: the task gets the cooperative limits, and a hard limit a
 * little later stops its thread when a page never yields (the pool ends the thread).
 */
import { EngineError } from '../../core/errors.js'
import type { ExtractionResult } from '../../core/extraction/index.js'
import { runTask } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import type { ExtractDocumentInput, ExtractDocumentOutput } from '../../workers/extract-document.js'
import type { ExtractConfig } from './config.js'

/** Margin of the hard limit over the cooperative deadline, ms. */
const HARD_LIMIT_MARGIN_MS = 5_000

/**
 * The engine's result for the file at `path`; throws EngineError (PDF_*, ABORTED when
 * `cancel` fired, INTERNAL when the thread failed).
 */
export async function extractStoredFile (pool: WorkerPool, path: string, config: Pick<ExtractConfig, 'maxPages' | 'documentTimeoutMs'>, cancel?: AbortSignal): Promise<ExtractionResult> {
  const input: ExtractDocumentInput = { path, limits: { maxPages: config.maxPages, deadlineMs: config.documentTimeoutMs, maxRunsPerPage: 50_000 } }
  // Counted from when the file asks for its turn: with a full pool a file waits in the
  // queue, so the hard limit sits a little past the cooperative deadline.
  const hardLimit = AbortSignal.timeout(config.documentTimeoutMs + HARD_LIMIT_MARGIN_MS)
  const signal = cancel === undefined ? hardLimit : AbortSignal.any([cancel, hardLimit])
  try {
    return await runTask<ExtractDocumentInput, ExtractDocumentOutput>(pool, 'extract-document', input, signal)
  } catch (err) {
    if (hardLimit.aborted && cancel?.aborted !== true) throw new EngineError('PDF_TIMEOUT', `Reading the PDF took longer than ${config.documentTimeoutMs} ms and was stopped; the file may be damaged or crafted.`)
    throw err
  }
}
