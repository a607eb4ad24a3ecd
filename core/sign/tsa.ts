/**
 * RFC 3161 client. Only the SHA-256 of the signature value leaves the service (never
 * the document). Before a token is embedded we check what RFC 3161 §2.4.2 asks of a
 * requester: status granted, the TSTInfo imprint and nonce equal to ours, and the
 * token's own CMS signature (message digest over TSTInfo, RSA signature over the signed
 * attributes with the certificate it names, which must carry the timeStamping EKU).
 */
import { X509Certificate, createHash, randomBytes, verify } from 'node:crypto'
import { SignError } from './errors.js'
import { child, children, decodeOid, integer, octets, oid, readNode, seq, tlv, TAG } from './der.js'
import type { DerNode } from './der.js'

const OID_TST_INFO = '1.2.840.113549.1.9.16.1.4'
const OID_MESSAGE_DIGEST = '1.2.840.113549.1.9.4'
const OID_KP_TIMESTAMPING = '1.3.6.1.5.5.7.3.8'
const DIGESTS: Record<string, string> = {
  '2.16.840.1.101.3.4.2.1': 'sha256', '2.16.840.1.101.3.4.2.2': 'sha384', '2.16.840.1.101.3.4.2.3': 'sha512', '1.3.14.3.2.26': 'sha1'
}

export interface TsaOptions {
  url: string
  timeoutMs: number
}

export interface TimestampResult {
  token: Buffer
  genTime: Date
}

/** DER TimeStampReq for a SHA-256 imprint, with a positive 64-bit nonce and certReq TRUE. */
export function timestampRequest (digest: Buffer, nonce: bigint): Buffer {
  return seq(integer(1), seq(seq(oid('2.16.840.1.101.3.4.2.1')), octets(digest)), integer(nonce), tlv(TAG.BOOLEAN, Buffer.from([0xff])))
}

function fail (message: string, cause?: unknown): never {
  throw new SignError('TSA_FAILED', message, null, cause === undefined ? undefined : { cause })
}

function intValue (node: DerNode): bigint {
  return BigInt(`0x${node.content.toString('hex') || '0'}`)
}

/** Asks the authority for a token over `digest` and checks it; any failure is TSA_FAILED. */
export async function requestTimestamp (digest: Buffer, options: TsaOptions): Promise<TimestampResult> {
  const nonceBytes = randomBytes(8)
  nonceBytes[0] = nonceBytes[0]! & 0x7f
  const nonce = BigInt(`0x${nonceBytes.toString('hex')}`)
  const url = new URL(options.url)
  const headers: Record<string, string> = { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' }
  if (url.username !== '') {
    // Accredited authorities (ACT) often want HTTP basic credentials; fetch refuses them in the URL.
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
    url.username = ''
    url.password = ''
  }
  let body: Buffer
  try {
    const signal = AbortSignal.timeout(options.timeoutMs)
    const send = async (): Promise<Response> => await fetch(url, { method: 'POST', headers, body: timestampRequest(digest, nonce), signal })
    let res: Response
    try {
      res = await send()
    } catch (err) {
      // A kept-alive connection the authority closed just as it was reused: the query never
      // reached it. Sent once more, on a new connection, within the same deadline.
      if (!staleConnection(err)) throw err
      res = await send()
    }
    if (!res.ok) {
      await res.body?.cancel()
      fail(`The timestamp authority answered HTTP ${res.status}.`)
    }
    body = Buffer.from(await res.arrayBuffer())
  } catch (err) {
    if (err instanceof SignError) throw err
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
    fail(timedOut ? `The timestamp authority did not answer within ${options.timeoutMs} ms.` : 'The timestamp authority could not be reached.', err)
  }
  return checkTimestampResponse(body, digest, nonce)
}

/** fetch's failure when the connection was closed under the request, before any answer. */
function staleConnection (err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code
  return err instanceof TypeError && (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE')
}

/** Parses a TimeStampResp and checks it against what we asked for. */
export function checkTimestampResponse (body: Buffer, digest: Buffer, nonce: bigint): TimestampResult {
  try {
    const resp = readNode(body)
    const [statusInfo, token] = children(resp)
    const status = statusInfo === undefined ? -1n : intValue(child(statusInfo, 0))
    if (status !== 0n && status !== 1n) fail(`The timestamp authority refused the request (PKIStatus ${status}).`)
    if (token === undefined) fail('The timestamp authority granted the request but sent no token.')
    const signedData = child(child(token, 1), 0)
    const sd = children(signedData)
    const encap = sd[2]
    if (encap === undefined || decodeOid(child(encap, 0).content) !== OID_TST_INFO) fail('The timestamp token does not hold a TSTInfo.')
    const tstInfoDer = child(child(encap, 1), 0).content
    const tst = children(readNode(tstInfoDer))
    const imprint = tst[2]
    if (imprint === undefined || !child(imprint, 1).content.equals(digest)) fail('The timestamp token is over another digest than the one sent.')
    const genTimeNode = tst[4]
    if (genTimeNode === undefined || genTimeNode.tag !== TAG.GENERALIZED_TIME) fail('The timestamp token has no genTime.')
    const nonceNode = tst.slice(5).find((n) => n.tag === TAG.INTEGER)
    if (nonceNode === undefined || intValue(nonceNode) !== nonce) fail('The timestamp token does not repeat our nonce.')
    const genTime = parseGeneralizedTime(genTimeNode.content.toString('ascii'))
    if (Number.isNaN(genTime.getTime())) fail('The timestamp token\'s genTime is not a UTC GeneralizedTime (RFC 3161 §2.4.2).')
    verifyTokenSignature(sd, tstInfoDer)
    return { token: token.bytes, genTime }
  } catch (err) {
    if (err instanceof SignError) throw err
    return fail('The timestamp authority sent a response that is not a valid RFC 3161 TimeStampResp.', err)
  }
}

function verifyTokenSignature (sd: DerNode[], tstInfoDer: Buffer): void {
  const certsNode = sd.find((n) => n.tag === 0xa0)
  const signerInfos = sd[sd.length - 1]
  if (certsNode === undefined || signerInfos === undefined) fail('The timestamp token carries no TSA certificate (certReq was set).')
  const si = children(child(signerInfos, 0))
  const [, sid, digestAlg, signedAttrs, , signature] = si
  if (sid === undefined || digestAlg === undefined || signedAttrs?.tag !== 0xa0 || signature === undefined) fail('The timestamp token has no signed attributes.')
  const hash = DIGESTS[decodeOid(child(digestAlg, 0).content)]
  if (hash === undefined) fail('The timestamp token uses an unknown digest algorithm.')
  const mdAttr = children(signedAttrs).find((a) => decodeOid(child(a, 0).content) === OID_MESSAGE_DIGEST)
  if (mdAttr === undefined || !child(child(mdAttr, 1), 0).content.equals(createHash(hash).update(tstInfoDer).digest())) {
    fail('The timestamp token\'s message digest does not match its TSTInfo.')
  }
  const tsaCert = children(certsNode).map((c) => new X509Certificate(c.bytes)).find((c) => sid.tag === TAG.SEQUENCE && matchesIssuerSerial(c, sid))
  if (tsaCert === undefined) fail('The timestamp token does not include the certificate that signed it.')
  if (!hasTimestampingEku(tsaCert)) fail('The timestamp authority certificate lacks the timeStamping extended key usage.')
  const signed = Buffer.concat([Buffer.from([0x31]), signedAttrs.bytes.subarray(1)])
  if (!verify(hash, signed, tsaCert.publicKey, signature.content)) fail('The timestamp token\'s signature does not verify.')
}

function matchesIssuerSerial (cert: X509Certificate, sid: DerNode): boolean {
  const serial = child(sid, 1).content.toString('hex').replace(/^0+/, '').toUpperCase()
  return cert.serialNumber.replace(/^0+/, '').toUpperCase() === serial
}

function hasTimestampingEku (cert: X509Certificate): boolean {
  return (cert.keyUsage ?? []).includes(OID_KP_TIMESTAMPING)
}

function parseGeneralizedTime (text: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\.\d+)?Z$/.exec(text)
  if (m === null) return new Date(Number.NaN)
  return new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[7] ?? ''}Z`)
}

/** The certificates a TimeStampToken carries (the authority's, and its chain when it sends one), DER. */
export function tokenCertificates (token: Buffer): Buffer[] {
  const signedData = child(child(readNode(token), 1), 0)
  const certs = children(signedData).find((n) => n.tag === 0xa0)
  return certs === undefined ? [] : children(certs).map((c) => Buffer.from(c.bytes))
}
