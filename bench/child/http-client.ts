/**
 * Worker thread: posts the ledger to the service (/v1/analyze or /v1/process) once
 * per 'post' message, as a multipart form whose file part streams from disk
 * (openAsBlob), never a copy.
 */
import { openAsBlob } from 'node:fs'
import { basename } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'

export interface ClientSetup {
  url: string
  apiKey: string
  file: string
  /** Form fields sent before the file (codigo_dominio for /v1/process). */
  fields?: Record<string, string>
}

export type ClientReply = { ok: true, totalRows: number } | { ok: false, error: string }

const setup = workerData as ClientSetup

async function postOnce (): Promise<ClientReply> {
  const form = new FormData()
  for (const [name, value] of Object.entries(setup.fields ?? {})) form.append(name, value)
  form.append('file', await openAsBlob(setup.file), basename(setup.file))
  const response = await fetch(setup.url, { method: 'POST', headers: { 'X-API-Key': setup.apiKey }, body: form })
  const body = await response.text()
  if (response.status !== 200) return { ok: false, error: `HTTP ${response.status}: ${body.slice(0, 300)}` }
  return { ok: true, totalRows: (JSON.parse(body) as { total_rows: number }).total_rows }
}

parentPort?.on('message', () => {
  postOnce().then(
    (reply) => parentPort?.postMessage(reply),
    (err: unknown) => parentPort?.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) } satisfies ClientReply)
  )
})
