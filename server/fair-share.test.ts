/**
 * One service's work never starves another's (issue 22, item 8), on the services as
 * `razao serve sign extract` starts them (server/serve.ts): uploads that stop sending do
 * not keep real requests out, and slow PDFs filling the extraction's pool do not hold a
 * signature. That a document's deadline counts its work, not its wait in the queue, is in
 * server/extract/lanes.test.ts (our scheduling, checked on one Node line).
 */
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeRectanglesPdf, makeTextPdf } from '../fixtures/pdf/samples.js'
import { generateExtrato } from '../plugins/pgdas-extrato/fixtures/generate.js'
import { loadConfig } from './config.js'
import { poolTurns } from './extract/run.js'
import { startServices } from './serve.js'
import type { RunningServices } from './serve.js'

const EXTRACT_KEY = 'extract-fair-key-0123456789'
const SIGN_KEY = 'sign-fair-key-0123456789abcdefghijkl'

let dir: string
let running: RunningServices
let signUrl: string
let extractUrl: string
let onePage: Uint8Array
let extrato: Uint8Array

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-fair-share-'))
  const env = {
    RAZAO_DATA_DIR: join(dir, 'data'),
    RAZAO_TMP_DIR: join(dir, 'uploads'),
    LOG_LEVEL: 'silent',
    // One thread per service: the slow PDFs below fill the extraction's pool at once.
    RAZAO_POOL_SIZE: '1',
    SIGN_PORT: '0',
    SIGN_API_KEY: SIGN_KEY,
    SIGN_VISUAL_MODE: 'NONE',
    SIGN_MAX_IN_FLIGHT: '4',
    EXTRACT_PORT: '0',
    EXTRACT_API_KEY: EXTRACT_KEY,
    EXTRACT_MAX_IN_FLIGHT: '4',
    EXTRACT_DOCUMENT_TIMEOUT_MS: '120000',
    EXTRACT_BODY_TIMEOUT_MS: '60000'
  }
  running = await startServices(['sign', 'extract'], loadConfig(env), () => undefined, env)
  signUrl = running.apps.find((a) => a.name === 'sign')!.url
  extractUrl = running.apps.find((a) => a.name === 'extract')!.url
  onePage = await makeTextPdf(1)
  extrato = (await generateExtrato({ seed: 81 })).pdf
}, 120_000)

afterAll(async () => {
  await running?.close()
  await rm(dir, { recursive: true, force: true })
})

async function sign (): Promise<{ status: number, body: Record<string, any> }> {
  const res = await fetch(`${signUrl}/api/v1/sign`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': SIGN_KEY }, body: JSON.stringify({ pdfBase64: Buffer.from(onePage).toString('base64') }) })
  return { status: res.status, body: await res.json() as Record<string, any> }
}

async function extract (pdf: Uint8Array): Promise<{ status: number, body: Record<string, any> }> {
  const form = new FormData()
  form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'doc.pdf')
  const res = await fetch(`${extractUrl}/api/v1/pdf/extract`, { method: 'POST', body: form, headers: { 'x-api-key': EXTRACT_KEY } })
  return { status: res.status, body: await res.json() as Record<string, any> }
}

/** A client that sends its headers and the start of its body, then nothing. */
async function stalledUpload (url: string, head: string, bodyStart: string): Promise<{ socket: Socket, answer: Promise<string> }> {
  const { port } = new URL(url)
  const socket = connect(Number(port), '127.0.0.1')
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  let text = ''
  socket.on('data', (d: Buffer) => { text += d.toString() })
  const answer = new Promise<string>((resolve) => socket.once('close', () => { resolve(text) }))
  socket.write(`${head}\r\n\r\n${bodyStart}`)
  return { socket, answer }
}

const stalledExtract = async (): Promise<{ socket: Socket, answer: Promise<string> }> => await stalledUpload(extractUrl,
  `POST /api/v1/pdf/extract HTTP/1.1\r\nHost: x\r\nX-API-Key: ${EXTRACT_KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000`,
  '--b\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n')

const stalledSign = async (): Promise<{ socket: Socket, answer: Promise<string> }> => await stalledUpload(signUrl,
  `POST /api/v1/sign HTTP/1.1\r\nHost: x\r\nX-API-Key: ${SIGN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100000`,
  '{"pdfBase64":"JVBERi0')

describe('uploads that stop sending', () => {
  it('do not keep real extract and sign requests out: four stalled uploads per service hold no place', async () => {
    // Warm both pools first, so that what is measured below is the wait, not a thread's start.
    expect((await sign()).status).toBe(200)
    expect((await extract(extrato)).status).toBe(200)
    // The requests each service has read, counted: a request enters its gate as it is read.
    const servers = running.apps.map((a) => a.app.server)
    const seen = servers.map(() => 0)
    const counters = servers.map((_server, i) => () => { seen[i]!++ })
    servers.forEach((server, i) => server.on('request', counters[i]!))
    const stalled = [...await Promise.all([1, 2, 3, 4].map(stalledExtract)), ...await Promise.all([1, 2, 3, 4].map(stalledSign))]
    let closedEarly = false
    for (const s of stalled) s.socket.once('close', () => { closedEarly = true })
    // Four stalled uploads fill each gate (SIGN_/EXTRACT_MAX_IN_FLIGHT=4); the real requests
    // come once both services have read all four, not after a fixed pause.
    await expect.poll(() => seen).toEqual([4, 4])
    servers.forEach((server, i) => server.off('request', counters[i]!))
    const [signed, extracted] = await Promise.all([sign(), extract(extrato)])
    expect(signed.status).toBe(200)
    expect(signed.body.success).toBe(true)
    expect(extracted.status).toBe(200)
    expect(extracted.body.success).toBe(true)
    // Answered while every stalled upload is still open (their body timeout is a minute away).
    expect(closedEarly).toBe(false)
    for (const s of stalled) s.socket.destroy()
  })
})

describe('under serve, each service has its own pool', () => {
  it('serves a signature while slow PDFs fill the extraction\'s pool and its queue', async () => {
    const slow = await makeRectanglesPdf(2)
    const extractPool = running.pools.get('extract')!
    expect(running.pools.get('sign')).not.toBe(extractPool)
    expect((await sign()).status).toBe(200)
    const extractions = [1, 2, 3].map(async () => await extract(slow))
    // Wait until the extraction's one thread is busy and two documents queue behind it.
    const queued = performance.now()
    while (poolTurns(extractPool).waiting < 2) {
      expect(performance.now() - queued, 'the slow PDFs never filled the pool').toBeLessThan(30_000)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const signed = await sign()
    expect(signed.status).toBe(200)
    // The signature is done while the extraction's queue still holds slow PDFs: it waited for none of them.
    expect(poolTurns(extractPool).waiting).toBeGreaterThan(0)
    for (const res of await Promise.all(extractions)) expect(res.status).toBe(200)
  }, 240_000)
})
