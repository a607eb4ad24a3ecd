/**
 * JSON schemas of the import-job routes (/v1/imports, jobs-wire.ts), beyond the spec: the
 * answers are serialized with them and /openapi.json is written from them.
 */
import { IMPORT_STATUSES } from '../../core/importer/import-jobs.js'
import { answers, int, list, num, orNull, record, str } from '../openapi.js'
import { IDEMPOTENCY_KEY_MAX, IMPORT_LIST_LIMIT_DEFAULT, IMPORT_LIST_LIMIT_MAX } from './params.js'
import { analyzeFailures, batchSize, companyCode, detail, diagnosis, file, mode, overlap, processResponse, security, sheet, withOptional } from './schemas.js'

const PHASES = ['recebido', 'lendo', 'carregando', 'validando', 'finalizando']
const status = { type: 'string', enum: [...IMPORT_STATUSES], description: 'RECEBIDO (waiting for a worker thread), PROCESSANDO, then VALIDADO, FALHOU or CANCELADO; SUBSTITUIDO once a REIMPORTAR replaced it.' }
const phase = {
  type: 'string',
  enum: [...PHASES, ...IMPORT_STATUSES.filter((s) => s !== 'RECEBIDO' && s !== 'PROCESSANDO')],
  description: 'While it runs: recebido, lendo (opening the workbook), carregando (reading rows and sending them to the database, one pass), validando (checking the file and what was stored), finalizando (the commit). Once ended: its status.'
}
const idParam = { type: 'object', required: ['id'], properties: { id: { ...str('The import\'s id (`importacao_id`, as POST /v1/imports and GET /v1/imports answer it).'), examples: ['0b6f2c1e-8d4a-4f3b-9c2e-5a7d1e9f3b21'] } } }
const importError = withOptional(record({
  code: str('The error catalog\'s code: LEDGER_INVALID_CELLS, LEDGER_UNBALANCED, IMPORT_OVERLAP, IMPORT_CANCELLED, IMPORT_INTERRUPTED, …'),
  detail: str('What happened, for a person.'),
  fase: orNull(str('The phase it was in when it ended.'))
}), {
  sobreposicao: overlap,
  diagnostico: { ...diagnosis, description: 'LEDGER_UNBALANCED, in GET /v1/imports/{id} and its events only: the unbalanced groups and their rows, as /v1/diagnose-unbalanced answers, listing at most the first 2,000 rows (grupos_omitidos and linhas_omitidas count the rest).' }
})

const importBody = {
  importacao_id: str(),
  empresa_id: str(),
  codigo_dominio: orNull(str()),
  nome_arquivo: str(),
  sha256: str(),
  modo_importacao: mode,
  batch_size: int(),
  origem: { type: 'string', enum: ['process', 'imports', 'cli'], description: 'Started by /v1/process, /v1/imports or `razao import`.' },
  status,
  fase: phase,
  linhas_lidas: int('Data rows read so far.'),
  linhas_carregadas: int('Rows sent to the database so far (inside the load\'s transaction: nothing is visible before VALIDADO).'),
  bytes_lidos: int('Of the sheet\'s XML as read (the whole file for XLS).'),
  bytes_total: orNull(int()),
  percentual: num('Of the sheet read, 0 to 100; 100 once VALIDADO.'),
  taxa_linhas_s: orNull(int('Rows read per second since the load began.')),
  restante_estimado_s: orNull(num('Estimated seconds left to read the sheet, from the rate of bytes so far; null unless PROCESSANDO.')),
  criado_em: str('ISO 8601 UTC.'),
  iniciado_em: orNull(str('When a worker thread began the load.')),
  atualizado_em: str(),
  finalizado_em: orNull(str()),
  cancelamento_pedido_em: orNull(str('When a cancel was asked for.')),
  substituida_por: orNull(str('The import that replaced it (SUBSTITUIDO).')),
  erro: orNull(importError),
  problemas: orNull(record({ total: int('Rejected cells found.'), listados: int('Rejected cells in problems.csv (at most 100,000).'), url: str() }, 'A load refused for invalid cells: its rejected cells, as CSV.')),
  url: str('This import: GET for its state, DELETE to cancel it.'),
  eventos_url: str('Its state as Server-Sent Events.')
}
const importSummary = record(importBody)
const importFull = record({ ...importBody, resultado: orNull({ ...processResponse, description: 'Once VALIDADO: the body /v1/process answers for the same load.' }) })

/** The service's error body; these routes add the catalog's `code` to their own refusals. */
const refusal = withOptional(detail, { code: str('The stable error code of a refusal of these routes: IMPORT_IDEMPOTENCY_MISMATCH, IMPORT_FINISHED, IMPORT_NOT_CANCELLABLE, IMPORT_NOT_FOUND, IMPORT_NO_PROBLEMS, SERVICE_BUSY.') })

const accepted = record({ importacao_id: str(), status, fase: phase, url: str(), eventos_url: str() })

const failures = {
  400: 'A malformed parameter or header.',
  401: 'X-API-Key missing or invalid.',
  404: 'No import has this id.',
  500: 'Internal error: quote the request id the message names.'
}

export const importsPostSchema = {
  summary: 'Import a ledger as a job: 202 once the upload is stored, then follow it',
  description: 'The same fields as /v1/process. The answer comes as soon as the upload is stored; GET the `url` (or its `eventos_url`) for phase, progress and, once VALIDADO, the body /v1/process answers. ' +
    `With an Idempotency-Key (a quoted string of 1 to ${IDEMPOTENCY_KEY_MAX} characters, best a UUID) the same key with the same file and fields answers the same import for 24 hours; with another file or fields, 422.`,
  tags: ['imports'],
  security,
  headers: { type: 'object', properties: { 'idempotency-key': { description: 'Optional: a key naming this request, best a new UUID for each file. Left empty: none.', examples: [''] } } },
  multipart: {
    type: 'object',
    required: ['file', 'codigo_dominio'],
    properties: { file, codigo_dominio: companyCode, modo_importacao: mode, batch_size: batchSize, sheet }
  },
  response: {
    202: { ...accepted, description: 'Stored and queued (or, for a repeated Idempotency-Key, the import it stands for). Location: its URL.' },
    ...answers(refusal, {
      ...analyzeFailures,
      404: 'No company has this codigo_dominio.',
      409: 'The company is inactive.',
      422: 'A form field is missing, or the Idempotency-Key stands for an import of another file or fields.',
      503: 'This instance holds as many import jobs as it takes (IMPORT_MAX_JOBS); try again after Retry-After seconds.'
    })
  }
}

export const importsListSchema = {
  summary: 'List imports, newest first',
  tags: ['imports'],
  security,
  querystring: {
    type: 'object',
    properties: {
      codigo_dominio: { description: 'Only this company\'s imports (4521: the README\'s). Left empty: every company\'s.', examples: [''] },
      status: { description: `Only imports in this status: ${IMPORT_STATUSES.join(', ')}. Left empty: any.`, examples: [''] },
      limit: { description: `At most this many, 1 to ${IMPORT_LIST_LIMIT_MAX} (default ${IMPORT_LIST_LIMIT_DEFAULT}).`, examples: [String(IMPORT_LIST_LIMIT_DEFAULT)] }
    }
  },
  response: {
    200: record({ count: int(), importacoes: list(importSummary) }, 'The imports (without `resultado`; GET one for it).'),
    ...answers(refusal, { ...failures, 404: 'No company has this codigo_dominio.' })
  }
}

export const importGetSchema = {
  summary: 'One import: phase, progress, and once VALIDADO the /v1/process body',
  tags: ['imports'],
  security,
  params: idParam,
  response: { 200: { ...importFull, description: 'The import.' }, ...answers(refusal, failures) }
}

export const importEventsSchema = {
  summary: 'One import\'s state as Server-Sent Events, until it ends',
  description: 'Events `importacao` (data: the same JSON as GET /v1/imports/{id}) whenever it changes, then `fim` once it has ended; a comment every 15 s keeps the stream open.',
  tags: ['imports'],
  security,
  params: idParam,
  response: {
    200: { description: 'text/event-stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
    ...answers(refusal, { ...failures, 503: 'This instance has as many event streams open as it serves (200); poll the import instead.' })
  }
}

export const importDeleteSchema = {
  summary: 'Cancel an import, on whichever instance it runs',
  description: 'Nothing of a cancelled import is kept: its movements are rolled back and it holds no movement key. Its row stays, CANCELADO, for the record.',
  tags: ['imports'],
  security,
  params: idParam,
  response: {
    200: { ...importFull, description: 'It was waiting: it is CANCELADO now.' },
    202: { ...importFull, description: 'It was running: the cancel is recorded, and it ends CANCELADO within about a second (follow `url`).' },
    ...answers(refusal, { ...failures, 409: 'It has already ended (VALIDADO, SUBSTITUIDO, FALHOU or CANCELADO), or it was started by /v1/process.' })
  }
}

export const importProblemsSchema = {
  summary: 'The rejected cells of a load refused for invalid cells, as CSV',
  description: 'UTF-8 with a byte order mark, `;` between fields, header linha;coluna;valor_original;motivo, one line per cell (the first 100,000; a last line says how many more).',
  tags: ['imports'],
  security,
  params: idParam,
  response: {
    200: { description: 'text/csv.', content: { 'text/csv': { schema: { type: 'string' } } } },
    ...answers(refusal, { ...failures, 404: 'No import has this id, or it has no rejected cells on record.' })
  }
}
