/**
 * The signature service's hostile group (issue 22): PDFs that declare far more than they
 * hold, sent over HTTP to the real app and pool (the signer opens files as extraction
 * does, through core/pdf/open.ts). Each is refused quickly with 400 INVALID_PDF, the
 * service keeps signing, and the process's peak memory stays bounded.
 *
 * Issue 32: certificate files that look usable but are not, or that are swapped under a
 * running service: a key usage not meant for signing, a file without the signer's issuer,
 * a file replaced by an expired, locked or misused one.
 */
import { X509Certificate } from 'node:crypto'
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDevChain, issueCertificate, toPkcs12 } from '../../core/sign/index.js'
import type { DevChain, IssuedCertificate, KeyUsageName } from '../../core/sign/index.js'
import { DECLARED_BOMBS } from '../../fixtures/pdf/declared-bombs.js'
import { makePdf } from '../../fixtures/pdf/samples.js'
import { checkSignedPdf, findSignatures, signerInfoParts, toolsAvailable } from '../../fixtures/pdf/verify.js'
import { peakRssMiB } from '../../fixtures/peak-rss.js'
import { createPool } from '../../workers/pool.js'
import type { WorkerPool } from '../../workers/pool.js'
import { loadConfig } from '../config.js'
import { buildSignApp } from './app.js'
import { loadSignConfig } from './config.js'

const API_KEY = 'chave-sign-hostil-0123456789abcdef'
let dir: string
let pool: WorkerPool
let app: FastifyInstance
let base: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-sign-hostile-'))
  pool = createPool({ maxThreads: 1 })
  // No certificate configured: the service signs with its development chain, made in the data folder.
  const env = { RAZAO_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' }
  const shared = loadConfig(env, dir).shared
  app = await buildSignApp({ shared, config: loadSignConfig(env, shared, dir), apiKey: API_KEY, pool, logger: false })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
}, 120_000)

/** Apps of the certificate tests, each with its own certificate file. */
const certificateApps: FastifyInstance[] = []

afterAll(async () => {
  console.log(`sign service, hostile group: peak RSS ${peakRssMiB()} MiB`)
  await Promise.allSettled(certificateApps.map((a) => a.close()))
  await app?.close()
  await pool?.destroy()
  await rm(dir, { recursive: true, force: true })
})

async function sign (pdf: Uint8Array, target = base): Promise<{ status: number, body: any, ms: number }> {
  const started = performance.now()
  const res = await fetch(`${target}/api/v1/sign`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ pdfBase64: Buffer.from(pdf).toString('base64') }) })
  return { status: res.status, body: await res.json(), ms: performance.now() - started }
}

describe('signature, hostile', () => {
  it.each(DECLARED_BOMBS)('refuses %s with 400 INVALID_PDF, fast', async (_what, make) => {
    const { status, body, ms } = await sign(make())
    expect(status).toBe(400)
    expect(body).toMatchObject({ success: false, code: 'INVALID_PDF', errors: [{ code: 'INVALID_PDF', field: 'pdfBase64' }] })
    expect(body.message).toMatch(/declares more than it holds/)
    // A hang catcher only: 0.1 s at a load of 3 and 0.14 s at 15 for the first (the pool's
    // thread starting), a few ms for the others.
    expect(ms).toBeLessThan(10_000)
  })

  it('still signs an ordinary file afterwards, and the process stayed under 600 MB', async () => {
    const { status, body } = await sign(await makePdf([{}]))
    expect(status).toBe(200)
    expect(body.success).toBe(true)
    expect(peakRssMiB()).toBeLessThan(600)
  })
})

const DAY_MS = 86_400_000
const PASSWORD = 'senha-do-certificado'

/** The service started on `env` (a certificate of the test's own), listening on loopback. */
async function startWith (env: Record<string, string>): Promise<string> {
  const full = { RAZAO_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent', ...env }
  const shared = loadConfig(full, dir).shared
  const started = await buildSignApp({ shared, config: loadSignConfig(full, shared, dir), apiKey: API_KEY, pool, logger: false })
  certificateApps.push(started)
  return await started.listen({ host: '127.0.0.1', port: 0 })
}

async function health (target: string): Promise<{ status: string, warnings: string[], actuator: { code: number, body: any } }> {
  const body = await (await fetch(`${target}/api/v1/health`)).json() as { data: { status: string }, warnings: string[] }
  const actuator = await fetch(`${target}/actuator/health`)
  return { status: body.data.status, warnings: body.warnings, actuator: { code: actuator.status, body: await actuator.json() } }
}

/** An end-entity certificate of `chain`'s intermediate, with the key usage given (or the e-CNPJ's usual one). */
function endEntity (chain: DevChain, o: { kind?: 'signer' | 'server', keyUsage?: KeyUsageName[], notBefore?: Date, notAfter?: Date } = {}): IssuedCertificate {
  const now = Date.now()
  return issueCertificate({
    kind: o.kind ?? 'signer',
    commonName: `EMPRESA CERTIFICADO TESTE ${now}:11222333000181`,
    issuer: chain.intermediate,
    notBefore: o.notBefore ?? new Date(now - 3_600_000),
    notAfter: o.notAfter ?? new Date(now + 365 * DAY_MS),
    ...(o.keyUsage === undefined ? {} : { keyUsage: o.keyUsage })
  })
}

/** Writes `bytes` beside `path` and renames it over `path`: how an operator replaces a file safely. */
async function replaceFile (path: string, bytes: Uint8Array): Promise<void> {
  await writeFile(`${path}.new`, bytes)
  await rename(`${path}.new`, path)
}

const untilOf = (c: IssuedCertificate): number => Date.parse(new X509Certificate(c.certPem).validTo)
const serialOf = (c: IssuedCertificate): string => new X509Certificate(c.certPem).serialNumber.toUpperCase()

describe('signature, certificates (issue 32)', () => {
  let chain: DevChain
  let pdf: Uint8Array
  beforeAll(async () => {
    chain = createDevChain({ password: PASSWORD })
    pdf = await makePdf([{}])
  })

  it('refuses a certificate whose key usage is keyEncipherment alone (a TLS server certificate): health DOWN, signatures INVALID_CERTIFICATE', async () => {
    const server = endEntity(chain, { kind: 'server', keyUsage: ['keyEncipherment'] })
    const path = join(dir, 'tls-server.p12')
    await writeFile(path, toPkcs12(server, [chain.intermediate, chain.root], PASSWORD))
    const target = await startWith({ SIGN_CERT_PATH: path, SIGN_CERT_PASSWORD: PASSWORD })

    const state = await health(target)
    expect(state.status).toBe('DOWN')
    expect(state.warnings.join(' ')).toMatch(/key usage .*keyEncipherment.*digitalSignature.*nonRepudiation/)
    expect(state.actuator.code).toBe(503)
    expect(state.actuator.body.components.certificate).toMatchObject({ status: 'DOWN', details: { error: 'SIGN_CERT_INVALID', message: expect.stringMatching(/key usage/) } })

    const res = await sign(pdf, target)
    expect(res.status).toBe(500)
    expect(res.body).toMatchObject({ success: false, data: null, code: 'INVALID_CERTIFICATE', errors: [{ code: 'INVALID_CERTIFICATE', field: null }] })
    expect(res.body.message).toMatch(/key usage .*keyEncipherment.*digitalSignature.*nonRepudiation/)
  })

  it('signs with either digitalSignature or nonRepudiation alone', async () => {
    for (const bit of ['digitalSignature', 'nonRepudiation'] as const) {
      const path = join(dir, `only-${bit}.p12`)
      await writeFile(path, toPkcs12(endEntity(chain, { keyUsage: [bit] }), [chain.intermediate, chain.root], PASSWORD))
      const target = await startWith({ SIGN_CERT_PATH: path, SIGN_CERT_PASSWORD: PASSWORD })
      expect((await health(target)).status).toBe('UP')
      const res = await sign(pdf, target)
      expect(res.status, bit).toBe(200)
    }
  })

  it('warns in every signature and in health when the file lacks the signer\'s issuer, and SIGN_CERT_CHAIN_PATH completes the chain', async () => {
    // The root is there, the intermediate that issued the signer is not: no path can be built.
    const path = join(dir, 'no-intermediate.p12')
    await writeFile(path, toPkcs12(chain.signer, [chain.root], PASSWORD))
    const bare = await startWith({ SIGN_CERT_PATH: path, SIGN_CERT_PASSWORD: PASSWORD })
    const missing = /issuer.*AC RAZAO DESENVOLVIMENTO v1 - TESTE/

    const state = await health(bare)
    expect(state.status).toBe('UP')
    expect(state.warnings.join(' ')).toMatch(missing)
    const res = await sign(pdf, bare)
    expect(res.status).toBe(200)
    expect(res.body.warnings.join(' ')).toMatch(missing)
    const signed = Buffer.from(res.body.data.signedPdfBase64, 'base64')
    expect(signerInfoParts(findSignatures(signed)[0]!.cms).certificateCount).toBe(1)

    const chainPath = join(dir, 'intermediate.pem')
    await writeFile(chainPath, chain.intermediate.certPem)
    const completed = await startWith({ SIGN_CERT_PATH: path, SIGN_CERT_PASSWORD: PASSWORD, SIGN_CERT_CHAIN_PATH: chainPath })
    const after = await health(completed)
    expect(after.status).toBe('UP')
    expect(after.warnings.join(' ')).not.toMatch(missing)
    const good = await sign(pdf, completed)
    expect(good.status).toBe(200)
    expect(good.body.warnings.join(' ')).not.toMatch(missing)
    const full = Buffer.from(good.body.data.signedPdfBase64, 'base64')
    // Signer, intermediate (from the chain file), root (from the PKCS#12).
    expect(signerInfoParts(findSignatures(full)[0]!.cms).certificateCount).toBe(3)
    if (toolsAvailable('pdfsig', 'openssl', 'qpdf')) {
      const rootPath = join(dir, 'chain-root.pem')
      await writeFile(rootPath, chain.root.certPem)
      // OpenSSL builds the path to the root from the certificates in the signature alone.
      await checkSignedPdf(dir, full, rootPath, 'completed-chain')
      await expect(checkSignedPdf(dir, signed, rootPath, 'bare-chain')).rejects.toThrow()
    }
  })

  it('follows the certificate file replaced under it: signatures and both health routes agree on each new file', async () => {
    const path = join(dir, 'rotated.p12')
    const first = endEntity(chain)
    await writeFile(path, toPkcs12(first, [chain.intermediate, chain.root], PASSWORD))
    const target = await startWith({ SIGN_CERT_PATH: path, SIGN_CERT_PASSWORD: PASSWORD })
    let state = await health(target)
    expect(state.status).toBe('UP')
    expect(Date.parse(state.actuator.body.components.certificate.details.validUntil)).toBe(untilOf(first))
    let res = await sign(pdf, target)
    expect(res.status).toBe(200)
    expect(res.body.data.certificate.certificateSerialNumber).toBe(serialOf(first))

    // Expired yesterday: refused by both, health reporting the new file's end, not the old one's.
    const expired = endEntity(chain, { notBefore: new Date(Date.now() - 400 * DAY_MS), notAfter: new Date(Date.now() - DAY_MS) })
    await replaceFile(path, toPkcs12(expired, [chain.intermediate, chain.root], PASSWORD))
    res = await sign(pdf, target)
    expect(res.status).toBe(500)
    expect(res.body).toMatchObject({ code: 'INVALID_CERTIFICATE', errors: [{ code: 'INVALID_CERTIFICATE' }] })
    expect(res.body.message).toMatch(/expired/)
    state = await health(target)
    expect(state.status).toBe('DOWN')
    expect(state.warnings.join(' ')).toMatch(/expired/)
    expect(state.actuator.code).toBe(503)
    expect(Date.parse(state.actuator.body.components.certificate.details.validUntil)).toBe(untilOf(expired))

    // Another password than SIGN_CERT_PASSWORD.
    await replaceFile(path, toPkcs12(endEntity(chain), [chain.intermediate, chain.root], 'outra-senha'))
    res = await sign(pdf, target)
    expect(res.status).toBe(500)
    expect(res.body.code).toBe('INVALID_CERTIFICATE')
    expect(res.body.message).toMatch(/wrong password/)
    state = await health(target)
    expect(state.status).toBe('DOWN')
    expect(state.warnings.join(' ')).toMatch(/wrong password/)
    expect(state.actuator.body.components.certificate.details).toMatchObject({ error: 'SIGN_CERT_INVALID', message: expect.stringMatching(/wrong password/) })

    // Gone: nothing to read.
    await rm(path)
    res = await sign(pdf, target)
    expect(res.status).toBe(500)
    expect(res.body.message).toMatch(/SIGN_CERT_PATH.*cannot be read/)
    state = await health(target)
    expect(state.status).toBe('DOWN')
    expect(state.warnings.join(' ')).toMatch(/cannot be read/)

    // Written directly under the name, not renamed into place, a certificate not meant for signing.
    await writeFile(path, toPkcs12(endEntity(chain, { kind: 'server', keyUsage: ['keyEncipherment'] }), [chain.intermediate, chain.root], PASSWORD))
    res = await sign(pdf, target)
    expect(res.status).toBe(500)
    expect(res.body.message).toMatch(/key usage/)
    state = await health(target)
    expect(state.status).toBe('DOWN')
    expect(state.warnings.join(' ')).toMatch(/key usage/)

    // A good one again: signed with it, and health says so with its dates. Health calls that
    // arrive together after the change open the file once between them.
    const second = endEntity(chain)
    await replaceFile(path, toPkcs12(second, [chain.intermediate, chain.root], PASSWORD))
    const tasksBefore = pool.completed
    const together = await Promise.all([1, 2, 3, 4].map(async () => await (await fetch(`${target}/api/v1/health`)).json() as { data: { status: string } }))
    expect(together.map((h) => h.data.status)).toEqual(['UP', 'UP', 'UP', 'UP'])
    expect(pool.completed - tasksBefore).toBe(1)
    state = await health(target)
    expect(state.status).toBe('UP')
    expect(state.warnings).not.toContainEqual(expect.stringMatching(/certificate/))
    expect(Date.parse(state.actuator.body.components.certificate.details.validUntil)).toBe(untilOf(second))
    res = await sign(pdf, target)
    expect(res.status).toBe(200)
    expect(res.body.data.certificate.certificateSerialNumber).toBe(serialOf(second))
  })
})

async function verify (pdf: Uint8Array): Promise<{ status: number, body: any, ms: number }> {
  const form = new FormData()
  form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'hostil.pdf')
  const started = performance.now()
  const res = await fetch(`${base}/api/v1/verify`, { method: 'POST', headers: { 'x-api-key': API_KEY }, body: form })
  return { status: res.status, body: await res.json(), ms: performance.now() - started }
}

/** A one-page PDF with `n` signature fields whose values all name the same small ByteRange. */
async function manySignatureFields (n: number): Promise<Uint8Array> {
  const { PDFDocument, PDFHexString, PDFName, PDFString } = await import('pdf-lib')
  const doc = await PDFDocument.create()
  const page = doc.addPage([200, 200])
  const fields = []
  for (let i = 0; i < n; i++) {
    const value = doc.context.register(doc.context.obj({ Type: 'Sig', Filter: 'Adobe.PPKLite', SubFilter: 'ETSI.CAdES.detached', ByteRange: [0, 10, 20, 10], Contents: PDFHexString.of('00') }))
    const widget = doc.context.register(doc.context.obj({ Type: 'Annot', Subtype: 'Widget', FT: 'Sig', Rect: [0, 0, 0, 0], T: PDFString.of(`Sig${i}`), V: value, P: page.ref }))
    fields.push(widget)
  }
  doc.catalog.set(PDFName.of('AcroForm'), doc.context.obj({ Fields: fields, SigFlags: 3 }))
  return await doc.save({ useObjectStreams: false })
}

describe('verification, hostile', () => {
  it.each(DECLARED_BOMBS)('refuses %s with 400 INVALID_PDF, fast', async (_what, make) => {
    const { status, body, ms } = await verify(make())
    expect(status).toBe(400)
    expect(body).toMatchObject({ success: false, code: 'INVALID_PDF', errors: [{ code: 'INVALID_PDF', field: 'file' }] })
    expect(body.message).toMatch(/declares more than it holds/)
    // A hang catcher only: a few ms each once the pool's thread runs.
    expect(ms).toBeLessThan(10_000)
  })

  it('refuses more signature fields than it verifies, and judges a signature value of deeply nested DER INVALID', async () => {
    const many = await verify(await manySignatureFields(101))
    expect(many.status).toBe(400)
    expect(many.body.message).toMatch(/101 signature fields .* at most 100/)

    const signed = await sign(await makePdf([{}]))
    const pdf = Buffer.from(signed.body.data.signedPdfBase64, 'base64')
    const [sig] = findSignatures(pdf)
    const [, gapStart, gapEnd] = sig!.byteRange
    // SEQUENCE of indefinite length inside SEQUENCE inside ..., as deep as the /Contents room allows.
    pdf.write('3080'.repeat((gapEnd - gapStart - 2) / 4), gapStart + 1, 'latin1')
    const deep = await verify(pdf)
    expect(deep.status).toBe(200)
    expect(deep.body.data.verdict).toBe('INVALID')
    expect(deep.body.data.signatures[0].problems[0]).toMatch(/signature value cannot be read/)
  })

  it('still verifies an ordinary signed file afterwards', async () => {
    const signed = await sign(await makePdf([{}]))
    const { status, body } = await verify(Buffer.from(signed.body.data.signedPdfBase64, 'base64'))
    expect(status).toBe(200)
    // The development chain is trusted nowhere: intact, not trusted.
    expect(body.data).toMatchObject({ verdict: 'INDETERMINATE', signatures: [{ integrity: { digestMatches: true, signatureValid: true } }] })
  })
})
