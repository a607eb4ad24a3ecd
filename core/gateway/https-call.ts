/**
 * One HTTPS exchange with a tax authority over a certificate's keep-alive agent, with one
 * deadline for the whole of it (connect, handshake, request, the last byte of the answer).
 * Every transport failure becomes a 503 GatewayError whose message says what happened;
 * the request is never sent twice (a repeated NF-e query can count against the company:
 * NT 2014.002, see docs/gateway-queries.md).
 */
import { request as httpsRequest } from 'node:https'
import type { Agent } from 'node:https'
import type { TLSSocket } from 'node:tls'
import { GatewayError } from './errors.js'

export interface HttpsCall {
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
  agent: Agent
  timeoutMs: number
  /** Answers larger than this are abandoned (a 50-document NF-e batch is a few MB at most). */
  maxBytes?: number
  /** Short name of the service in messages: "NF-e distribution", "ADN". */
  service: string
}

export interface HttpsAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  /** True when the answer came over a connection an earlier call opened (no new handshake). */
  reusedConnection: boolean
}

const DEFAULT_MAX_BYTES = 32 * 1024 * 1024

export function callHttps (call: HttpsCall): Promise<HttpsAnswer> {
  const maxBytes = call.maxBytes ?? DEFAULT_MAX_BYTES
  return new Promise<HttpsAnswer>((resolve, reject) => {
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
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > maxBytes) {
          fail(unavailable(`${call.service} sent an answer larger than ${Math.round(maxBytes / 1048576)} MB; it was abandoned.`))
          return
        }
        chunks.push(chunk)
      })
      res.on('aborted', () => fail(unavailable(`${call.service} dropped the connection in the middle of its answer.`)))
      res.on('error', () => fail(unavailable(`${call.service} dropped the connection in the middle of its answer.`)))
      res.on('end', () => {
        if (settled) return
        if (!res.complete) {
          fail(unavailable(`${call.service} dropped the connection in the middle of its answer.`))
          return
        }
        settled = true
        clearTimeout(timer)
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), reusedConnection: req.reusedSocket })
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
function transportError (call: HttpsCall, e: NodeJS.ErrnoException, handshakeDone: boolean): GatewayError {
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
