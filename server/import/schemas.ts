/**
 * JSON schemas of the import service's routes (spec 1 §2, wire.ts): Fastify serializes
 * the answers with them and /openapi.json is written from them (server/openapi.ts).
 * Amounts are JSON numbers with at most two decimals (exact cents, converted in wire.ts).
 * Every failure is `{ "detail": "...", "code": "...", "requestId": "..." }`.
 */
import { BATCH_SIZE_DEFAULT, BATCH_SIZE_MAX, BATCH_SIZE_MIN } from './params.js'
import { answers, bool, int, list, num, orNull, record, str } from '../openapi.js'
import type { JsonSchema } from '../openapi.js'

export const detail = record({
  detail: str('What went wrong, for a person.'),
  code: str('Beyond the spec: the stable code of the error, for programs to branch on (e.g. LEDGER_UNBALANCED, UNAUTHORIZED).'),
  requestId: str('Beyond the spec: the request id (also in the X-Request-Id header), to quote when reporting a problem.')
})
export const security = [{ apiKey: [] }]

const cellProblem = record({
  linha: int('Row number as the spreadsheet shows it.'),
  coluna: str(),
  valor: str('The cell as read.'),
  problema: str('INVALID_AMOUNT, NEGATIVE_AMOUNT, ROUNDED_AMOUNT, INVALID_DATE, INVALID_INTEGER, MISSING_ID_MOVIM_FINAN, …'),
  mensagem: str()
})

const analysis = {
  success: bool(),
  file_name: str(),
  sha256: str('SHA-256 of the uploaded bytes, hex.'),
  total_rows: int(),
  total_batches: int(),
  total_debit: num(),
  total_credit: num(),
  difference: num('total_debit − total_credit.'),
  distinct_id_movim_finan: int(),
  min_date: orNull(str('yyyy-mm-dd')),
  max_date: orNull(str('yyyy-mm-dd')),
  types: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Rows by `tipo`.' },
  rows_with_both_debit_credit: int(),
  rows_without_values: int(),
  unbalanced_lots: int('id_movim_finan groups whose debit and credit differ.'),
  invalid_cells: int('Beyond the spec: cells that could not be read as their column\'s type.'),
  negative_amounts: int('Beyond the spec: amounts below zero, kept with their sign.'),
  rounded_amounts: int('Beyond the spec: amounts with more than two decimals, rounded to the cent.'),
  cell_problems: list(cellProblem, 'Beyond the spec: the first problem cells.')
}

const diagnosticLine = record({
  linha_origem: int(),
  tipo_origem: orNull(str()),
  id_conta: orNull(int()),
  id_planejamento: orNull(int()),
  descricao_origem: orNull(str()),
  valor_debito: num(),
  valor_credito: num(),
  historico_origem: orNull(str())
})

export const diagnosis = record({
  success: bool(),
  diagnostico: { type: 'string', enum: ['ARQUIVO_BALANCEADO', 'ARQUIVO_DESBALANCEADO'] },
  nome_arquivo: str(),
  sha256: str(),
  resumo: record({
    total_linhas: int(),
    total_movimentos_financeiros: int(),
    total_debito: num(),
    total_credito: num(),
    diferenca: num(),
    quantidade_grupos_desbalanceados: int(),
    total_batches: int()
  }),
  grupos_desbalanceados: list(record({
    id_movim_finan: int(),
    data: orNull(str('yyyy-mm-dd')),
    total_debito: num(),
    total_credito: num(),
    diferenca: num(),
    quantidade_linhas: int('Rows of the group; `linhas` lists fewer when the listing cap cut it short.'),
    descricao_origem: orNull(str()),
    historico_origem: orNull(str()),
    linhas: list(diagnosticLine)
  })),
  grupos_omitidos: int('Beyond the spec: unbalanced groups past the listing cap.'),
  linhas_omitidas: int('Beyond the spec: rows of unbalanced groups not listed.')
})

const overlappedImport = record({
  importacao_id: str(),
  nome_arquivo: str(),
  sha256: str(),
  criado_em: str('When that import was created, ISO 8601 UTC.'),
  total_linhas: int('Its movements.'),
  movimentos_sobrepostos: int('Its movements that this file carries too (same `id`).'),
  movimentos_fora_do_arquivo: int('Its movements that this file does not carry: they stop counting if it is replaced.')
})

export const overlap = record({
  codigo_dominio: str(),
  movimentos_sobrepostos: int('Movements of the file already active in the company\'s imports (same `id`).'),
  importacoes: list(overlappedImport, 'The active imports holding them, oldest first.')
})

/** A schema whose listed properties may be left out. */
export const withOptional = (schema: JsonSchema, optional: Record<string, JsonSchema>): JsonSchema =>
  ({ ...schema, properties: { ...(schema.properties as Record<string, JsonSchema>), ...optional } })

export const file = { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description: 'The ledger: .xlsx, legacy .xls, or CSV/TXT text (an addition beyond spec 1: docs/import.md, "CSV and TXT ledgers"), decided by its bytes; at most IMPORT_MAX_UPLOAD_BYTES.' }
// Each form field carries a default or an example that works on the samples `razao samples`
// writes (the README's walk-through), so /docs' "Try it out" succeeds with what it fills in.
export const batchSize = { ...str(`Rows per batch, ${BATCH_SIZE_MIN} to ${BATCH_SIZE_MAX} (default ${BATCH_SIZE_DEFAULT}); changes only total_batches.`), default: String(BATCH_SIZE_DEFAULT) }
export const sheet = { ...str('Beyond the spec: the sheet to read, by name or by its position from 1 (hidden tabs counted). Default: the first visible sheet. Ignored for a CSV.'), examples: ['1'] }
/** A registered company's code; 4521 is the one the README's walk-through registers. */
export const companyCode = { ...str('The company\'s code in Domínio, at most 64 characters (register it first: `razao companies add`; 4521 is the README\'s).'), examples: ['4521'] }
export const mode = { type: 'string', enum: ['NORMAL', 'REIMPORTAR'], default: 'NORMAL', description: 'REIMPORTAR replaces, whole, the earlier import of the same file and every import sharing movements (same `id`) with it.' }

export const analyzeFailures = {
  400: 'Not a readable spreadsheet (format, encryption, zip bomb, DTD), missing columns, empty ledger, or a malformed form.',
  401: 'X-API-Key missing or invalid.',
  413: 'The file is larger than IMPORT_MAX_UPLOAD_BYTES.',
  422: 'A form field is missing or out of range.',
  500: 'Internal error: quote the request id the message names.'
}

export const healthSchema = {
  summary: 'Availability and the runtime',
  tags: ['service'],
  response: {
    200: record({
      success: bool(),
      service: str(),
      environment: str(),
      runtime: record({
        name: str(),
        version: str(),
        line: int('The Node.js major version.'),
        supported: bool('Whether the test suite runs on this line.'),
        xlsxInflate: { type: 'string', enum: ['native-handle', 'stream'], description: 'The inflate engine the XLSX reader uses here.' }
      }, 'Beyond the spec.')
    }, 'The service is up.')
  }
}

export const analyzeSchema = {
  summary: 'Analyse a ledger: totals, dates, types and problems, without writing anything',
  tags: ['import'],
  security,
  multipart: {
    type: 'object',
    required: ['file'],
    properties: {
      file,
      batch_size: batchSize,
      modo_importacao: mode,
      sheet,
      codigo_dominio: { ...str('Optional: a company\'s code, e.g. 4521 (the company the README registers). The answer then says which of the file\'s movements that company already has active (`sobreposicao`); nothing is stored. Left empty: the file alone.'), examples: [''] }
    }
  },
  response: {
    200: withOptional(record(analysis, 'The analysis.'), {
      sobreposicao: withOptional(overlap, { aviso: orNull(str('What /v1/process would do with the overlap; null when there is none.')) })
    }),
    ...answers(detail, { ...analyzeFailures, 404: 'codigo_dominio was given and no company has it.' })
  }
}

export const diagnoseSchema = {
  summary: 'List the unbalanced id_movim_finan groups of a ledger, with their rows',
  tags: ['import'],
  security,
  multipart: { type: 'object', required: ['file'], properties: { file, batch_size: batchSize, sheet } },
  response: { 200: { ...diagnosis, description: 'The diagnosis (ARQUIVO_BALANCEADO when every group balances).' }, ...answers(detail, analyzeFailures) }
}

/** ProcessResponse: /v1/process's answer, and an import job's `resultado`. */
export const processResponse = record({
  ...analysis,
  importacao_id: str(),
  empresa_id: str(),
  codigo_dominio: str(),
  modo_importacao: mode,
  replaced_importacao_id: orNull(str()),
  importacoes_substituidas: list(overlappedImport, 'Beyond the spec: every import this REIMPORTAR replaced, whole (the same file\'s, and every one sharing movements with it).'),
  inserted_rows: int(),
  status: { type: 'string', enum: ['VALIDADO'] }
})

export const processSchema = {
  summary: 'Import a ledger into the database for a company',
  tags: ['import'],
  security,
  multipart: {
    type: 'object',
    required: ['file', 'codigo_dominio'],
    properties: { file, codigo_dominio: companyCode, modo_importacao: mode, batch_size: batchSize, sheet }
  },
  response: {
    200: { ...processResponse, description: 'The ledger was loaded and validated.' },
    ...answers(withOptional(detail, { code: str('Beyond the spec, on some refusals: the stable error code, e.g. IMPORT_OVERLAP.'), sobreposicao: overlap }), {
      ...analyzeFailures,
      404: 'No company has this codigo_dominio.',
      409: 'The company is inactive, this file was already imported for it, or some of its movements are already active in other imports (code IMPORT_OVERLAP, with `sobreposicao`); send modo_importacao=REIMPORTAR to replace them.',
      422: 'A form field is missing or out of range, or the ledger is unbalanced or has invalid cells.',
      500: 'The database is unavailable or the load did not validate; the message names the request id.'
    })
  }
}

