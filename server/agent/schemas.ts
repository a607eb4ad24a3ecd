/**
 * JSON schemas of the automation agent's routes (spec 3 §2 C, §4 C): Fastify serializes
 * the answers with them and /openapi.json is written from them (server/openapi.ts).
 * `limit` and the run body are read by wire.ts with the spec's messages; their schemas
 * here carry no type, so Fastify validates nothing the routes do not already check.
 * Every failure is `{ "error": "...", "code": "...", "requestId": "..." }`.
 */
import { bool, failuresOf, int, list, openObject, orNull, record, str } from '../openapi.js'
import type { JsonSchema } from '../openapi.js'

const failure = record({
  error: str('What went wrong, for a person.'),
  code: str('Beyond the spec: the stable code of the error, for programs to branch on (e.g. UNAUTHORIZED, JOB_NOT_FOUND).'),
  requestId: str('Beyond the spec: the request id (also in the X-Request-Id header), to quote when reporting a problem.')
})
const security = [{ agentKey: [] }]
const when = {
  400: 'The body or a parameter breaks its rule (the message says which).',
  401: 'X-AGENT-API-KEY missing or invalid.',
  404: 'No such automation.',
  409: 'The automation is disabled.',
  410: 'The file has expired and was removed.',
  413: 'The body is larger than JSON_LIMIT, or the input larger than AGENT_MAX_INPUT_BYTES.',
  429: 'The queue holds AGENT_MAX_QUEUED_JOBS jobs already: try again after Retry-After seconds.',
  415: 'The body is not application/json.',
  500: 'Internal error: quote the request id the message names.'
} as const
const failures = failuresOf(failure, when)

const automation = record({
  schemaVersion: str(),
  id: str(),
  name: str(),
  version: str(),
  enabled: bool()
})
const automationList = record({ count: int(), items: list(automation) })

const file = record({
  fileId: str(),
  jobId: str(),
  fileName: str(),
  mimeType: str(),
  sizeBytes: int(),
  createdAt: str(),
  expiresAt: str('Past it, the file is removed (AGENT_FILE_RETENTION_DAYS).'),
  downloadedAt: orNull(str()),
  downloadUrl: str()
})

const job = record({
  id: str(),
  jobId: str('The same as id.'),
  requestId: str('The caller\'s idempotency key, or one made by the agent.'),
  automationId: str(),
  status: { type: 'string', enum: ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT'] },
  createdAt: str(),
  startedAt: orNull(str()),
  finishedAt: orNull(str()),
  input: openObject('The request\'s input, every senha or password field masked.'),
  result: orNull(record({
    success: bool(),
    status: { type: 'string', enum: ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'FAILED_TO_START'] },
    exitCode: orNull(int()),
    signal: orNull(str()),
    durationMs: int(),
    result: orNull(openObject('The package\'s AGENT_RESULT_JSON object.'))
  })),
  files: list(file),
  error: orNull(record({ code: str('AGENT_FAILED_TO_START, AGENT_TIMED_OUT, AGENT_EXIT_NON_ZERO, AGENT_NO_RESULT, AGENT_RESULT_INVALID, AGENT_SHUTDOWN.'), message: str() }))
})

const param = (name: string, description: string): JsonSchema =>
  ({ type: 'object', required: [name], properties: { [name]: str(description) } })

export const healthSchema = {
  summary: 'Availability',
  tags: ['service'],
  response: {
    200: record({
      status: str(),
      service: str(),
      version: str(),
      executor: str('AGENT_EXECUTOR_ID.'),
      environment: str(),
      automationsLoaded: int(),
      startedAt: str(),
      uptimeSeconds: int(),
      timestamp: str()
    }, 'The agent is up.')
  }
}

export const automationsSchema = {
  summary: 'The automation packages found under AGENT_AUTOMATIONS_DIR',
  tags: ['automations'],
  security,
  response: { 200: { ...automationList, description: 'Every package, enabled or not.' }, ...failures(401, 500) }
}

export const reloadSchema = {
  summary: 'Read the packages again from disk',
  tags: ['automations'],
  security,
  response: { 200: { ...automationList, description: 'The packages after the reload.' }, ...failures(401, 500) }
}

export const automationSchema = {
  summary: 'One automation package',
  tags: ['automations'],
  security,
  params: param('id', 'The package id.'),
  response: { 200: { ...automation, description: 'The package.' }, ...failures(401, 404, 500) }
}

export const runSchema = {
  summary: 'Queue a job of an automation',
  description: 'The same requestId answers the same job again (idempotent).',
  tags: ['jobs'],
  security,
  params: param('id', 'The package id.'),
  jsonBody: {
    type: 'object',
    properties: {
      requestId: str('At most 200 characters; absent: the agent makes one.'),
      input: openObject('Handed to the package; absent: {}.')
    }
  },
  response: { 202: { ...job, description: 'The job, queued (or the earlier job of this requestId).' }, ...failures(400, 401, 404, 409, 413, 415, 429, 500) }
}

export const jobsSchema = {
  summary: 'The most recent jobs, newest first',
  tags: ['jobs'],
  security,
  querystring: { type: 'object', properties: { limit: { description: 'A whole number from 1 to 200 (default 50).' } } },
  response: { 200: record({ count: int(), items: list(job) }, 'The jobs.'), ...failures(400, 401, 500) }
}

export const jobByRequestSchema = {
  summary: 'The job of a requestId',
  tags: ['jobs'],
  security,
  params: param('requestId', 'The requestId the job was queued with.'),
  response: { 200: { ...job, description: 'The job.' }, ...failures(401, 404, 500) }
}

export const jobSchema = {
  summary: 'One job',
  tags: ['jobs'],
  security,
  params: param('jobId', 'The job id.'),
  response: { 200: { ...job, description: 'The job.' }, ...failures(401, 404, 500) }
}

export const jobFilesSchema = {
  summary: 'The files a job registered',
  tags: ['jobs'],
  security,
  params: param('jobId', 'The job id.'),
  response: { 200: record({ jobId: str(), count: int(), items: list(file) }, 'The files.'), ...failures(401, 404, 500) }
}

export const fileSchema = {
  summary: 'Download a file of a job',
  tags: ['jobs'],
  security,
  params: { type: 'object', required: ['jobId', 'fileId'], properties: { jobId: str(), fileId: str() } },
  response: {
    200: { description: 'The file, with its MIME type and a Content-Disposition naming it.', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
    ...failures(401, 404, 410, 500)
  }
}
