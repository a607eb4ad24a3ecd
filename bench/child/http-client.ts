/**
 * The benchmark's HTTP client, a process of its own (a real client is another
 * machine): posts the ledger to the service (/v1/analyze or /v1/process) once per
 * 'post' message, as a multipart form whose file part streams from disk
 * (openAsBlob), never a copy. Being outside the service's process, its buffers do
 * not count in the service's peak RSS. Start it with `startClient`.
 */
import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { openAsBlob } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface ClientSetup {
  url: string
  apiKey: string
  file: string
  /** Form fields sent before the file (codigo_dominio for /v1/process). */
  fields?: Record<string, string>
}

export type ClientReply = { ok: true, totalRows: number } | { ok: false, error: string }

export interface Client {
  /** One upload, answered with the service's total_rows. */
  post: () => Promise<number>
  close: () => Promise<void>
}

/** Forks this module as the client process for `setup`. */
export function startClient (setup: ClientSetup): Client {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [JSON.stringify(setup)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  return {
    post: () => new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`the HTTP client exited (${code})`))
      child.once('exit', onExit)
      child.once('message', (reply: ClientReply) => {
        child.off('exit', onExit)
        if (reply.ok) resolve(reply.totalRows)
        else reject(new Error(reply.error))
      })
      child.send('post')
    }),
    close: async () => {
      if (child.exitCode !== null) return
      const gone = new Promise((resolve) => child.once('exit', resolve))
      child.kill()
      await gone
    }
  }
}

async function postOnce (setup: ClientSetup): Promise<ClientReply> {
  const form = new FormData()
  for (const [name, value] of Object.entries(setup.fields ?? {})) form.append(name, value)
  form.append('file', await openAsBlob(setup.file), basename(setup.file))
  const response = await fetch(setup.url, { method: 'POST', headers: { 'X-API-Key': setup.apiKey }, body: form })
  const body = await response.text()
  if (response.status !== 200) return { ok: false, error: `HTTP ${response.status}: ${body.slice(0, 300)}` }
  return { ok: true, totalRows: (JSON.parse(body) as { total_rows: number }).total_rows }
}

// Run as the forked client: answer each 'post' with one upload.
if (process.send !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) {
  const setup = JSON.parse(process.argv[2] ?? '') as ClientSetup
  // The benchmark process is gone (or done with us): so is the client.
  process.on('disconnect', () => process.exit(0))
  process.on('message', () => {
    postOnce(setup).then(
      (reply) => process.send?.(reply),
      (err: unknown) => process.send?.({ ok: false, error: err instanceof Error ? err.message : String(err) } satisfies ClientReply)
    )
  })
}
