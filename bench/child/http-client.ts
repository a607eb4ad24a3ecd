/**
 * The benchmark's HTTP client, a process of its own (a real client is another
 * machine): posts the ledger to the service (/v1/analyze, /v1/process, or /v1/imports then
 * following its events to the end) once per
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
  /**
   * A job route (POST /v1/imports): the answer is 202, and the upload is done only once the
   * import's event stream ends VALIDADO, as a client following it would see it.
   */
  follow?: boolean
  /** The file part's Content-Type (default XLSX). */
  contentType?: string
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
    `Content-Type: ${setup.contentType ?? 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'}\r\n\r\n`)
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
  if (setup.follow === true) {
    if (status !== 202) return { ok: false, error: `HTTP ${status}: ${body.slice(0, 300)}` }
    const accepted = JSON.parse(body) as { eventos_url: string }
    const totalRows = await followToEnd(new URL(accepted.eventos_url, url), setup.apiKey)
    const cpu = process.cpuUsage(cpuBefore)
    return { ok: true, totalRows, cpuMs: (cpu.user + cpu.system) / 1000 }
  }
  if (status !== 200) return { ok: false, error: `HTTP ${status}: ${body.slice(0, 300)}` }
  const cpu = process.cpuUsage(cpuBefore)
  return { ok: true, totalRows: (JSON.parse(body) as { total_rows: number }).total_rows, cpuMs: (cpu.user + cpu.system) / 1000 }
}

/** Reads an import's Server-Sent Events until `fim`; its rows once VALIDADO, else an error naming the status. */
async function followToEnd (events: URL, apiKey: string): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const request = httpRequest({ host: events.hostname, port: events.port, path: events.pathname, headers: { 'X-API-Key': apiKey } }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`events: HTTP ${response.statusCode}`))
        response.resume()
        return
      }
      let buffer = ''
      let last: { status?: string, resultado?: { total_rows?: number }, erro?: unknown } | undefined
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (event === 'importacao' && data !== undefined) last = JSON.parse(data) as typeof last
          if (event === 'fim') {
            response.destroy()
            const rows = last?.resultado?.total_rows
            if (last?.status === 'VALIDADO' && typeof rows === 'number') resolve(rows)
            else reject(new Error(`the import ended ${last?.status ?? 'unknown'}: ${JSON.stringify(last?.erro ?? last).slice(0, 300)}`))
          }
        }
      })
      response.on('error', reject)
      response.on('end', () => reject(new Error('the event stream ended without `fim`')))
    })
    request.on('error', reject)
    request.end()
  })
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
