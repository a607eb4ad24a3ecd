/**
 * The benchmark's HTTP client, a process of its own (a real client is another
 * machine): posts the ledger to the service (/v1/analyze or /v1/process) once per
 * 'post' message, as a multipart form whose file part streams from disk, never a
 * copy. Being outside the service's process, its buffers do
 * not count in the service's peak RSS. Start it with `startClient`.
 */
import { fork } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface ClientSetup {
  url: string
  apiKey: string
  file: string
  /** Form fields sent before the file (codigo_dominio for /v1/process). */
  fields?: Record<string, string>
}

export type ClientReply = { ok: true, totalRows: number, cpuMs: number } | { ok: false, error: string }

export interface Client {
  /** One upload, answered with the service's total_rows. */
  post: () => Promise<number>
  /** CPU time (user + system) the client process spent on the last upload, ms. */
  lastCpuMs: () => number
  close: () => Promise<void>
}

/** Forks this module as the client process for `setup`. */
export function startClient (setup: ClientSetup): Client {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [JSON.stringify(setup)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  let cpuMs = Number.NaN
  return {
    lastCpuMs: () => cpuMs,
    post: () => new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`the HTTP client exited (${code})`))
      child.once('exit', onExit)
      child.once('message', (reply: ClientReply) => {
        child.off('exit', onExit)
        if (reply.ok) {
          cpuMs = reply.cpuMs
          resolve(reply.totalRows)
        }
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

/**
 * One upload with node:http and the file streamed from disk in 1 MiB reads, the way
 * curl sends it. undici's FormData over a Blob moved the same 28 MB in small web-stream
 * pieces and made the client, not the service, part of what the HTTP rows measured.
 */
async function postOnce (setup: ClientSetup): Promise<ClientReply> {
  const cpuBefore = process.cpuUsage()
  const boundary = `----razao-bench-${randomBytes(12).toString('hex')}`
  const fieldParts = Object.entries(setup.fields ?? {}).map(([name, value]) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('')
  const head = Buffer.from(`${fieldParts}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${basename(setup.file)}"\r\n` +
    'Content-Type: application/vnd.openxmlformats-officedocument.spreadsheetml.sheet\r\n\r\n')
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const { size } = await stat(setup.file)
  const url = new URL(setup.url)
  const { status, body } = await new Promise<{ status: number, body: string }>((resolve, reject) => {
    const request = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { 'X-API-Key': setup.apiKey, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': head.length + size + tail.length }
    }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      response.on('error', reject)
    })
    request.on('error', reject)
    request.write(head)
    const file = createReadStream(setup.file, { highWaterMark: 1 << 20 })
    file.on('error', (err) => request.destroy(err))
    file.on('end', () => request.end(tail))
    file.pipe(request, { end: false })
  })
  if (status !== 200) return { ok: false, error: `HTTP ${status}: ${body.slice(0, 300)}` }
  const cpu = process.cpuUsage(cpuBefore)
  return { ok: true, totalRows: (JSON.parse(body) as { total_rows: number }).total_rows, cpuMs: (cpu.user + cpu.system) / 1000 }
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
