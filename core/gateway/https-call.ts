/**
 * One HTTPS exchange with a tax authority over a certificate's keep-alive agent, with one
 * deadline for the whole of it (connect, handshake, request, the last byte of the answer).
 * Every transport failure becomes a 503 GatewayError whose message says what happened;
 * the request is never sent twice (a repeated NF-e query can count against the company:
 * NT 2014.002, see docs/gateway-queries.md).
 *
 * The answer is read as it arrives (issue 32): its bytes go to the caller's reader in slices
 * of at most READ_SLICE_BYTES, with a turn of the event loop after each, so a large answer
 * never holds the process (its /health, the other queries) for longer than one slice takes,
 * however fast the bytes come. A reader that refuses the answer (a GatewayError) ends the
 * exchange at once: the rest is never downloaded.
 */
import { request as httpsRequest } from 'node:https'
import type { IncomingHttpHeaders } from 'node:http'
import type { Agent } from 'node:https'
import type { TLSSocket } from 'node:tls'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { GatewayError, isGatewayError } from './errors.js'

/** Takes an answer's body as it arrives. */
export interface AnswerReader<T> {
  /** The next bytes (at most READ_SLICE_BYTES); throws a GatewayError to abandon the answer. */
  write: (bytes: Buffer) => void
  /** The body has ended: what was read, or a GatewayError thrown. */
  end: () => T
}

/** Where the raw upstream answer goes (pino-compatible): debug level only. */
export interface GatewayLog {
  debug: (obj: Record<string, unknown>, msg: string) => void
}

export interface HttpsCall<T = string> {
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
  agent: Agent
  timeoutMs: number
  /** Answers larger than this are abandoned. */
  maxBytes?: number
  /** Short name of the service in messages: "NF-e distribution", "ADN". */
  service: string
  /** Chooses the reader once the status and headers are in; default: the whole body as UTF-8 text. */
  read?: (status: number, headers: IncomingHttpHeaders) => AnswerReader<T>
  /**
   * The raw answer's first 64 KiB, at debug level, under this upstream's name. Answers hold no
   * secret of ours: the certificate travels in the TLS layer, not in the body.
   */
  log?: { to: GatewayLog, upstream: string }
}

export interface HttpsAnswer<T = string> {
  status: number
  headers: IncomingHttpHeaders
  /** What the reader made of the body. */
  body: T
  /** True when the answer came over a connection an earlier call opened (no new handshake). */
  reusedConnection: boolean
}

/**
 * The bound of every answer. An NF-e answer holds at most 50 documents (retDistDFeInt_v1.01.xsd),
 * an ADN one at most 50 items, each a compressed document; real batches are a few MB.
 */
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024
/** The most of an answer read in one turn of the event loop: a few milliseconds of parsing at most. */
export const READ_SLICE_BYTES = 64 * 1024
/** How much of a raw answer goes to the debug log. */
const LOGGED_BYTES = 65_536

/** What has been read of an answer: its size so far and its first bytes (for the debug log). */
export interface ReadProgress { bytes: number, head: Buffer[] }

/**
 * Hands `source` to `reader` in slices of at most READ_SLICE_BYTES, letting the event loop
 * turn after each; stops when `stopped()` says so. Throws a 503 GatewayError when the bytes
 * exceed `maxBytes`, and what the reader throws.
 */
export async function readInSlices (source: AsyncIterable<Buffer> | Iterable<Buffer>, reader: Pick<AnswerReader<unknown>, 'write'>,
  o: { maxBytes: number, service: string, stopped?: () => boolean, progress?: ReadProgress }): Promise<void> {
  const progress = o.progress ?? { bytes: 0, head: [] }
  for await (const chunk of source) {
    if (o.stopped?.() === true) return
    const before = progress.bytes
    progress.bytes += chunk.length
    if (progress.bytes > o.maxBytes) throw unavailable(`${o.service} sent an answer larger than ${Math.round(o.maxBytes / 1048576)} MB; it was abandoned.`)
    if (before < LOGGED_BYTES) progress.head.push(chunk.subarray(0, LOGGED_BYTES - before))
    for (let at = 0; at < chunk.length; at += READ_SLICE_BYTES) {
      reader.write(chunk.subarray(at, at + READ_SLICE_BYTES))
      await nextTurn()
      if (o.stopped?.() === true) return
    }
  }
}

/** The whole body as UTF-8 text (what callers that only want the text use). */
function textReader (): AnswerReader<string> {
  const chunks: Buffer[] = []
  return { write: (bytes) => { chunks.push(bytes) }, end: () => Buffer.concat(chunks).toString('utf8') }
}

export function callHttps<T = string> (call: HttpsCall<T>): Promise<HttpsAnswer<T>> {
  const maxBytes = call.maxBytes ?? DEFAULT_MAX_BYTES
  const dropped = (): GatewayError => unavailable(`${call.service} dropped the connection in the middle of its answer.`)
  return new Promise<HttpsAnswer<T>>((resolve, reject) => {
    let settled = false
    const fail = (e: GatewayError): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.destroy()
      reject(e)
    }
    const body = call.body === undefined ? undefined : Buffer.from(call.body, 'utf8')
    const req = httpsRequest(call.url, {
      method: call.method,
      agent: call.agent,
      headers: { ...call.headers, ...(body === undefined ? {} : { 'content-length': String(body.length) }) }
    }, (res) => {
      const status = res.statusCode ?? 0
      const progress: ReadProgress = { bytes: 0, head: [] }
      const log = (outcome: string | undefined): void => {
        if (call.log === undefined) return
        const start = Buffer.concat(progress.head).toString('utf8')
        call.log.to.debug({
          upstream: call.log.upstream,
          status,
          contentType: res.headers['content-type'],
          reusedConnection: req.reusedSocket,
          bytes: progress.bytes,
          body: progress.bytes > LOGGED_BYTES ? `${start}…[cut]` : start,
          ...(outcome === undefined ? {} : { refused: outcome })
        }, 'raw upstream answer')
      }
      const read = async (): Promise<void> => {
        // A refusal is the reader's GatewayError; anything else it throws is a fault of the answer too.
        const asRefusal = (e: unknown): GatewayError => isGatewayError(e) ? e : unavailable(`${call.service} sent an answer that could not be read.`, e)
        let reader: AnswerReader<T>
        try {
          reader = call.read?.(status, res.headers) ?? textReader() as AnswerReader<T>
        } catch (e) {
          throw asRefusal(e)
        }
        const guarded = { write: (bytes: Buffer) => { try { reader.write(bytes) } catch (e) { throw asRefusal(e) } } }
        try {
          await readInSlices(res, guarded, { maxBytes, service: call.service, stopped: () => settled, progress })
        } catch (e) {
          throw isGatewayError(e) ? e : dropped()
        }
        if (settled) return
        if (!res.complete) throw dropped()
        let value: T
        try {
          value = reader.end()
        } catch (e) {
          throw asRefusal(e)
        }
        log(undefined)
        settled = true
        clearTimeout(timer)
        resolve({ status, headers: res.headers, body: value, reusedConnection: req.reusedSocket })
      }
      read().catch((e: GatewayError) => {
        if (settled) return
        log(e.detail)
        fail(e)
      })
    })
    const timer = setTimeout(() => {
      fail(new GatewayError(503, 'GATEWAY_UPSTREAM_TIMEOUT', `${call.service} did not answer within ${call.timeoutMs} ms; try again later.`))
    }, call.timeoutMs)
    // Whether this call's connection finished its TLS handshake: a connection closed
    // before that, once we presented the certificate, is the server refusing it.
    let handshakeDone = false
    req.on('socket', (socket) => {
      if ((socket as TLSSocket).encrypted && !(socket as TLSSocket).connecting && (socket as TLSSocket).authorized) handshakeDone = true
      else socket.once('secureConnect', () => { handshakeDone = true })
    })
    req.on('error', (e: NodeJS.ErrnoException) => fail(transportError(call, e, handshakeDone)))
    req.end(body)
  })
}

function unavailable (detail: string, cause?: unknown): GatewayError {
  return new GatewayError(503, 'GATEWAY_UPSTREAM_UNAVAILABLE', detail, { cause })
}

/** Names the failure for a person: no host internals beyond what the configuration already says. */
function transportError (call: Pick<HttpsCall<unknown>, 'url' | 'service'>, e: NodeJS.ErrnoException, handshakeDone: boolean): GatewayError {
  const code = e.code ?? ''
  const host = new URL(call.url).host
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ETIMEDOUT') {
    return unavailable(`${call.service} at ${host} cannot be reached (${code}); try again later.`, e)
  }
  if (!handshakeDone && (code === 'ECONNRESET' || code === 'EPIPE')) {
    // Our side had accepted the server's certificate (else the error would be a verification code) and sent ours.
    return new GatewayError(422, 'GATEWAY_CERTIFICATE_INCOMPATIBLE', `${call.service} at ${host} closed the connection during the TLS handshake, after the company's certificate was presented: ` +
      'it refused the certificate (not issued under a root it trusts, expired, revoked, or without client-authentication usage).', { cause: e })
  }
  if (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/i.test(e.message)) {
    return unavailable(`${call.service} at ${host} dropped the connection before answering; try again later.`, e)
  }
  if (/^ERR_SSL_.*ALERT_(BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_|HANDSHAKE_FAILURE|ACCESS_DENIED|UNSUPPORTED_CERTIFICATE|DECRYPT_ERROR)/.test(code)) {
    // An alert from the server during the handshake: it refused the certificate we presented.
    return new GatewayError(422, 'GATEWAY_CERTIFICATE_INCOMPATIBLE', `${call.service} at ${host} refused the company's certificate in the TLS handshake (${code}): check that it is an ICP-Brasil certificate, valid, with client-authentication usage.`, { cause: e })
  }
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || /certificate|alert|handshake|SSL/i.test(e.message) ||
      ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'].includes(code)) {
    return unavailable(`The TLS handshake with ${call.service} at ${host} failed (${code || 'TLS error'}): either the server's certificate is not trusted (GATEWAY_CA_FILE) or it refused the company's certificate.`, e)
  }
  return unavailable(`${call.service} at ${host} failed: ${code || e.message}; try again later.`, e)
}
