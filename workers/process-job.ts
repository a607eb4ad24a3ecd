/**
 * What a /v1/process request asks of a worker thread: read the upload and stream it
 * into PostgreSQL with COPY on this thread's connection. Shared by the pool task
 * (XLSX) and the one-shot XLS isolate.
 */
import type { MessagePort } from 'node:worker_threads'
import type pg from 'pg'
import { EngineError } from '../core/errors.js'
import { processLedger } from '../core/importer/process-ledger.js'
import type { ImportMode, ProcessResult } from '../core/importer/process-ledger.js'
import type { LoadOrigin } from '../core/importer/load-state.js'
import type { CopyMode } from '../core/importer/copy-sink.js'
import { REQUIRED_COLUMNS } from '../core/ledger/index.js'
import { sheetReader } from '../core/xlsx/index.js'
import type { SpreadsheetFormat } from '../core/xlsx/index.js'
import { isConnectionError } from '../core/db/pg-errors.js'
import { databaseUnavailable, discardThreadConnection } from './db-connection.js'
import { portReporter } from './load-report.js'
import type { LoadReporter } from './load-report.js'

export interface ProcessJobInput {
  /** Temporary file holding the upload; the caller owns and removes it. */
  path: string
  fileName: string
  sha256: string
  codigoDominio: string
  mode: ImportMode
  batchSize: number
  maxInflatedBytes: number
  databaseUrl: string
  /** The sheet to read (name or 1-based position); default the first visible one. */
  sheet?: string | number | undefined
  /** Benchmarks only: how batches reach COPY (default `stream`). */
  copyMode?: CopyMode | undefined
  /** A job of POST /v1/imports: its RECEBIDO importation, which the load takes. */
  adopt?: string | undefined
  /** Who runs the load (default `process`). */
  origin?: LoadOrigin | undefined
  /** A job: a refused load keeps its row, FALHOU with the code, and its rejected cells. */
  keepRefused?: boolean | undefined
  /** Where the load reports its progress (LoadSnapshot messages); transferred with the task, closed at its end. */
  progressPort?: MessagePort | undefined
}

export type ProcessJobOutput = ProcessResult

/**
 * `reporter` is for an in-process caller (the CLI); across a thread the load reports
 * through `input.progressPort` instead.
 */
export async function runProcessJob (
  input: ProcessJobInput,
  format: SpreadsheetFormat,
  client: pg.Client,
  reporter?: LoadReporter
): Promise<ProcessJobOutput> {
  const read = sheetReader(format)
  const request = { fileName: input.fileName, sha256: input.sha256, codigoDominio: input.codigoDominio, mode: input.mode, batchSize: input.batchSize, copyMode: input.copyMode }
  const port = reporter === undefined && input.progressPort !== undefined ? portReporter(input.progressPort) : undefined
  const report = reporter ?? port?.reporter
  const options = { adopt: input.adopt, origin: input.origin, keepRefused: input.keepRefused, ...report?.loadOptions() }
  try {
    return await processLedger(client, (onRow, afterChunk, quiet) => read(input.path, onRow, {
      maxInflatedBytes: input.maxInflatedBytes,
      sheet: input.sheet,
      headerColumns: REQUIRED_COLUMNS,
      afterChunk,
      ...(report === undefined || quiet === true ? {} : { onProgress: report.bytes })
    }), request, options)
  } catch (err) {
    if (err instanceof EngineError) throw err
    if (isConnectionError(err)) {
      await discardThreadConnection()
      throw databaseUnavailable(err)
    }
    throw err
  } finally {
    port?.close()
  }
}
