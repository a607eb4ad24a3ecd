/**
 * JSON schemas of the signature service's routes (spec 2 §2): Fastify serializes the
 * answers with them and /openapi.json is written from them (server/openapi.ts). The
 * request body is read by wire.ts (field by field, with the spec's messages); `jsonBody`
 * only describes it. Every failure is the envelope of errors.ts.
 */
import { answers, bool, int, list, openObject, orNull, record, str } from '../openapi.js'
import type { JsonSchema } from '../openapi.js'

const certificate = record({
  signerName: str(),
  signerDocument: str('CPF or CNPJ of the holder, digits only.'),
  certificateAuthority: str(),
  certificateSerialNumber: str(),
  validFrom: str('ISO 8601 with offset, in SIGN_TIME_ZONE.'),
  validUntil: str('ISO 8601 with offset, in SIGN_TIME_ZONE.')
}, 'The signing certificate (public facts, also in every signed PDF).')

/** A successful answer in the service's envelope: `success`, `message`, `requestId`, then `fields` (`data`, …). */
const okEnvelope = (fields: Record<string, JsonSchema>, description?: string): JsonSchema =>
  record({ success: bool(), message: str(), requestId: str(), ...fields }, description)

const errorEnvelope = record({
  success: { type: 'boolean', enum: [false] },
  message: str(),
  requestId: str(),
  data: { type: 'null' },
  errors: list(record({ code: str('UNAUTHORIZED, VALIDATION_ERROR, INVALID_JSON, INVALID_REQUEST, INVALID_PDF, FILE_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, MULTIPART_ERROR, INVALID_CERTIFICATE, TIMESTAMP_ERROR, INTERNAL_ERROR, RESOURCE_NOT_FOUND.'), message: str(), field: orNull(str('The request field it is about.')) })),
  warnings: list(str()),
  code: str('The first error\'s code (the earlier release\'s shape).'),
  timestamp: str(),
  path: str()
})

const unauthorized = {
  401: 'X-API-Key missing or invalid.',
  403: 'X-API-Key missing or invalid, when SIGN_UNAUTHORIZED_STATUS=403.'
}

export const signSchema = {
  summary: 'Sign a PDF (PAdES-B, or PAdES-T with a timestamp authority) with the service\'s certificate',
  description: 'The body is JSON (below) or multipart/form-data: the PDF as the file part "file", the options (originalFileName, level) as text fields; without an originalFileName field the file part\'s name stands for it. ' +
    'With Accept: application/pdf the answer is the signed PDF itself (Content-Disposition names it; X-Document-Identifier, X-Signed-At, X-Signature-Standard, X-Timestamp-Applied, X-Document-Sha256 and X-Signature-Warnings, a JSON array, carry the rest of data); failures are always the JSON envelope.',
  tags: ['signature'],
  security: [{ apiKey: [] }],
  jsonBody: {
    type: 'object',
    required: ['pdfBase64'],
    properties: {
      pdfBase64: str('The PDF in Base64, or a data:application/pdf;base64, URI; at most SIGN_MAX_PDF_BYTES once decoded.'),
      originalFileName: str('1 to 255 characters; the answer names the signed file after it.')
    }
  },
  response: {
    200: okEnvelope({
      data: record({
        signedPdfBase64: str(),
        documentIdentifier: str(),
        signedAt: str('ISO 8601 with offset, in SIGN_TIME_ZONE.'),
        signatureStandard: { type: 'string', enum: ['PAdES-B', 'PAdES-T'] },
        signatureFormat: { type: 'string', enum: ['PAdES'] },
        timestampApplied: bool(),
        certificate,
        document: {
          type: 'object',
          required: ['mimeType', 'sizeBytes', 'sha256'],
          properties: {
            originalFileName: str('Only when the request named the file.'),
            signedFileName: str('Only when the request named the file.'),
            mimeType: str(),
            sizeBytes: int(),
            sha256: str('SHA-256 of the signed PDF, hex.')
          }
        }
      }),
      errors: list(record({})),
      warnings: list(str())
    }, 'The signed PDF.'),
    ...answers(errorEnvelope, {
      400: 'The body is not JSON or breaks a field rule (VALIDATION_ERROR names the field), a form without its file part or with a malformed body (MULTIPART_ERROR), or the PDF cannot be signed (INVALID_PDF, INVALID_REQUEST).',
      ...unauthorized,
      408: 'The upload sent nothing for SIGN_BODY_TIMEOUT_MS (INVALID_REQUEST).',
      413: 'The PDF is larger than SIGN_MAX_PDF_BYTES.',
      415: 'The body is neither application/json nor multipart/form-data.',
      500: 'The certificate or the timestamp authority failed, or an internal error: quote the requestId.'
    })
  }
}

export const healthSchema = {
  summary: 'Availability, the certificate\'s state and warnings',
  tags: ['service'],
  response: {
    200: okEnvelope({
      data: record({
        service: str(),
        status: { type: 'string', enum: ['UP', 'DOWN'], description: 'DOWN when the certificate the files hold now is unusable (expired, wrong password, a key usage not for signing): the reason is in warnings.' },
        environment: str(),
        javaVersion: str('The contract\'s name; reports the Node.js version that runs the service.'),
        certificateValidUntil: orNull(str('End of the signing certificate\'s validity (ISO 8601 with offset, SIGN_TIME_ZONE); null when it cannot be opened.')),
        certificateDaysLeft: orNull(int('Whole days until then (0 on the last day, negative once expired); warnings speak from 30 days before. Null when it cannot be opened.'))
      }),
      warnings: list(str()),
      executionTimeMs: int(),
      timestamp: str(),
      version: str('The API contract version.')
    }, 'The service answers (see data.status).')
  }
}

const actuatorHealth = record({
  status: { type: 'string', enum: ['UP', 'DOWN'] },
  components: record({
    certificate: record({ status: str(), details: openObject('signerName, certificateAuthority and validUntil of the certificate the files hold now; or error (the code) and message (the reason) when it is unusable.') }),
    workerPool: record({ status: str(), details: record({ threads: int(), queued: int() }) }),
    timestampAuthority: record({ status: { type: 'string', enum: ['DISABLED', 'CONFIGURED'] } })
  })
})

/** The actuator routes need the key only with SIGN_ACTUATOR_AUTH=api-key (the production default). */
const actuatorSecurity = [{}, { apiKey: [] }]

export const actuatorHealthSchema = {
  summary: 'Health for monitors: the certificate, the worker pool and the timestamp authority',
  tags: ['service'],
  security: actuatorSecurity,
  response: {
    ...answers(actuatorHealth, { 200: 'The service can sign.', 503: 'The certificate is unusable or expired.' }),
    ...answers(errorEnvelope, unauthorized)
  }
}

export const actuatorInfoSchema = {
  summary: 'Versions, runtime and signature settings',
  tags: ['service'],
  security: actuatorSecurity,
  response: {
    200: record({
      app: record({ name: str(), version: str('The package version.'), apiVersion: str() }),
      runtime: record({ name: str(), version: str(), supported: bool(), testedLines: list(int()) }),
      signature: record({
        standard: { type: 'string', enum: ['PAdES-B', 'PAdES-T'] },
        format: str(),
        visualMode: str(),
        policy: str('The signature policy\'s name, or NONE.'),
        developmentCertificate: bool()
      })
    }, 'The facts.'),
    ...answers(errorEnvelope, unauthorized)
  }
}
