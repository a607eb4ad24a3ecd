/**
 * Imports as jobs (issue 31, items 3 and 6): POST /v1/imports answers 202 once the upload is
 * stored and runs the load on this instance (jobs.ts); GET, the events, the list, DELETE and
 * problems.csv read and write the row, so that any instance answers about any import.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { EngineError } from '../../core/errors.js'
import { companyInactive, companyNotFound, findCompany } from '../../core/db/companies.js'
import {
  IMPORT_STATUSES, createReceivedImport, getImportation, importationProblems, listImportations, requestCancel, requireImportation
} from '../../core/importer/import-jobs.js'
import { detectFormat } from '../../core/xlsx/index.js'
import type { ImportConfig, SharedConfig } from '../config.js'
import type { Database } from '../database.js'
import { receiveUpload } from '../upload.js'
import type { Upload } from '../upload.js'
import { EVENTS_MAX_STREAMS, closeEventStreamsOnClose, openEventStreams, streamImportEvents } from './import-events.js'
import type { EventsOptions } from './import-events.js'
import type { ImportJobs } from './jobs.js'
import { importDeleteSchema, importEventsSchema, importGetSchema, importProblemsSchema, importsListSchema, importsPostSchema } from './jobs-schemas.js'
import { importUrl, toAcceptedImport, toWireImport, toWireImportWithResult } from './jobs-wire.js'
import { parseBatchSize, parseCodigoDominio, parseIdempotencyKey, parseImportMode, parseImportStatus, parseListLimit, parseSheet, singleQueryValue } from './params.js'
import { PROBLEMS_CSV_TYPE, problemsCsv } from './problems-csv.js'

export interface ImportJobRoutesOptions {
  shared: SharedConfig
  config: ImportConfig
  database: Pick<Database, 'url' | 'pool'> | undefined
  /** Undefined without a database: the routes then answer 500 (DATABASE_UNAVAILABLE). */
  jobs: () => ImportJobs | undefined
  events?: EventsOptions | undefined
}

/** Seconds a client told 503 (this instance is full) should wait. */
const BUSY_RETRY_AFTER_S = 30

type IdRequest = FastifyRequest<{ Params: { id: string } }>

export function registerImportJobRoutes (app: FastifyInstance, options: ImportJobRoutesOptions): void {
  const { shared, config } = options
  closeEventStreamsOnClose(app)
  const database = (): Pick<Database, 'url' | 'pool'> => {
    if (options.database === undefined) throw new EngineError('DATABASE_UNAVAILABLE', 'This service runs without a database, so it has no imports.')
    return options.database
  }

  app.post('/v1/imports', { schema: importsPostSchema }, async (request, reply) => {
    // Checked before the body is read: a refusal costs the client no upload.
    const idempotencyKey = parseIdempotencyKey(request.headers['idempotency-key'])
    const db = database()
    const jobs = options.jobs()!
    if (!jobs.reserve()) {
      return await (reply as FastifyReply).code(503).header('retry-after', String(BUSY_RETRY_AFTER_S)).send({
        code: 'SERVICE_BUSY',
        detail: `This instance holds as many import jobs as it takes (IMPORT_MAX_JOBS); nothing was stored. Try again in ${BUSY_RETRY_AFTER_S} seconds, or on another instance.`
      })
    }
    let upload: Upload | undefined
    let handedOver = false
    try {
      upload = await receiveUpload(request, shared.tmpDir)
      const batchSize = parseBatchSize(upload.fields.batch_size)
      const mode = parseImportMode(upload.fields.modo_importacao)
      const codigoDominio = parseCodigoDominio(upload.fields.codigo_dominio, true)!
      const sheet = parseSheet(upload.fields.sheet)
      if (upload.fileName.includes('\u0000')) throw new EngineError('REQUEST_INVALID', 'The file name holds a NUL character; rename the file and send it again.')
      if (upload.path === undefined) throw new EngineError('REQUEST_INCOMPLETE', 'The request has no file: send the spreadsheet in the multipart field "file".')
      // Neither a spreadsheet nor a known company: refused now, before any import exists.
      await detectFormat(upload.path)
      const company = await findCompany(db.pool, codigoDominio)
      if (company === undefined) throw companyNotFound(codigoDominio)
      if (!company.ativo) throw companyInactive(codigoDominio)
      const created = await createReceivedImport(db.pool, {
        empresaId: company.id, codigoDominio, fileName: upload.fileName, sha256: upload.sha256, mode, batchSize, instancia: jobs.instance, idempotencyKey, sheet
      })
      if (!created.replayed) {
        void jobs.run(created.id, upload, {
          path: upload.path, fileName: upload.fileName, sha256: upload.sha256, codigoDominio, mode, batchSize, maxInflatedBytes: config.maxInflatedBytes, databaseUrl: db.url, sheet
        })
        handedOver = true
      }
      return await reply.code(202).header('location', importUrl(created.id)).send(toAcceptedImport(await requireImportation(db.pool, created.id)))
    } finally {
      if (!handedOver) {
        jobs.unreserve()
        await upload?.remove()
      }
    }
  })

  app.get('/v1/imports', { schema: importsListSchema }, async (request) => {
    const query = request.query as Record<string, unknown>
    const codigoDominio = parseCodigoDominio(singleQueryValue('codigo_dominio', query.codigo_dominio), false)
    const status = parseImportStatus(query.status, IMPORT_STATUSES)
    const limit = parseListLimit(query.limit)
    const db = database()
    let empresaId: string | undefined
    if (codigoDominio !== undefined) {
      const company = await findCompany(db.pool, codigoDominio)
      if (company === undefined) throw companyNotFound(codigoDominio)
      empresaId = company.id
    }
    const items = await listImportations(db.pool, { empresaId, status, limit })
    return { count: items.length, importacoes: items.map(toWireImport) }
  })

  app.get('/v1/imports/:id', { schema: importGetSchema }, async (request: IdRequest) =>
    toWireImportWithResult(await requireImportation(database().pool, request.params.id)))

  app.get('/v1/imports/:id/events', { schema: importEventsSchema }, async (request: IdRequest, reply: FastifyReply) => {
    const pool = database().pool
    const first = await requireImportation(pool, request.params.id)
    if (openEventStreams(app) >= (options.events?.maxStreams ?? EVENTS_MAX_STREAMS)) {
      return await (reply as FastifyReply).code(503).header('retry-after', String(BUSY_RETRY_AFTER_S)).send({
        code: 'SERVICE_BUSY',
        detail: `This instance has as many event streams open as it serves; poll GET /v1/imports/${first.id} instead, or try again in ${BUSY_RETRY_AFTER_S} seconds.`
      })
    }
    streamImportEvents(app, request, reply, first, () => getImportation(pool, first.id), {
      ...options.events,
      onSettled: (id, listener) => options.jobs()?.onSettled(id, listener) ?? (() => undefined)
    })
  })

  app.delete('/v1/imports/:id', { schema: importDeleteSchema }, async (request: IdRequest, reply) => {
    const answer = await requestCancel(database().pool, request.params.id)
    // Held here: stopped (or taken out of the pool's queue) now rather than at the next progress write.
    options.jobs()?.stopLocal(answer.record.id)
    return await reply.code(answer.outcome === 'cancelled' ? 200 : 202).send(toWireImportWithResult(answer.record))
  })

  app.get('/v1/imports/:id/problems.csv', { schema: importProblemsSchema }, async (request: IdRequest, reply) => {
    const found = await importationProblems(database().pool, request.params.id)
    if (found === undefined) {
      throw new EngineError('IMPORT_NO_PROBLEMS', `Import ${request.params.id} has no rejected cells on record: only a load refused for invalid cells keeps them (GET /v1/imports/${request.params.id} says how it ended).`)
    }
    return await reply
      .type(PROBLEMS_CSV_TYPE)
      .header('content-disposition', `attachment; filename="importacao-${request.params.id}-problemas.csv"`)
      .send(problemsCsv(found.problems, found.total))
  })
}
