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
  409: 'The automation is disabled, or (DELETE of a job) the job already ended.',
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
const automationDetail = record({
  ...(automation.properties as Record<string, JsonSchema>),
  inputSchema: orNull(openObject('The JSON Schema (draft-07) the package declares for its input: a run whose input breaks it is refused with 400 naming the field. Null: any object.'))
})

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
  status: { type: 'string', enum: ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT'], description: 'FAILED also when the package\'s own result says success: false (error.code AGENT_REPORTED_FAILURE) and when the job was cancelled (AGENT_CANCELLED).' },
  createdAt: str(),
  startedAt: orNull(str()),
  finishedAt: orNull(str()),
  input: openObject('The request\'s input, every senha or password field masked.'),
  result: orNull(record({
    success: bool(),
    status: { type: 'string', enum: ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'FAILED_TO_START'], description: 'RUNNING: the job runs, and result is the last intermediate result the package printed.' },
    exitCode: orNull(int()),
    signal: orNull(str()),
    durationMs: int(),
    result: orNull(openObject('The package\'s last AGENT_RESULT_JSON object (while the job runs: its result so far).'))
  })),
  files: list(file),
  error: orNull(record({ code: str('AGENT_FAILED_TO_START, AGENT_TIMED_OUT, AGENT_EXIT_NON_ZERO, AGENT_NO_RESULT, AGENT_RESULT_INVALID, AGENT_SHUTDOWN, AGENT_REPORTED_FAILURE, AGENT_CANCELLED.'), message: str() }))
})

const param = (name: string, description: string, example: string): JsonSchema =>
  ({ type: 'object', required: [name], properties: { [name]: { ...str(description), examples: [example] } } })

// Examples for /docs' "Try it out": the package we ship, and ids in the shape the agent makes
// them (a job's and a file's ids are random UUIDs: GET /api/v1/jobs lists the real ones).
const EXAMPLE_AUTOMATION = 'dec-issqn-poa'
const EXAMPLE_REQUEST_ID = 'dec-2024-03-4521'
const EXAMPLE_JOB_ID = '3f9a7c2e-1b4d-4e8a-9c6f-2d5b8a1e7f40'
const EXAMPLE_FILE_ID = 'a1c4e7b2-5d8f-4a3c-b6e9-0f2d4c6a8e13'
/** The DEC package's input (its README): one company, one month; the portal password is the company's own. */
const EXAMPLE_DEC_INPUT = {
  empresas: [{ razaoSocial: 'Padaria Pão Quente Ltda', cnpj: '11222333000181', inscricaoMunicipal: '1234567', senha: 'senha-do-portal', competenciaAno: 2024, competenciaMes: 3 }],
  headless: true
}

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
  summary: 'The automation packages found under AUTOMATIONS_ROOT',
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
  params: param('id', 'The package id.', EXAMPLE_AUTOMATION),
  response: { 200: { ...automationDetail, description: 'The package.' }, ...failures(401, 404, 500) }
}

export const runSchema = {
  summary: 'Queue a job of an automation',
  description: 'The same requestId answers the same job again (idempotent).',
  tags: ['jobs'],
  security,
  params: param('id', 'The package id.', EXAMPLE_AUTOMATION),
  jsonBody: {
    type: 'object',
    properties: {
      requestId: { ...str('At most 200 characters; absent: the agent makes one. Sending it again answers the same job.'), examples: [EXAMPLE_REQUEST_ID] },
      input: { ...openObject('Handed to the package; absent: {}. The example is the DEC package\'s (plugins/automations/dec-issqn-poa/README.md).'), examples: [EXAMPLE_DEC_INPUT] }
    }
  },
  response: { 202: { ...job, description: 'The job, queued (or the earlier job of this requestId).' }, ...failures(400, 401, 404, 409, 413, 415, 429, 500) }
}

export const jobsSchema = {
  summary: 'The most recent jobs, newest first',
  tags: ['jobs'],
  security,
  querystring: { type: 'object', properties: { limit: { description: 'A whole number from 1 to 200 (default 50).', examples: ['50'] } } },
  response: { 200: record({ count: int(), items: list(job) }, 'The jobs.'), ...failures(400, 401, 500) }
}

export const jobByRequestSchema = {
  summary: 'The job of a requestId',
  tags: ['jobs'],
  security,
  params: param('requestId', 'The requestId the job was queued with.', EXAMPLE_REQUEST_ID),
  response: { 200: { ...job, description: 'The job.' }, ...failures(401, 404, 500) }
}

export const jobSchema = {
  summary: 'One job',
  tags: ['jobs'],
  security,
  params: param('jobId', 'The job id.', EXAMPLE_JOB_ID),
  response: { 200: { ...job, description: 'The job.' }, ...failures(401, 404, 500) }
}

export const cancelSchema = {
  summary: 'Cancel a job',
  description: 'A queued job never runs; a running job has its whole process tree stopped (SIGTERM, then SIGKILL after the grace period), and the answer comes once it has ended. Either way the job is FAILED with error.code AGENT_CANCELLED, keeping the result and files it had. Repeating the call answers the same.',
  tags: ['jobs'],
  security,
  params: param('jobId', 'The job id.', EXAMPLE_JOB_ID),
  response: { 200: { ...job, description: 'The job, cancelled.' }, ...failures(401, 404, 409, 500) }
}

export const jobLogSchema = {
  summary: 'The output of a job (its log)',
  description: 'What the package printed on stdout and stderr, while it runs or after (kept FILE_RETENTION_DAYS, at most 1 MiB each). By default both, each under a "==> stdout <==" or "==> stderr <==" line.',
  tags: ['jobs'],
  security,
  params: param('jobId', 'The job id.', EXAMPLE_JOB_ID),
  querystring: { type: 'object', properties: { stream: { description: 'stdout, stderr or all (default).', examples: ['all'] } } },
  response: {
    200: { description: 'The log as text.', content: { 'text/plain': { schema: { type: 'string' } } } },
    ...failures(400, 401, 404, 500)
  }
}

export const jobFilesSchema = {
  summary: 'The files a job registered',
  tags: ['jobs'],
  security,
  params: param('jobId', 'The job id.', EXAMPLE_JOB_ID),
  response: { 200: record({ jobId: str(), count: int(), items: list(file) }, 'The files.'), ...failures(401, 404, 500) }
}

export const fileSchema = {
  summary: 'Download a file of a job',
  tags: ['jobs'],
  security,
  params: { type: 'object', required: ['jobId', 'fileId'], properties: { jobId: { ...str('The job id.'), examples: [EXAMPLE_JOB_ID] }, fileId: { ...str('The file id, as the job\'s files list it.'), examples: [EXAMPLE_FILE_ID] } } },
  response: {
    200: { description: 'The file, with its MIME type and a Content-Disposition naming it.', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
    ...failures(401, 404, 410, 500)
  }
}
