/**
 * JSON schemas of the extraction service's routes: Fastify serializes replies with the
 * response schemas, and /openapi.json is written from them (server/extract/openapi.ts),
 * so the description cannot drift from what is answered. Wire names are the spec's
 * (spec 3 §2 B). `data` and `evidence` depend on the document type: open objects here,
 * each plugin's README lists its fields.
 *
 * Keys beyond Fastify's (`summary`, `description`, `tags`, `security`, `multipart`) are
 * ignored by Fastify and read by the OpenAPI writer. There is no `body` schema: the
 * multipart body is streamed by the route, never parsed into `request.body`.
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
    description: 'Beyond the spec, only with ?evidence=true: for each field of `data`, the page, the text it was read from and its box.'
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

/** The spec's single-extraction response; failures use the same shape without `engine`. */
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
  properties: { evidence: { type: 'string', enum: ['true', 'false'], description: 'true: add `evidence` (beyond the spec).' } }
} as const

/** The failure statuses an extraction route answers, each with the single-extraction shape. */
const failures = (statuses: number[]): Record<number, typeof extractionResponse> =>
  Object.fromEntries(statuses.map((s) => [s, extractionResponse]))

export const healthSchema = {
  summary: 'Availability',
  tags: ['service'],
  response: {
    200: {
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

export const extractSchema = {
  summary: 'Extract one PDF: its type, fields and confidence',
  tags: ['extraction'],
  security: [{ apiKey: [] }],
  multipart: { field: 'file', maxFiles: 1 },
  querystring: evidenceQuery,
  response: { 200: extractionResponse, ...failures([400, 401, 413, 415, 422, 500]) }
}

export const extractBatchSchema = {
  summary: 'Extract up to 10 PDFs; one result per file in upload order',
  description: 'Each result is the single-extraction response plus `fileName` and `status` (what the single route would have answered). A bad, damaged or too large file fails alone; the request answers 200 whenever the batch itself was acceptable.',
  tags: ['extraction'],
  security: [{ apiKey: [] }],
  multipart: { field: 'files', maxFiles: 10 },
  querystring: evidenceQuery,
  response: { 200: batchResponse, ...failures([400, 401, 500]) }
}

export const diagnosticsSchema = {
  summary: 'Operational metrics since the last start',
  tags: ['service'],
  security: [{ apiKey: [] }],
  response: { 200: diagnosticsResponse, 401: extractionResponse }
}
