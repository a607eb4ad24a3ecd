/**
 * JSON schemas of the extraction service's routes: Fastify serializes replies with the
 * response schemas, and /openapi.json is written from them (server/openapi.ts), so the
 * description cannot drift from what is answered. Wire names are the spec's (spec 3 §2
 * B). `data` and `evidence` depend on the document type: open objects in the schemas
 * answers are serialized with; the description types `data` with each plugin's declared
 * schema (`dataComponents`, `documentedResponse`), and each plugin's README lists its fields.
 *
 * `multipart` describes the upload for the document only (server/openapi.ts): the body
 * is streamed by the route, never parsed into `request.body`.
 */

const problem = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'Stable code, e.g. PDF_NOT_PDF, PLUGIN_NO_MATCH, PLUGIN_CHECK_FAILED.' },
    message: { type: 'string' },
    field: { type: 'string', description: 'The field of `data` it is about, when there is one.' }
  },
  additionalProperties: true
} as const

const nullableString = { type: ['string', 'null'] } as const

const engine = {
  type: 'object',
  description: 'How the document was recognised (spec 3 §2 B `engine`).',
  properties: {
    version: { type: 'string' },
    family: nullableString,
    detector: nullableString,
    parser: nullableString,
    parserVersion: nullableString,
    parserStatus: nullableString,
    schemaVersion: nullableString,
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    confidenceLevel: { type: 'string', enum: ['HIGH', 'MEDIUM', 'LOW'] },
    minimumConfidence: { type: ['number', 'null'] },
    parserExecuted: { type: 'boolean' },
    parserBlocked: { type: 'boolean' },
    matchedRules: { type: 'array', items: { type: 'string' } },
    missingRules: { type: 'array', items: { type: 'string' } },
    excludedRules: { type: 'array', items: { type: 'string' } },
    fieldsExpected: { type: 'integer', description: 'Beyond the spec: the fields the parser expects on this document (required and optional).' },
    fieldsFound: { type: 'integer', description: 'Beyond the spec: how many of them were read; a required one missing is a FIELD_NOT_FOUND warning.' },
    textSource: { type: 'string', enum: ['TEXT_LAYER', 'OCR', 'MIXED'], description: 'Beyond the spec: the PDF\'s text layer, OCR of scanned pages, or both (`ocrPages` names the scanned ones).' },
    ocrPages: { type: 'array', items: { type: 'integer' }, description: 'Beyond the spec: the pages read by OCR.' }
  }
} as const

const extractionProperties = {
  success: { type: 'boolean' },
  documentType: { type: ['string', 'null'], description: 'The recognised type, UNKNOWN when none fits, null when the file could not be read.' },
  pages: { type: 'integer' },
  data: { type: ['object', 'null'], additionalProperties: true, description: 'The fields of the document type (see the plugin READMEs); missing fields are null.' },
  warnings: { type: 'array', items: problem },
  errors: { type: 'array', items: problem },
  requestId: { type: 'string' },
  engine,
  evidence: {
    type: 'object',
    additionalProperties: true,
    description: 'Beyond the spec, only with ?evidence=true: for each field of `data`, the page, the text it was read from and its box; for a value read by OCR, `confidence` (0 to 1), the lowest Tesseract confidence among its words.'
  },
  candidates: {
    type: 'array',
    description: 'Beyond the spec, only with ?evidence=true: every active plugin\'s verdict on the document, in registry order, so that a person can see why a neighbouring type lost.',
    items: {
      type: 'object',
      properties: {
        plugin: { type: 'string' },
        documentType: { type: 'string' },
        confidence: { type: 'number' },
        matchedRules: { type: 'array', items: { type: 'string' } },
        excludedRules: { type: 'array', items: { type: 'string' } },
        outcome: { type: 'string', enum: ['selected', 'excluded', 'no-strong-rule', 'lower-confidence', 'tie-order'] }
      },
      additionalProperties: true
    }
  }
} as const

/**
 * The shape of `data` for each document type, from each plugin's own declaration
 * (`plugins/<id>/schema.ts`): set once the registry is loaded (app.ts loads it when the
 * description is first asked for), written into /openapi.json as `components.schemas`
 * (`DarfData`, `PgdasExtratoData`, ...). Answers are still serialized with the open `data`
 * above: a field a schema missed would be dropped from answers, not just from the document.
 */
let dataSchemas: Array<{ documentType: string, schema: Record<string, unknown> }> | undefined

export function useDataSchemas (schemas: Array<{ documentType: string, schema: Record<string, unknown> }>): void {
  dataSchemas = schemas
}

/** `PGDAS_EXTRATO` → `PgdasExtratoData`: the component a client generator names a class after. */
export const dataComponentName = (documentType: string): string =>
  `${documentType.toLowerCase().split('_').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}Data`

/** The components of /openapi.json: one schema per document type (none until the registry is loaded). */
export function dataComponents (): Record<string, Record<string, unknown>> {
  return Object.fromEntries((dataSchemas ?? []).map(({ documentType, schema }) =>
    [dataComponentName(documentType), { ...schema, title: dataComponentName(documentType), description: `\`data\` when \`documentType\` is ${documentType} (the plugin's README describes each field).` }]))
}

/** `data` as the document shows it: one of the document types' schemas, or null. */
function typedData (): Record<string, unknown> | undefined {
  if (dataSchemas === undefined) return undefined
  return {
    anyOf: [...dataSchemas.map(({ documentType }) => ({ $ref: `#/components/schemas/${dataComponentName(documentType)}` })), { type: 'null' }],
    description: 'The fields of the document type `documentType` names, one schema per type (`components.schemas`, `...Data`); null when no type fits or the file could not be read. Missing fields are null.'
  }
}

/** The single-extraction response; failures use the same shape without `engine`. */
export const extractionResponse = {
  type: 'object',
  required: ['success', 'documentType', 'pages', 'data', 'warnings', 'errors', 'requestId'],
  properties: extractionProperties
} as const

const batchResult = {
  type: 'object',
  required: ['fileName', 'status', 'success', 'documentType', 'pages', 'data', 'warnings', 'errors', 'requestId'],
  properties: {
    fileName: { type: 'string', description: 'The name the client gave the part.' },
    status: { type: 'integer', description: 'The HTTP status /api/v1/pdf/extract would have answered for this file alone.' },
    ...extractionProperties
  }
} as const

const batchResponse = {
  type: 'object',
  required: ['success', 'requestId', 'total', 'succeeded', 'failed', 'results'],
  properties: {
    success: { type: 'boolean', description: 'True when every file was extracted.' },
    requestId: { type: 'string' },
    total: { type: 'integer' },
    succeeded: { type: 'integer' },
    failed: { type: 'integer' },
    results: { type: 'array', items: batchResult, description: 'One per file, in upload order.' }
  }
} as const

const diagnosticsResponse = {
  type: 'object',
  required: ['success', 'message', 'requestId', 'data', 'errors', 'warnings'],
  properties: {
    success: { type: 'boolean' },
    message: { type: 'string' },
    requestId: { type: 'string' },
    data: {
      type: 'object',
      properties: {
        service: { type: 'string' },
        environment: { type: 'string' },
        engineVersion: { type: 'string' },
        uptimeSeconds: { type: 'integer' },
        processedDocuments: { type: 'integer' },
        successfulDocuments: { type: 'integer' },
        failedDocuments: { type: 'integer' },
        successRate: { type: 'number', minimum: 0, maximum: 1 },
        blockedByConfidence: { type: 'integer' },
        unknownDocuments: { type: 'integer' },
        rejectedUploads: { type: 'integer', description: 'Uploads refused before processing: too large, not a PDF, no file, too many files.' },
        averageProcessingMs: { type: 'number' },
        parsers: { type: 'object', properties: { total: { type: 'integer' }, active: { type: 'integer' }, inactive: { type: 'integer' } } },
        byDocumentType: { type: 'object', additionalProperties: { type: 'integer' } },
        byConfidenceLevel: { type: 'object', properties: { HIGH: { type: 'integer' }, MEDIUM: { type: 'integer' }, LOW: { type: 'integer' } } }
      }
    },
    errors: { type: 'array', items: problem },
    warnings: { type: 'array', items: { type: 'string' } }
  }
} as const

const evidenceQuery = {
  type: 'object',
  properties: { evidence: { type: 'string', enum: ['true', 'false'], description: 'true: add `evidence` (beyond the spec). Absent: false.', examples: ['false'] } }
} as const

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is malformed (no file, wrong field, too many files).',
  401: 'API key missing or invalid.',
  413: 'The file is larger than EXTRACT_MAX_FILE_BYTES.',
  408: 'The upload sent nothing for EXTRACT_BODY_TIMEOUT_MS.',
  415: 'The file is not a PDF by its bytes.',
  422: 'The PDF cannot be read: encrypted, damaged, too many pages, too slow.',
  500: 'Internal error: quote the requestId.',
  503: 'No worker thread took the document within EXTRACT_QUEUE_TIMEOUT_MS, or the machine was too busy to read it within EXTRACT_DOCUMENT_WALL_TIMEOUT_MS (the file is not at fault): try again after Retry-After seconds.'
}

/** The failure statuses an extraction route answers, each with the single-extraction shape. */
const failures = (statuses: number[]): Record<number, typeof extractionResponse & { description: string }> =>
  Object.fromEntries(statuses.map((s) => [s, { ...extractionResponse, description: STATUS_TEXT[s]! }]))

/** A form whose field `field` carries one PDF, or up to `maxFiles` of them. */
function pdfForm (field: string, maxFiles: number): Record<string, unknown> {
  const file = { type: 'string', format: 'binary', contentMediaType: 'application/pdf', description: 'A PDF of at most EXTRACT_MAX_FILE_BYTES (see /api/v1/info).' }
  return {
    type: 'object',
    required: [field],
    properties: { [field]: maxFiles === 1 ? file : { type: 'array', items: file, maxItems: maxFiles, description: `Up to ${maxFiles} PDFs, one part each.` } }
  }
}

export const healthSchema = {
  summary: 'Availability',
  tags: ['service'],
  response: {
    200: {
      description: 'The service is up.',
      type: 'object',
      properties: { status: { type: 'string' }, service: { type: 'string' }, version: { type: 'string' }, environment: { type: 'string' }, requestId: { type: 'string' } }
    }
  }
}

export const infoSchema = {
  summary: 'Public version, engine version, limits and active parsers',
  tags: ['service'],
  response: {
    200: {
      description: 'The public facts of this service.',
      type: 'object',
      properties: {
        service: { type: 'string' },
        version: { type: 'string', description: 'Public contract version.' },
        engineVersion: { type: 'string' },
        environment: { type: 'string' },
        limits: { type: 'object', properties: { maxFileBytes: { type: 'integer' }, maxPages: { type: 'integer' }, maxBatchFiles: { type: 'integer' } } },
        parsers: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              documentType: { type: 'string' },
              family: { type: 'string' },
              version: { type: 'string' },
              schemaVersion: { type: 'string' },
              status: { type: 'string' },
              minimumConfidence: { type: 'number' }
            }
          }
        },
        requestId: { type: 'string' }
      }
    }
  }
}

const extractOk = { ...extractionResponse, description: 'The document was read: its type, fields and confidence (success false when a check failed or no type fits).' }

export const extractSchema = {
  summary: 'Extract one PDF: its type, fields and confidence',
  tags: ['extraction'],
  security: [{ apiKey: [] }],
  multipart: pdfForm('file', 1),
  querystring: evidenceQuery,
  response: { 200: extractOk, ...failures([400, 401, 408, 413, 415, 422, 500, 503]) },
  documentedResponse: () => {
    const data = typedData()
    return data === undefined ? undefined : { ...extractSchema.response, 200: { ...extractOk, properties: { ...extractOk.properties, data } } }
  }
}

const batchOk = { ...batchResponse, description: 'One result per file.' }

export const extractBatchSchema = {
  summary: 'Extract up to 10 PDFs; one result per file in upload order',
  description: 'Each result is the single-extraction response plus `fileName` and `status` (what the single route would have answered). A bad, damaged or too large file fails alone; the request answers 200 whenever the batch itself was acceptable.',
  tags: ['extraction'],
  security: [{ apiKey: [] }],
  multipart: pdfForm('files', 10),
  querystring: evidenceQuery,
  response: { 200: batchOk, ...failures([400, 401, 408, 500]) },
  documentedResponse: () => {
    const data = typedData()
    if (data === undefined) return undefined
    const results = { ...batchResult, properties: { ...batchResult.properties, data } }
    return { ...extractBatchSchema.response, 200: { ...batchOk, properties: { ...batchOk.properties, results: { ...batchOk.properties.results, items: results } } } }
  }
}

export const diagnosticsSchema = {
  summary: 'Operational metrics since the last start',
  tags: ['service'],
  security: [{ apiKey: [] }],
  response: { 200: { ...diagnosticsResponse, description: 'The metrics.' }, ...failures([401]) }
}
