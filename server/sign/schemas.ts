/**
 * JSON schemas of the signature service's routes (spec 2 §2): Fastify serializes the
 * answers with them and /openapi.json is written from them (server/openapi.ts). The
 * request body is read by wire.ts (field by field, with the spec's messages); `jsonBody`
 * only describes it. Every failure is the envelope of errors.ts.
 */
import { answers, bool, int, list, openObject, orNull, record, str } from '../openapi.js'
import type { JsonSchema } from '../openapi.js'

/**
 * The example of `pdfBase64` in /docs: a one-page A4 PDF reading "Contrato de exemplo", written
 * here with its cross-reference offsets counted, so "Try it out" signs something real without
 * a file to encode first.
 */
function examplePdf (): Buffer {
  const text = 'BT /F1 18 Tf 72 770 Td (Contrato de exemplo) Tj ET'
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`
  ]
  let pdf = '%PDF-1.4\n'
  const offsets = objects.map((body, i) => {
    const at = pdf.length
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`
    return at
  })
  const xref = pdf.length
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(pdf, 'latin1')
}

export const EXAMPLE_PDF_BASE64 = examplePdf().toString('base64')

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
  errors: list(record({ code: str('UNAUTHORIZED, VALIDATION_ERROR, INVALID_JSON, INVALID_REQUEST, INVALID_PDF, FILE_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, INVALID_CERTIFICATE, TIMESTAMP_ERROR, REVOCATION_ERROR, INTERNAL_ERROR, RESOURCE_NOT_FOUND, MULTIPART_ERROR.'), message: str(), field: orNull(str('The request field it is about.')) })),
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
  summary: 'Sign a PDF (PAdES-B, -T, -LT or -LTA; T and above need a timestamp authority) with the service\'s certificate',
  description: 'The body is JSON (below) or multipart/form-data: the PDF as the file part "file", the options (originalFileName, level) as text fields; without an originalFileName field the file part\'s name stands for it. ' +
    'With Accept: application/pdf the answer is the signed PDF itself (Content-Disposition names it; X-Document-Identifier, X-Signed-At, X-Signature-Standard, X-Timestamp-Applied, X-Document-Sha256 and X-Signature-Warnings, a JSON array, carry the rest of data); failures are always the JSON envelope.',
  tags: ['signature'],
  security: [{ apiKey: [] }],
  jsonBody: {
    type: 'object',
    required: ['pdfBase64'],
    properties: {
      pdfBase64: { ...str('The PDF in Base64, or a data:application/pdf;base64, URI; at most SIGN_MAX_PDF_BYTES once decoded. The example is a one-page PDF that signs as it is (`base64 -w0 samples/contrato.pdf` gives the README\'s).'), examples: [EXAMPLE_PDF_BASE64] },
      originalFileName: { ...str('1 to 255 characters; the answer names the signed file after it.'), examples: ['contrato.pdf'] },
      level: { type: 'string', enum: ['B', 'T', 'LT', 'LTA'], description: 'PAdES baseline level: B (B-B), T (B-T, signature timestamp), LT (B-T plus a DSS with the chain\'s revocation data), LTA (B-LT plus a document timestamp). Default: T when the service has a timestamp authority (SIGN_TSA_URL), B otherwise.' }
    }
  },
  response: {
    200: okEnvelope({
      data: record({
        signedPdfBase64: str(),
        documentIdentifier: str(),
        signedAt: str('ISO 8601 with offset, in SIGN_TIME_ZONE.'),
        signatureStandard: { type: 'string', enum: ['PAdES-B', 'PAdES-T', 'PAdES-LT', 'PAdES-LTA'] },
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
      500: 'The certificate failed or is revoked (INVALID_CERTIFICATE), the timestamp authority failed (TIMESTAMP_ERROR), revocation data for LT/LTA could not be obtained (REVOCATION_ERROR), or an internal error: quote the requestId.'
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

const signatureReport = openObject('One signature or document time-stamp, oldest first: index, kind (signature | document-timestamp), fieldName, subFilter, verdict (VALID | INDETERMINATE | INVALID), problems (why not VALID), notes, signer (name, document, documentKind, icpBrasil otherNames, certificate), claimedSigningTime (/M), integrity (byteRange, coverage, digestMatches, signatureValid, signingCertificateMatches), chain (certificates, trusted, anchor), validity (signingTime, signingTimeSource, atSigningTime, now), revocation, timestamp (time, authority, valid, trusted), pades (level B-B | B-T | B-LT | B-LTA or null, policy, forbiddenAttributes), changesAfter (updates, pagesAdded, annotations, form fields, signatures, document time-stamps, DSS, level NONE | LTA_UPDATES | FORM_FILLING | ANNOTATIONS | OTHER), docMdp. Field by field in docs/signature.md.')

export const verifySchema = {
  summary: 'Verify the signatures of a PDF: integrity, signer, chain and trust, time-stamp, PAdES level, changes after signing',
  description: 'The PDF as a multipart file part (field "file"), or as JSON { "pdfBase64": ... } like the sign request. The answer is 200 whatever the verdict; data.verdict is VALID, INDETERMINATE, INVALID or UNSIGNED.',
  tags: ['signature'],
  security: [{ apiKey: [] }],
  multipart: {
    type: 'object',
    required: ['file'],
    properties: { file: { type: 'string', format: 'binary', description: 'The PDF; at most SIGN_MAX_PDF_BYTES.' } }
  },
  response: {
    200: okEnvelope({
      data: {
        type: 'object',
        required: ['sizeBytes', 'trustStore', 'verdict', 'signatures', 'pageCount', 'securityStore'],
        properties: {
          fileName: str('Only when the request named the file.'),
          sizeBytes: int(),
          trustStore: record({ description: str('The shipped ICP-Brasil roots, or the folder SIGN_TRUST_DIR names.'), anchors: list(str('File name of each anchor.')) }),
          verdict: { type: 'string', enum: ['VALID', 'INDETERMINATE', 'INVALID', 'UNSIGNED'], description: 'The worst verdict of the file\'s signatures; UNSIGNED when it has none.' },
          pageCount: int(),
          securityStore: orNull(openObject('The DSS (PAdES-B-LT): counts of certificates, ocspResponses, crls, vriEntries.')),
          signatures: list(signatureReport)
        }
      },
      errors: list(record({})),
      warnings: list(str())
    }, 'The verification report.'),
    ...answers(errorEnvelope, {
      400: 'The body breaks a field rule (VALIDATION_ERROR), the multipart body cannot be read (MULTIPART_ERROR), or the file is not a readable PDF (INVALID_PDF).',
      ...unauthorized,
      408: 'The upload sent nothing for SIGN_BODY_TIMEOUT_MS (INVALID_REQUEST).',
      413: 'The PDF is larger than SIGN_MAX_PDF_BYTES.',
      415: 'The body is neither multipart/form-data nor application/json.',
      500: 'An internal error or the time limit (SIGN_TASK_TIMEOUT_MS): quote the requestId.'
    })
  }
}
