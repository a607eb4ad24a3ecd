/**
 * PAdES-B-LT and B-LTA end to end: a test PKI whose certificates name a real OCSP
 * responder (`openssl ocsp` on loopback) and CRLs served over HTTP on loopback, a real
 * RFC 3161 responder, and the output judged by tools we did not write: pdfsig, qpdf,
 * `openssl cms -verify`, `openssl ocsp -respin`, `openssl crl`, `openssl ts -verify`.
 * Then the refusals: a revoked signer (by OCSP, by CRL), and revocation data that
 * cannot be had (no source, a hung server, an error, junk).
 */
import { execFile } from 'node:child_process'
import { X509Certificate, createHash, createPrivateKey, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePdf, qpdf, withObjectStreams } from '../../fixtures/pdf/samples.js'
import { makeCrl, startCrlServer, startOcspResponder } from '../../fixtures/pdf/revocation-server.js'
import type { CrlServer, OcspResponder } from '../../fixtures/pdf/revocation-server.js'
import { startLocalTsa } from '../../fixtures/pdf/tsa-server.js'
import type { LocalTsa } from '../../fixtures/pdf/tsa-server.js'
import { findSignatures, opensslVerify, pdfsig, toolsAvailable } from '../../fixtures/pdf/verify.js'
import { materialFrom } from './certificate.js'
import type { SigningMaterial } from './certificate.js'
import { issueCertificate } from './dev-chain.js'
import type { IssuedCertificate } from './dev-chain.js'
import { forgetCachedCrls } from './revocation.js'
import { signPdf } from './sign-pdf.js'
import type { SignPdfOptions } from './sign-pdf.js'
import { verifyPdf } from './verify/index.js'
import type { TrustAnchor } from './verify/index.js'

const run = promisify(execFile)
const DAY_MS = 86_400_000
const tools = toolsAvailable('pdfsig', 'openssl', 'qpdf')

let dir: string
let crl: CrlServer
let ocsp: OcspResponder
let tsa: LocalTsa
let root: IssuedCertificate
let intermediate: IssuedCertificate
let tsaRoot: IssuedCertificate
let rootPem: string
let tsaRootPem: string
let intermediatePem: string
/** Signers of the same test PKI: status good (OCSP and CRL), revoked (OCSP and CRL), revoked (CRL only), good (CRL only). */
let good: SigningMaterial
let revokedByOcsp: SigningMaterial
let revokedByCrl: SigningMaterial
let crlOnly: SigningMaterial
let noSources: SigningMaterial
let pdf: Uint8Array

const serial = (): string => { const b = randomBytes(16); b[0] = (b[0]! & 0x3f) | 0x10; return b.toString('hex').toUpperCase() }

/** A signer of the test PKI, as loadPkcs12 would give it (no PKCS#12 round trip: forge's takes seconds). */
function signer (serialHex: string, revocation: { ocspUrls?: string[], crlUrls?: string[] }): SigningMaterial {
  const start = new Date(Date.now() - 3_600_000)
  const leaf = issueCertificate({
    kind: 'signer', commonName: 'EMPRESA LT TESTE LTDA:11222333000181', issuer: intermediate, serialNumber: serialHex,
    notBefore: start, notAfter: new Date(start.getTime() + 365 * DAY_MS), ...revocation
  })
  return materialFrom(createPrivateKey(leaf.keyPem), [leaf, intermediate, root].map((c) => new X509Certificate(c.certPem)))
}

beforeAll(async () => {
  if (!tools) return
  dir = await mkdtemp(join(tmpdir(), 'razao-lt-'))
  crl = await startCrlServer()
  const start = new Date(Date.now() - 3_600_000)
  root = issueCertificate({ kind: 'root', commonName: 'AC RAIZ LT TESTE', notBefore: start, notAfter: new Date(start.getTime() + 3650 * DAY_MS) })
  intermediate = issueCertificate({ kind: 'ca', commonName: 'AC LT TESTE v1', issuer: root, notBefore: start, notAfter: new Date(start.getTime() + 1825 * DAY_MS), crlUrls: [`${crl.base}/raiz.crl`] })
  tsaRoot = issueCertificate({ kind: 'root', commonName: 'AC RAIZ CARIMBO LT TESTE', notBefore: start, notAfter: new Date(start.getTime() + 3650 * DAY_MS) })
  const tsaCert = issueCertificate({ kind: 'tsa', commonName: 'ACT LT TESTE', issuer: tsaRoot, notBefore: start, notAfter: new Date(start.getTime() + 365 * DAY_MS), crlUrls: [`${crl.base}/act-raiz.crl`] })
  const serials = { good: serial(), revokedByOcsp: serial(), revokedByCrl: serial(), crlOnly: serial() }
  const anHourAgo = new Date(Date.now() - 3_600_000)
  ocsp = await startOcspResponder(dir, 'ac', intermediate, [{ serialHex: serials.good }, { serialHex: serials.revokedByOcsp, revokedAt: anHourAgo }])
  crl.crls.set('/raiz.crl', await makeCrl(dir, 'raiz', root, [{ serialHex: intermediate.cert.serialNumber }]))
  crl.crls.set('/ac.crl', await makeCrl(dir, 'ac', intermediate, [{ serialHex: serials.revokedByOcsp, revokedAt: anHourAgo }, { serialHex: serials.revokedByCrl, revokedAt: anHourAgo }]))
  crl.crls.set('/act-raiz.crl', await makeCrl(dir, 'act-raiz', tsaRoot, []))
  good = signer(serials.good, { ocspUrls: [ocsp.url], crlUrls: [`${crl.base}/ac.crl`] })
  revokedByOcsp = signer(serials.revokedByOcsp, { ocspUrls: [ocsp.url], crlUrls: [`${crl.base}/ac.crl`] })
  revokedByCrl = signer(serials.revokedByCrl, { crlUrls: [`${crl.base}/ac.crl`] })
  crlOnly = signer(serials.crlOnly, { crlUrls: [`${crl.base}/ac.crl`] })
  noSources = signer(serial(), {})
  rootPem = join(dir, 'root.pem')
  tsaRootPem = join(dir, 'act-root.pem')
  intermediatePem = join(dir, 'ac.pem')
  await writeFile(rootPem, root.certPem)
  await writeFile(tsaRootPem, tsaRoot.certPem)
  await writeFile(intermediatePem, intermediate.certPem)
  const tsaCertPath = join(dir, 'act.pem')
  const tsaKeyPath = join(dir, 'act.key')
  await writeFile(tsaCertPath, tsaCert.certPem)
  await writeFile(tsaKeyPath, tsaCert.keyPem, { mode: 0o600 })
  tsa = await startLocalTsa({ dir, certPath: tsaCertPath, keyPath: tsaKeyPath, rootPemPath: tsaRootPem })
  pdf = await makePdf([{}, {}])
}, 60_000)

afterAll(async () => {
  if (!tools) return
  await ocsp?.close()
  await crl?.close()
  await tsa?.close()
  await rm(dir, { recursive: true, force: true })
})

let counter = 0
function options (over: Partial<SignPdfOptions> = {}): SignPdfOptions {
  counter++
  return {
    material: good, visualMode: 'NONE', validatorUrl: 'https://validar.iti.gov.br/', timeZone: 'America/Sao_Paulo',
    documentIdentifier: `RZ-LT-${String(counter).padStart(4, '0')}`, signedAt: new Date(),
    tsa: { url: tsa.url, timeoutMs: 30_000 }, revocation: { timeoutMs: 10_000, maxBytes: 1 << 20 }, ...over
  }
}

interface Dss { certs: Buffer[], ocsps: Buffer[], crls: Buffer[], dict: PDFDict }

async function readDss (bytes: Uint8Array): Promise<Dss> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false })
  const dict = doc.catalog.lookup(PDFName.of('DSS'), PDFDict)
  const streams = (key: string): Buffer[] => {
    const array = dict.lookupMaybe(PDFName.of(key), PDFArray)
    return (array?.asArray() ?? []).map((ref) => {
      const stream = doc.context.lookup(ref)
      if (!(stream instanceof PDFRawStream)) throw new Error(`/DSS /${key} holds something other than a stream`)
      return Buffer.from(stream.getContents())
    })
  }
  return { certs: streams('Certs'), ocsps: streams('OCSPs'), crls: streams('CRLs'), dict }
}

async function qpdfCheck (path: string): Promise<void> {
  const { stdout } = await run('qpdf', ['--check', path])
  expect(stdout).toMatch(/No syntax or stream encoding errors/)
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

/** The test's signing root and timestamp root, as our verifier's trust store. */
const anchors = (): TrustAnchor[] => [
  { cert: new X509Certificate(readFileSync(rootPem)), source: 'root.pem' },
  { cert: new X509Certificate(readFileSync(tsaRootPem)), source: 'act-root.pem' }
]

describe.skipIf(!tools)('PAdES-B-LT', () => {
  it('adds a DSS with the chains\' certificates, the signer\'s OCSP answer and the CRLs of the CAs, which pdfsig, qpdf, openssl and our own verifier (B-LT) accept', async () => {
    const signed = await signPdf(pdf, options({ level: 'LT' }))
    expect(signed.standard).toBe('PAdES-LT')
    expect(signed.level).toBe('LT')
    expect(signed.timestampApplied).toBe(true)
    const path = join(dir, 'lt.pdf')
    await writeFile(path, signed.pdf)
    await qpdfCheck(path)

    // The signature: valid, and covering everything but the DSS update after it.
    const report = await pdfsig(path)
    expect(report.signatures).toHaveLength(1)
    expect(report.signatures[0]!.valid).toBe(true)
    const [sig] = findSignatures(signed.pdf)
    const covered = sig!.byteRange[2] + sig!.byteRange[3]
    expect(covered).toBeLessThan(signed.pdf.length)
    expect(Buffer.from(signed.pdf).subarray(covered).toString('latin1')).toMatch(/\/DSS \d+ 0 R/)
    await opensslVerify(dir, sig!, rootPem, 'lt')
    // Our own verifier (core/sign/verify) agrees: valid, at level B-LT, with the DSS read.
    const ours = await verifyPdf(signed.pdf, { anchors: anchors() })
    expect(ours.verdict).toBe('VALID')
    expect(ours.signatures.map((s) => [s.verdict, s.pades.level])).toEqual([['VALID', 'B-LT']])
    expect(ours.securityStore).toMatchObject({ certificates: expect.any(Number), ocspResponses: expect.any(Number), crls: expect.any(Number) })
    expect(ours.securityStore!.ocspResponses + ours.securityStore!.crls).toBeGreaterThan(0)

    const dss = await readDss(signed.pdf)
    expect(dss.dict.get(PDFName.of('Type'))).toBe(PDFName.of('DSS'))
    // Signer, intermediate, root; the authority and its root (from the timestamp token).
    expect(dss.certs.map(sha256)).toEqual(expect.arrayContaining(good.chain.map(sha256)))
    expect(dss.certs).toHaveLength(5)
    // One OCSP answer (the signer's), verified by openssl against the test root.
    expect(dss.ocsps).toHaveLength(1)
    const respPath = join(dir, 'lt-ocsp.der')
    await writeFile(respPath, dss.ocsps[0]!)
    const leafPath = join(dir, 'lt-leaf.der')
    await writeFile(leafPath, good.chain[0]!)
    await run('openssl', ['x509', '-inform', 'DER', '-in', leafPath, '-out', `${leafPath}.pem`])
    const ocspCheck = await run('openssl', ['ocsp', '-respin', respPath, '-issuer', intermediatePem, '-cert', `${leafPath}.pem`, '-CAfile', rootPem, '-VAfile', intermediatePem, '-no_nonce'])
    expect(ocspCheck.stdout).toMatch(/: good/)
    expect(`${ocspCheck.stdout}${ocspCheck.stderr}`).toMatch(/Response verify OK/)
    // Two CRLs: the root's (for the intermediate) and the authority root's (for the TSA certificate), each signed by its CA.
    expect(dss.crls).toHaveLength(2)
    const issuers = [rootPem, tsaRootPem]
    for (const [i, der] of dss.crls.entries()) {
      const crlPath = join(dir, `lt-${i}.crl`)
      await writeFile(crlPath, der)
      const verified = await Promise.any(issuers.map(async (ca) => await run('openssl', ['crl', '-inform', 'DER', '-in', crlPath, '-CAfile', ca, '-noout'])))
      expect(verified.stderr).toMatch(/verify OK/)
    }
    // Each CRL was fetched once.
    expect(crl.requests.filter((r) => r === '/raiz.crl')).toHaveLength(1)
    // and is reused by the next signature, within CRL_REUSE_MS: no new request.
    await signPdf(pdf, options({ level: 'LT' }))
    expect(crl.requests.filter((r) => r === '/raiz.crl')).toHaveLength(1)
  }, 60_000)

  it('updates a cross-reference-stream file, an encrypted one and an LT-signed one, merging into the DSS already there', async () => {
    const streams = await signPdf(await withObjectStreams(dir, pdf, 'lt-objstm'), options({ level: 'LT', visualMode: 'STAMP_ONLY' }))
    const encrypted = await signPdf(await qpdf(dir, pdf, ['--encrypt', '', 'dono', '256', '--'], 'lt-enc'), options({ level: 'LTA', visualMode: 'STAMP_ONLY' }))
    const again = await signPdf(streams.pdf, options({ level: 'LT', material: crlOnly }))
    for (const [name, signed] of [['objstm', streams], ['enc', encrypted], ['again', again]] as const) {
      const path = join(dir, `lt-${name}.pdf`)
      await writeFile(path, signed.pdf)
      await qpdfCheck(path)
      expect((await pdfsig(path)).signatures.filter((s) => /ETSI\.CAdES\.detached/.test(s.text)).every((s) => s.valid)).toBe(true)
    }
    // The encrypted file's DSS streams are encrypted like its other streams: decrypted, they are the DER we fetched.
    const decrypted = await qpdf(dir, encrypted.pdf, ['--decrypt', '--stream-data=uncompress'], 'lt-enc-clear')
    const clear = await readDss(decrypted)
    expect(clear.certs.map(sha256)).toEqual(expect.arrayContaining(good.chain.map(sha256)))
    expect(Buffer.from(encrypted.pdf).includes(good.chain[1]!)).toBe(false)
    // The second signature adds only what the DSS lacked: the intermediate CA's CRL and that signer's certificate.
    const first = await readDss(streams.pdf)
    const second = await readDss(again.pdf)
    expect(second.certs.length).toBe(first.certs.length + 1)
    expect(second.crls.length).toBe(first.crls.length + 1)
    expect(second.ocsps.length).toBe(first.ocsps.length)
  }, 120_000)

  it('falls back to the CRL when the certificate names no OCSP responder', async () => {
    const signed = await signPdf(pdf, options({ level: 'LT', material: crlOnly }))
    const dss = await readDss(signed.pdf)
    expect(dss.ocsps).toHaveLength(0)
    // The intermediate CA's CRL now too, which does not list this signer.
    expect(dss.crls).toHaveLength(3)
    const path = join(dir, 'lt-crl.pdf')
    await writeFile(path, signed.pdf)
    expect((await pdfsig(path)).signatures[0]!.valid).toBe(true)
  }, 60_000)

  it('refuses a signer the OCSP responder reports revoked, naming the certificate and the source', async () => {
    const err = await signPdf(pdf, options({ level: 'LT', material: revokedByOcsp })).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'SIGN_CERT_REVOKED' })
    expect((err as Error).message).toMatch(/is revoked since .* according to the OCSP responder http:\/\/127\.0\.0\.1/)
    expect((err as Error).message).toContain(revokedByOcsp.leaf.serialNumber)
  }, 60_000)

  it('refuses a signer its CA\'s CRL lists', async () => {
    const err = await signPdf(pdf, options({ level: 'LTA', material: revokedByCrl })).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'SIGN_CERT_REVOKED' })
    expect((err as Error).message).toMatch(/according to the CRL from http:\/\/127\.0\.0\.1:\d+\/ac\.crl/)
  }, 60_000)

  it('refuses a chain whose certificates name no revocation source', async () => {
    const err = await signPdf(pdf, options({ level: 'LT', material: noSources })).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'SIGN_REVOCATION_UNAVAILABLE' })
    expect((err as Error).message).toMatch(/names no OCSP responder and no CRL distribution point/)
  })

  it.each([
    ['http-error', /answered HTTP 503/],
    ['garbage', /not a DER CRL/],
    // A server that never answers: the fetch's own deadline (300 ms here) ends the wait.
    ['hang', /did not answer within 300 ms/]
  ] as const)('says why when the CRL server fails (%s)', async (mode, message) => {
    // The CRL an earlier test fetched would be reused for minutes: this one must ask again.
    forgetCachedCrls()
    crl.mode = mode
    try {
      const err = await signPdf(pdf, options({ level: 'LT', material: crlOnly, revocation: { timeoutMs: 300, maxBytes: 1 << 20 } })).catch((e: unknown) => e)
      expect(err).toMatchObject({ code: 'SIGN_REVOCATION_UNAVAILABLE' })
      expect((err as Error).message).toMatch(message)
    } finally {
      crl.mode = 'ok'
    }
  }, 60_000)

  it('does not take the status from a responder that is not the issuer\'s, nor from junk', async () => {
    // A real responder, but for another CA (the authority's root): its answer about our
    // signer is signed by a key the signer's issuer never authorized.
    const foreign = await startOcspResponder(dir, 'estranho', tsaRoot, [])
    try {
      const bySomeoneElse = signer(serial(), { ocspUrls: [foreign.url] })
      const err = await signPdf(pdf, options({ level: 'LT', material: bySomeoneElse })).catch((e: unknown) => e)
      expect(err).toMatchObject({ code: 'SIGN_REVOCATION_UNAVAILABLE' })
      expect((err as Error).message).toMatch(/is not signed by the certificate's issuer or a responder it authorized/)
    } finally {
      await foreign.close()
    }
    crl.mode = 'garbage'
    try {
      const junk = signer(serial(), { ocspUrls: [`${crl.base}/ocsp`] })
      const err = await signPdf(pdf, options({ level: 'LT', material: junk })).catch((e: unknown) => e)
      expect((err as Error).message).toMatch(/sent an answer that is not a DER OCSPResponse/)
    } finally {
      crl.mode = 'ok'
    }
  }, 60_000)

  it('refuses an answer larger than the limit', async () => {
    forgetCachedCrls()
    const err = await signPdf(pdf, options({ level: 'LT', material: crlOnly, revocation: { timeoutMs: 10_000, maxBytes: 64 } })).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'SIGN_REVOCATION_UNAVAILABLE' })
    expect((err as Error).message).toMatch(/more than the 64 accepted/)
  }, 60_000)

  it('needs a timestamp authority', async () => {
    await expect(signPdf(pdf, options({ level: 'LT', tsa: undefined }))).rejects.toThrow(/needs a timestamp authority/)
  })
})

describe.skipIf(!tools)('PAdES-B-LTA', () => {
  it('adds a document timestamp over the signature and the DSS, which pdfsig, openssl ts and our own verifier (B-LTA) accept', async () => {
    const signed = await signPdf(pdf, options({ level: 'LTA', visualMode: 'STAMP_AND_PAGE' }))
    expect(signed.standard).toBe('PAdES-LTA')
    const path = join(dir, 'lta.pdf')
    await writeFile(path, signed.pdf)
    await qpdfCheck(path)
    const report = await pdfsig(path)
    expect(report.signatures).toHaveLength(2)
    expect(report.signatures[0]!.valid).toBe(true)
    // poppler 22.12 reads the token's CMS (its signer is the authority) but does not verify
    // /ETSI.RFC3161 ("Signature Type: unknown", "not yet been verified"): openssl ts does, below.
    const stamp = report.signatures[1]!
    expect(stamp.text).toMatch(/Signature Field Name: CarimboDoTempo1/)
    expect(stamp.text).toMatch(/Signer Certificate Common Name: ACT LT TESTE/)
    expect(stamp.text).not.toMatch(/Invalid|Mismatch/)
    expect(stamp.totalDocument).toBe(true)

    const [sig, docTs] = findSignatures(signed.pdf)
    expect(docTs!.dictionary).toMatch(/\/Type\s*\/DocTimeStamp/)
    expect(docTs!.byteRange[2] + docTs!.byteRange[3]).toBe(signed.pdf.length)
    // The timestamp covers the signature and the DSS update.
    expect(docTs!.byteRange[1]).toBeGreaterThan(sig!.byteRange[2] + sig!.byteRange[3])
    expect(docTs!.signedData.toString('latin1')).toMatch(/\/DSS \d+ 0 R/)
    const tokenPath = join(dir, 'lta.tst')
    const dataPath = join(dir, 'lta.bin')
    await writeFile(tokenPath, docTs!.cms)
    await writeFile(dataPath, docTs!.signedData)
    const verified = await run('openssl', ['ts', '-verify', '-data', dataPath, '-in', tokenPath, '-token_in', '-CAfile', tsaRootPem])
    expect(verified.stdout).toMatch(/Verification: OK/)
    await opensslVerify(dir, sig!, rootPem, 'lta')
    // Our own verifier: the signature at B-LTA, and the document timestamp valid.
    const ours = await verifyPdf(signed.pdf, { anchors: anchors() })
    expect(ours.verdict).toBe('VALID')
    expect(ours.signatures.map((s) => s.verdict)).toEqual(['VALID', 'VALID'])
    expect(ours.signatures[0]!.pades.level).toBe('B-LTA')
  }, 60_000)
})
