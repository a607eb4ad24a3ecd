/**
 * Idle connections to one port under `razao serve all` (issue 32, item 3): all five services
 * in this process, as serve.ts starts them, with a small cap (RAZAO_MAX_CONNECTIONS) and a
 * short head timeout (RAZAO_HEADERS_TIMEOUT_MS). Sockets that connect and send nothing fill
 * the import service's cap; the other four still answer their health checks, the import
 * service refuses further connections at once, and the silent sockets are answered 408 and
 * closed once the head timeout has passed, after which the import service answers again.
 * Everything is awaited as events (connections counted by the server, close events), never
 * as pauses.
 */
import { get } from 'node:http'
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../fixtures/db/test-database.js'
import type { TestDatabase } from '../fixtures/db/test-database.js'
import { loadConfig } from './config.js'
import { SERVICES, startServices } from './serve.js'
import type { RunningServices, ServiceName } from './serve.js'

const CAP = 8
const HEADERS_TIMEOUT_MS = 1000
const EXTRACT_KEY = 'extract-idle-key-0123456789'

let db: TestDatabase
let dir: string
let running: RunningServices
const startLines: string[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-serve-hostile-'))
  db = await freshDatabase()
  const data = join(dir, 'data')
  const env = {
    DATABASE_URL: db.url,
    RAZAO_DATA_DIR: data,
    RAZAO_TMP_DIR: join(dir, 'uploads'),
    LOG_LEVEL: 'silent',
    RAZAO_POOL_SIZE: '1',
    RAZAO_MAX_CONNECTIONS: String(CAP),
    RAZAO_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    IMPORT_PORT: '0',
    SIGN_PORT: '0',
    SIGN_VISUAL_MODE: 'NONE',
    EXTRACT_PORT: '0',
    EXTRACT_API_KEY: EXTRACT_KEY,
    GATEWAY_PORT: '0',
    // The agent's names, and its folders in the test's own.
    PORT: '0',
    RUNTIME_DIR: join(data, 'runtime'),
    LOG_DIR: join(data, 'logs'),
    FILE_STORAGE_ROOT: join(data, 'files')
  }
  running = await startServices(SERVICES, loadConfig(env, dir), (line) => { startLines.push(line) }, env)
}, 120_000)

afterAll(async () => {
  await running?.close()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

const urlOf = (name: ServiceName): URL => new URL(running.apps.find((a) => a.name === name)!.url)
const HEALTH: Record<ServiceName, string> = { import: '/health', sign: '/api/v1/health', extract: '/api/v1/health', gateway: '/health', agent: '/health' }

/** A health check on a connection of its own, as a balancer makes it: the status, or the connection's error. */
async function health (name: ServiceName): Promise<number | string> {
  return await new Promise((resolve) => {
    const req = get(new URL(HEALTH[name], urlOf(name)), { agent: false }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode!))
    })
    req.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
  })
}

interface Client { socket: Socket, received: () => string, connectedAt: number, closed: Promise<number> }

/** A TCP connection to `name`'s port; `closed` resolves with its life in ms when the other side ends it. */
async function open (name: ServiceName): Promise<Client> {
  const socket = connect(Number(urlOf(name).port), '127.0.0.1')
  let text = ''
  socket.on('data', (d: Buffer) => { text += d.toString('latin1') })
  socket.on('error', () => undefined)
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject) })
  const connectedAt = performance.now()
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - connectedAt)))
  return { socket, received: () => text, connectedAt, closed }
}

describe('idle connections filling one service under serve all', () => {
  it('says at start what the open-file limit is and what each service takes', () => {
    expect(startLines.join('\n')).toMatch(new RegExp(`Open files: \\d+ .*each service takes at most ${CAP} connections \\(RAZAO_MAX_CONNECTIONS\\) and closes one that sends no request within 1 s`))
  })

  it('leave the other four services answering, refuse one more connection at once, and are closed with 408 after the head timeout', async () => {
    const server = running.apps.find((a) => a.name === 'import')!.app.server
    let accepted = 0
    let dropped = 0
    server.on('connection', () => { accepted++ })
    server.on('drop', () => { dropped++ })
    const idle = await Promise.all(Array.from({ length: CAP }, async () => await open('import')))
    // A request whose head is complete but whose body is still on its way (to another service)
    // is not cut by the head timeout, however long the body takes.
    const upload = await open('extract')
    const body = '--b\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\nnot a pdf\r\n--b--\r\n'
    upload.socket.write(`POST /api/v1/pdf/extract HTTP/1.1\r\nHost: x\r\nX-API-Key: ${EXTRACT_KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 20)}`)
    await expect.poll(() => accepted).toBe(CAP)

    // The cap is reached: the next connection is closed as soon as it is accepted, unanswered.
    const refused = await open('import')
    await refused.closed
    expect(refused.received()).toBe('')
    expect(dropped).toBe(1)
    expect(await health('import')).not.toBe(200)
    expect(dropped).toBe(2)

    // The other services of the process answer, each on a new connection.
    for (const name of ['sign', 'extract', 'gateway', 'agent'] as const) expect(await health(name), name).toBe(200)
    expect(idle.every((c) => !c.socket.destroyed)).toBe(true)

    // Each silent socket is answered 408 and closed, not before the head timeout. (Closed
    // 1.0-1.3 s after connecting here; the suite's 60 s test timeout is the hang catcher.)
    const lives = await Promise.all(idle.map(async (c) => await c.closed))
    for (const life of lives) expect(life).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 1)
    for (const c of idle) expect(c.received()).toMatch(/^HTTP\/1\.1 408 /)
    expect(upload.socket.destroyed).toBe(false)
    upload.socket.write(body.slice(20))
    await upload.closed
    expect(upload.received()).toMatch(/^HTTP\/1\.1 (?!408)\d{3} /)

    // Places free again: the service answers.
    expect(await health('import')).toBe(200)
    expect(dropped).toBe(2)
  })
})
