/**
 * What a /v1/process request asks of a worker thread: read the upload and stream it
 * into PostgreSQL with COPY on this thread's connection. Shared by the pool task
 * (XLSX) and the one-shot XLS isolate.
 */
import type pg from 'pg'
import { EngineError } from '../core/errors.js'
import { processLedger } from '../core/importer/process-ledger.js'
import type { ImportMode, ProcessResult } from '../core/importer/process-ledger.js'
import type { CopyMode } from '../core/importer/copy-sink.js'
import { REQUIRED_COLUMNS } from '../core/ledger/index.js'
import { sheetReader } from '../core/xlsx/index.js'
import type { SpreadsheetFormat } from '../core/xlsx/index.js'
import { isConnectionError } from '../core/db/pg-errors.js'
import { databaseUnavailable, discardThreadConnection } from './db-connection.js'

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
  /** Benchmarks only: how batches reach COPY (default `stream`). */
  copyMode?: CopyMode | undefined
}

export type ProcessJobOutput = ProcessResult

export async function runProcessJob (
  input: ProcessJobInput,
  format: SpreadsheetFormat,
  client: pg.Client,
  onProgress?: (done: number, total: number) => void
): Promise<ProcessJobOutput> {
  const read = sheetReader(format)
  const request = { fileName: input.fileName, sha256: input.sha256, codigoDominio: input.codigoDominio, mode: input.mode, batchSize: input.batchSize, copyMode: input.copyMode }
  try {
    return await processLedger(client, (onRow, afterChunk) => read(input.path, onRow, {
      maxInflatedBytes: input.maxInflatedBytes,
      headerColumns: REQUIRED_COLUMNS,
      afterChunk,
      ...(onProgress === undefined ? {} : { onProgress })
    }), request)
  } catch (err) {
    if (err instanceof EngineError) throw err
    if (isConnectionError(err)) {
      await discardThreadConnection()
      throw databaseUnavailable(err)
    }
    throw err
  }
}
