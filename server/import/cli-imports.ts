/**
 * `razao imports list|show|cancel`: the answers of GET /v1/imports, GET /v1/imports/{id} and
 * DELETE /v1/imports/{id}, straight from the database (no service needs to run), as JSON on
 * stdout. Exit codes as the rest of the CLI: 1 when the import could not be cancelled.
 */
import { companyNotFound, findCompany } from '../../core/db/companies.js'
import { IMPORT_STATUSES, listImportations, requestCancel, requireImportation } from '../../core/importer/import-jobs.js'
import type { ImportationRecord } from '../../core/importer/import-jobs.js'
import { recoverInterruptedImports } from '../../core/importer/load-state.js'
import type { Database } from '../database.js'
import { toWireImport, toWireImportWithResult } from './jobs-wire.js'
import { parseCodigoDominio, parseImportStatus, parseListLimit } from './params.js'

export interface ImportsFlags {
  'codigo-dominio'?: string | undefined
  status?: string | undefined
  limit?: string | undefined
}

export async function importsCommand (
  rest: string[], values: ImportsFlags, withDatabase: <T>(work: (db: Database) => Promise<T>) => Promise<T>, usage: (message: string) => Error
): Promise<void> {
  const print = (value: unknown): void => { process.stdout.write(`${JSON.stringify(value, null, 2)}\n`) }
  const [action, id] = rest
  const requireId = (): string => {
    if (id === undefined) throw usage(`razao imports ${action ?? ''} needs the import's id; see razao imports --help`)
    return id
  }
  switch (action) {
    case 'list': {
      const codigoDominio = parseCodigoDominio(values['codigo-dominio'], false)
      const status = parseImportStatus(values.status, IMPORT_STATUSES)
      const limit = parseListLimit(values.limit)
      return await withDatabase(async (db) => {
        let empresaId: string | undefined
        if (codigoDominio !== undefined) {
          const company = await findCompany(db.pool, codigoDominio)
          if (company === undefined) throw companyNotFound(codigoDominio)
          empresaId = company.id
        }
        print((await listImportations(db.pool, { empresaId, status, limit })).map(toWireImport))
      })
    }
    case 'show': {
      const wanted = requireId()
      return await withDatabase(async (db) => print(toWireImportWithResult(await requireImportation(db.pool, wanted))))
    }
    case 'cancel': {
      const wanted = requireId()
      return await withDatabase(async (db) => {
        const answer = await requestCancel(db.pool, wanted)
        const ended = answer.outcome === 'cancelled' ? answer.record : await untilEnded(db, wanted)
        print(toWireImportWithResult(ended))
        if (ended.status === 'CANCELADO') process.stderr.write(`razao: import ${wanted} cancelled: nothing of it was kept\n`)
        else if (RUNNING.has(ended.status)) process.stderr.write(`razao: the cancel of import ${wanted} is recorded; it is still ${ended.status}: the instance running it stops it at its next progress write\n`)
        else {
          process.stderr.write(`razao: import ${wanted} ended ${ended.status} before it could be cancelled\n`)
          process.exitCode = 1
        }
      })
    }
    default: throw usage(`razao imports needs list, show or cancel${action === undefined ? '' : `, not "${action}"`}; see razao imports --help`)
  }
}

const RUNNING = new Set(['RECEBIDO', 'PROCESSANDO'])
/** How long `razao imports cancel` waits for the import to end: many times the one second a live instance takes. */
const CANCEL_WAIT_MS = 30_000

/** Waits for a cancelled import to end, running recovery too (its instance may be gone, and none other running). */
async function untilEnded (db: Database, id: string): Promise<ImportationRecord> {
  const until = Date.now() + CANCEL_WAIT_MS
  for (;;) {
    await recoverInterruptedImports(db.pool)
    const record = await requireImportation(db.pool, id)
    if (!RUNNING.has(record.status) || Date.now() > until) return record
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

