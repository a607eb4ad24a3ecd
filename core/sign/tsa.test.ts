/**
 * The RFC 3161 client's checks on a real token from the loopback authority (`openssl ts
 * -reply`): a token is embedded only when it answers our digest and nonce and its own
 * signature holds; anything else is TSA_FAILED, which the service answers as TIMESTAMP_ERROR.
 */
import { createHash } from 'node:crypto'
import { createServer, request } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestPki } from '../../fixtures/pdf/pki.js'
import { startLocalTsa } from '../../fixtures/pdf/tsa-server.js'
import type { LocalTsa } from '../../fixtures/pdf/tsa-server.js'
import { toolsAvailable } from '../../fixtures/pdf/verify.js'
import { checkTimestampResponse, requestTimestamp, timestampRequest } from './tsa.js'

let dir: string
let tsa: LocalTsa
const digest = createHash('sha256').update('valor da assinatura').digest()
const nonce = 0x1234_5678_9abc_def0n

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-tsa-'))
  const pki = await createTestPki(dir)
  tsa = await startLocalTsa({ dir, certPath: pki.tsa.certPath, keyPath: pki.tsa.keyPath, rootPemPath: pki.tsa.rootPemPath })
})
afterAll(async () => {
  await tsa.close()
  await rm(dir, { recursive: true, force: true })
})

async function reply (): Promise<Buffer> {
  const res = await fetch(tsa.url, { method: 'POST', headers: { 'content-type': 'application/timestamp-query' }, body: timestampRequest(digest, nonce) })
  return Buffer.from(await res.arrayBuffer())
}

describe.skipIf(!toolsAvailable('openssl'))('checkTimestampResponse', () => {
  it('accepts the authority\'s token for our digest and nonce and reads its genTime', async () => {
    const result = checkTimestampResponse(await reply(), digest, nonce)
    expect(Math.abs(result.genTime.getTime() - Date.now())).toBeLessThan(60_000)
    expect(result.token.length).toBeGreaterThan(500)
  })

  it('refuses the same token for another digest or another nonce', async () => {
    const body = await reply()
    expect(() => checkTimestampResponse(body, createHash('sha256').update('outro').digest(), nonce)).toThrow(expect.objectContaining({ code: 'TSA_FAILED', message: expect.stringMatching(/another digest/) }))
    expect(() => checkTimestampResponse(body, digest, nonce + 1n)).toThrow(expect.objectContaining({ code: 'TSA_FAILED', message: expect.stringMatching(/nonce/) }))
  })

  it('refuses a token whose signature or content was altered', async () => {
    const body = await reply()
    const signatureAltered = Buffer.from(body)
    signatureAltered[signatureAltered.length - 10]! ^= 0xff
    expect(() => checkTimestampResponse(signatureAltered, digest, nonce)).toThrow(expect.objectContaining({ code: 'TSA_FAILED' }))
    // genTime's year, inside TSTInfo: the message digest no longer matches.
    const at = body.indexOf(Buffer.from(String(new Date().getUTCFullYear()), 'ascii'))
    const contentAltered = Buffer.from(body)
    contentAltered[at + 3] = contentAltered[at + 3] === 0x39 ? 0x38 : contentAltered[at + 3]! + 1
    expect(() => checkTimestampResponse(contentAltered, digest, nonce)).toThrow(expect.objectContaining({ code: 'TSA_FAILED', message: expect.stringMatching(/message digest/) }))
  })
})

describe.skipIf(!toolsAvailable('openssl'))('requestTimestamp on a kept-alive connection', () => {
  it('sends the query once more on a new connection when its connection closed under it before any answer', async () => {
    // In front of the authority: the first request finds its connection closed under it, as a
    // kept-alive connection the authority's idle timeout closes just as the client reuses it.
    let dropped = 0
    const relay = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (dropped === 0) { dropped++; req.socket.destroy(); return }
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const upstream = request(tsa.url, { method: 'POST', headers: { 'content-type': 'application/timestamp-query' } }, (answer) => {
          const parts: Buffer[] = []
          answer.on('data', (c: Buffer) => parts.push(c))
          answer.on('end', () => res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/timestamp-reply' }).end(Buffer.concat(parts)))
        })
        upstream.end(Buffer.concat(chunks))
      })
    })
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(relay.address() as { port: number }).port}/tsa`
    try {
      const result = await requestTimestamp(digest, { url, timeoutMs: 10_000 })
      expect(dropped).toBe(1)
      expect(result.token.length).toBeGreaterThan(500)
    } finally {
      relay.closeAllConnections()
      await new Promise<void>((resolve) => relay.close(() => resolve()))
    }
  })
})
