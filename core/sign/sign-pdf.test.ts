/**
 * Signing end to end in core, every output judged by pdfsig and OpenSSL (fixtures/pdf/verify.ts):
 * PAdES-B and -T (with a real RFC 3161 responder on loopback), every visual mode, the input
 * shapes real producers write, a second signature on a signed file, and the refusals.
 */
import { execFile } from 'node:child_process'
import { X509Certificate, createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import jsQRModule from 'jsqr'
import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestPki } from '../../fixtures/pdf/pki.js'
import type { TestPki } from '../../fixtures/pdf/pki.js'
import { makeFormPdf, makeHybridPdf, makePdf, qpdf, withObjectStreams } from '../../fixtures/pdf/samples.js'
import { startLocalTsa } from '../../fixtures/pdf/tsa-server.js'
import type { LocalTsa } from '../../fixtures/pdf/tsa-server.js'
import { checkSignedPdf, findSignatures, opensslVerifyToken, padesAttributeProblems, pdfsig, signerInfoParts, signingCertificateProblems, toolsAvailable } from '../../fixtures/pdf/verify.js'
import { loadPkcs12 } from './certificate.js'
import { createDevChain, issueCertificate, toPkcs12 } from './dev-chain.js'
import type { SigningMaterial } from './certificate.js'
import { signPdf } from './sign-pdf.js'
import { pdfDate } from './time.js'
import { findStartXref as findStartXrefOf } from '../pdf/index.js'
import type { SignPdfOptions, VisualMode } from './sign-pdf.js'

const run = promisify(execFile)
let dir: string
let pki: TestPki
let material: SigningMaterial
let tsa: LocalTsa

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-sign-'))
  pki = await createTestPki(dir)
  material = loadPkcs12(pki.signer.pkcs12, pki.password)
  tsa = await startLocalTsa({ dir, certPath: pki.tsa.certPath, keyPath: pki.tsa.keyPath, rootPemPath: pki.tsa.rootPemPath })
})
afterAll(async () => {
  await tsa.close()
  await rm(dir, { recursive: true, force: true })
})

let counter = 0
function options (over: Partial<SignPdfOptions> = {}): SignPdfOptions {
  counter++
  return {
    material, visualMode: 'NONE', validatorUrl: 'https://validar.iti.gov.br/', timeZone: 'America/Sao_Paulo',
    documentIdentifier: `RZ-TEST-${String(counter).padStart(4, '0')}`, signedAt: new Date(), ...over
  }
}

async function expectPades (pdf: Uint8Array, name: string): Promise<void> {
  const check = await checkSignedPdf(dir, pdf, pki.rootPemPath, name)
  check.signatures.forEach((sig, i) => expect(padesAttributeProblems(check.attributes[i]!, sig.dictionary)).toEqual([]))
}

const tools = toolsAvailable('pdfsig', 'openssl', 'qpdf')

/** jsqr is CommonJS whose typings declare an ES default export; at run time both shapes are the function. */
const jsQR = jsQRModule.default

/**
 * Renders page `page` with pdftoppm (poppler) and decodes the QR code on it with jsQR; undefined
 * when none is found. jsQR now and then "finds" a code with no data in a page of text (the final
 * page's times and hashes change every run, so such a page fails one run in many); every code we
 * print carries a URL, so an empty one counts as none.
 */
async function qrOnPage (path: string, page: number): Promise<string | undefined> {
  const out = join(dir, `qr-${counter}`)
  await run('pdftoppm', ['-f', String(page), '-l', String(page), '-r', '150', '-gray', '-singlefile', path, out])
  const pgm = await readFile(`${out}.pgm`)
  // Binary PGM: "P5", width, height, maxval, each followed by whitespace, then one byte a pixel.
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.toString('latin1', 0, 64))
  if (header === null) throw new Error('pdftoppm did not write a PGM')
  const [width, height] = [Number(header[1]), Number(header[2])]
  const gray = pgm.subarray(header[0].length)
  const rgba = new Uint8ClampedArray(width * height * 4)
  for (let i = 0; i < width * height; i++) rgba.fill(gray[i]!, i * 4, i * 4 + 3).fill(255, i * 4 + 3, i * 4 + 4)
  const data = jsQR(rgba, width, height)?.data
  return data === '' ? undefined : data
}

describe.skipIf(!tools)('PAdES-B', () => {
  it('signs a one-page PDF: valid in pdfsig over the whole file, CMS verified by OpenSSL, baseline attributes only', async () => {
    const input = await makePdf([{}])
    const out = await signPdf(input, options())
    expect(out.standard).toBe('PAdES-B')
    expect(out.timestampApplied).toBe(false)
    expect(Buffer.from(out.pdf.subarray(0, input.length)).equals(Buffer.from(input))).toBe(true)
    expect(out.sha256).toBe(createHash('sha256').update(out.pdf).digest('hex'))
    await expectPades(out.pdf, 'b-one-page')
    const { certificateCount, token } = signerInfoParts(findSignatures(out.pdf)[0]!.cms)
    expect(certificateCount).toBe(3)
    expect(token).toBeUndefined()
  })

  it('names the signer in signing-certificate-v2 by its SHA-256 and issuer/serial, as OpenSSL reads the certificate', async () => {
    const out = await signPdf(await makePdf([{}]), options())
    const check = await checkSignedPdf(dir, out.pdf, pki.rootPemPath, 'b-ess')
    const signer = check.signers[0]!
    expect(signer.serial).toBe(material.identity.serialNumber)
    expect(signingCertificateProblems(check.attributes[0]!, signer)).toEqual([])
    // The check itself can fail: another certificate's hash, serial or issuer is reported.
    expect(signingCertificateProblems(check.attributes[0]!, { ...signer, sha256: '00'.repeat(32) })).toHaveLength(1)
    expect(signingCertificateProblems(check.attributes[0]!, { ...signer, serial: '01' })).toHaveLength(1)
    expect(signingCertificateProblems(check.attributes[0]!, { ...signer, issuerCommonName: 'AC OUTRA' })).toHaveLength(1)
  })

  it('writes the claimed time in /M with the configured zone\'s offset', async () => {
    const at = new Date(Date.now() + 60_000)
    const out = await signPdf(await makePdf([{}]), options({ signedAt: at }))
    expect(findSignatures(out.pdf)[0]!.dictionary).toContain(`/M (${pdfDate(at, 'America/Sao_Paulo')})`)
    expect(pdfDate(at, 'America/Sao_Paulo')).toMatch(/^D:\d{14}-03'00'$/)
  })

  it('declares the ICP-Brasil policy when configured, and then drops /Reason', async () => {
    const policy = { oid: '2.16.76.1.7.1.11.1.3', hash: createHash('sha256').update('policy').digest(), uri: 'http://politicas.icpbrasil.gov.br/PA_PAdES_AD_RB_v1_3.der' }
    const out = await signPdf(await makePdf([{}]), options({ policy }))
    const check = await checkSignedPdf(dir, out.pdf, pki.rootPemPath, 'b-policy')
    expect(check.attributes[0]).toMatch(/1\.2\.840\.113549\.1\.9\.16\.2\.15/)
    expect(check.signatures[0]!.dictionary).not.toContain('/Reason')
    expect(padesAttributeProblems(check.attributes[0]!, check.signatures[0]!.dictionary)).toEqual([])
  })
})

describe.skipIf(!tools)('PAdES-T', () => {
  it('embeds a token from the local authority over the signature value; openssl ts -verify accepts it', async () => {
    tsa.mode = 'ok'
    const before = tsa.queries.length
    const input = await makePdf([{}, {}])
    const out = await signPdf(input, options({ tsa: { url: tsa.url, timeoutMs: 10_000 }, visualMode: 'STAMP_AND_PAGE' }))
    expect(out.standard).toBe('PAdES-T')
    expect(out.timestampApplied).toBe(true)
    expect(out.timestampTime).toBeInstanceOf(Date)
    await expectPades(out.pdf, 't-two-pages')
    const sig = findSignatures(out.pdf)[0]!
    expect(await opensslVerifyToken(dir, sig.cms, pki.tsa.rootPemPath, 't-two-pages')).toMatch(/Verification: OK/)
    // Only a digest went out: one small query, not the document.
    expect(tsa.queries.length).toBe(before + 1)
    expect(tsa.queries[before]!.length).toBeLessThan(120)
  })

  it('signs again with the measured size when the token does not fit the reserved room', async () => {
    tsa.mode = 'ok'
    const before = tsa.queries.length
    const out = await signPdf(await makePdf([{}]), options({ tsa: { url: tsa.url, timeoutMs: 10_000 }, reserveBytes: 4000 }))
    expect(tsa.queries.length).toBe(before + 2)
    await expectPades(out.pdf, 't-retry')
    expect(await opensslVerifyToken(dir, findSignatures(out.pdf)[0]!.cms, pki.tsa.rootPemPath, 't-retry')).toMatch(/Verification: OK/)
  })

  it.each([['http-error'], ['rejection'], ['garbage']] as const)('turns an authority answering %s into TSA_FAILED', async (mode) => {
    tsa.mode = mode
    try {
      await expect(signPdf(await makePdf([{}]), options({ tsa: { url: tsa.url, timeoutMs: 10_000 } }))).rejects.toMatchObject({ code: 'TSA_FAILED' })
    } finally {
      tsa.mode = 'ok'
    }
  })

  it('turns an unreachable authority into TSA_FAILED', async () => {
    await expect(signPdf(await makePdf([{}]), options({ tsa: { url: 'http://127.0.0.1:9/tsa', timeoutMs: 3000 } }))).rejects.toMatchObject({ code: 'TSA_FAILED' })
  })
})

describe.skipIf(!tools)('visual modes', () => {
  const modes: VisualMode[] = ['NONE', 'STAMP_ONLY', 'PAGE_ONLY', 'STAMP_AND_PAGE']
  it.each(modes)('%s: adds the stamps and/or the final page it promises, and the signature covers them', async (mode) => {
    const input = await makePdf([{}, { rotate: 90 }, { size: [300, 200] }])
    const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000)
    const signing = options({ visualMode: mode, signedAt, validatorUrl: 'https://validar.iti.gov.br/?origem=razao' })
    const out = await signPdf(input, signing)
    await expectPades(out.pdf, `mode-${mode}`)
    const doc = await PDFDocument.load(out.pdf)
    const withPage = mode === 'PAGE_ONLY' || mode === 'STAMP_AND_PAGE'
    const withStamp = mode === 'STAMP_ONLY' || mode === 'STAMP_AND_PAGE'
    expect(doc.getPageCount()).toBe(withPage ? 4 : 3)
    const stamps = doc.getPages().slice(0, 3).map((p) => p.node.Annots()?.asArray().filter((a) => doc.context.lookup(a)?.toString().includes('/Subtype /Stamp')).length ?? 0)
    expect(stamps).toEqual(withStamp ? [1, 1, 1] : [0, 0, 0])
    if (withPage) {
      const path = join(dir, `mode-${mode}.pdf`)
      const { stdout } = await run('pdftotext', ['-f', '4', '-l', '4', '-enc', 'UTF-8', path, '-'])
      expect(stdout).toContain('Manifesto de assinatura digital')
      expect(stdout).toContain('11.222.333/0001-81')
      expect(stdout).toContain(material.identity.certificateAuthority)
      // Signer, date and time in the configured zone, standard, identifier and pages.
      expect(stdout).toContain(material.identity.signerName)
      // São Paulo keeps UTC-03:00 all year (no daylight saving since 2019).
      const local = new Date(signedAt.getTime() - 3 * 3600_000)
      const two = (n: number): string => String(n).padStart(2, '0')
      expect(stdout).toContain(`${two(local.getUTCDate())}/${two(local.getUTCMonth() + 1)}/${local.getUTCFullYear()} ` +
        `${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())} (UTC-03:00)`)
      expect(stdout).toContain('PAdES-B')
      expect(stdout).toContain(signing.documentIdentifier)
      expect(stdout).toContain('3 do documento original + esta página')
      // The development chain says so, and sends no one to the national validator (issue 34).
      expect(stdout).toContain('certificado de TESTE, sem validade jurídica')
      expect(stdout).not.toContain('ICP-Brasil')
      expect(stdout).not.toContain('validar.iti.gov.br')
      expect(await qrOnPage(path, 4)).toBeUndefined()
    }
    if (withStamp) {
      const stamp = stampTexts(doc)[0]!
      expect(stamp).toContain('Assinatura PAdES-B - certificado de TESTE, sem validade jurídica - Identificador')
      expect(stamp).not.toContain('ICP-Brasil')
    }
  })
})

/** The /Contents (the text) of each page's stamp annotation. */
function stampTexts (doc: PDFDocument): string[] {
  return doc.getPages().flatMap((p) => (p.node.Annots()?.asArray() ?? []).map((a) => doc.context.lookup(a, PDFDict))
    .filter((a) => a.get(PDFName.of('Subtype')) === PDFName.of('Stamp'))
    .map((a) => a.lookup(PDFName.of('Contents'), PDFString, PDFHexString).decodeText()))
}

describe.skipIf(!tools)('honest words (issue 34)', () => {
  it('calls a chain with an ICP-Brasil certificate policy ICP-Brasil, on the stamp and the final page, whose QR code points to the validator', async () => {
    const icp = createDevChain({ password: 'x', signerPolicies: ['2.16.76.1.2.1.51'] })
    const icpMaterial = loadPkcs12(icp.pkcs12, 'x')
    expect(icpMaterial.chainKind).toBe('ICP_BRASIL')
    const signing = options({ material: icpMaterial, visualMode: 'STAMP_AND_PAGE', validatorUrl: 'https://validar.iti.gov.br/?origem=razao' })
    const out = await signPdf(await makePdf([{}]), signing)
    const path = join(dir, 'icp-words.pdf')
    await writeFile(path, out.pdf)
    const { stdout } = await run('pdftotext', ['-f', '2', '-l', '2', '-enc', 'UTF-8', path, '-'])
    expect(stdout).toContain('assinado digitalmente com certificado ICP-Brasil')
    expect(stdout).not.toContain('TESTE, sem validade')
    expect(await qrOnPage(path, 2)).toBe(signing.validatorUrl)
    expect(stampTexts(await PDFDocument.load(out.pdf))[0]).toContain('Assinatura PAdES-B ICP-Brasil - Identificador')
  })

  it('calls a chain ICP-Brasil when it reaches a configured ICP-Brasil root, and any other chain "fora da ICP-Brasil", without a QR code', async () => {
    const other = createDevChain({ password: 'x' })
    // Our development chain stands here for a configured root: only the configuration makes it ICP-Brasil.
    expect(loadPkcs12(other.pkcs12, 'x', [], [new X509Certificate(other.root.certPem)]).chainKind).toBe('ICP_BRASIL')
    expect(loadPkcs12(other.pkcs12, 'x').chainKind).toBe('DEVELOPMENT')
    const start = new Date(Date.now() - 3_600_000)
    const root = issueCertificate({ kind: 'root', commonName: 'AC RAIZ DA EMPRESA', notBefore: start, notAfter: new Date(start.getTime() + 86_400_000) })
    const leaf = issueCertificate({ kind: 'signer', commonName: 'EMPRESA PROPRIA LTDA:11222333000181', issuer: root, notBefore: start, notAfter: new Date(start.getTime() + 86_400_000) })
    const own = loadPkcs12(toPkcs12(leaf, [root], 'x'), 'x')
    expect(own.chainKind).toBe('OTHER')
    const out = await signPdf(await makePdf([{}]), options({ material: own, visualMode: 'STAMP_AND_PAGE' }))
    const path = join(dir, 'other-words.pdf')
    await writeFile(path, out.pdf)
    const { stdout } = await run('pdftotext', ['-f', '2', '-l', '2', '-enc', 'UTF-8', path, '-'])
    expect(stdout.replace(/\s+/g, ' ')).toContain('certificado fora da ICP-Brasil, emitido por AC RAIZ DA EMPRESA')
    expect(await qrOnPage(path, 2)).toBeUndefined()
    expect(stampTexts(await PDFDocument.load(out.pdf))[0]).toContain('Assinatura PAdES-B - certificado fora da ICP-Brasil - Identificador')
  })
})

describe.skipIf(!tools)('input shapes', () => {
  it('signs a file with a cross-reference stream and object streams, answering with an xref stream', async () => {
    const input = await withObjectStreams(dir, await makePdf([{}, {}]), 'objstm')
    expect(Buffer.from(input).toString('latin1')).toContain('/ObjStm')
    const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
    await expectPades(out.pdf, 'objstm-signed')
    const update = Buffer.from(out.pdf.subarray(input.length)).toString('latin1')
    expect(update).toContain('/Type /XRef')
    expect(update).not.toMatch(/^xref$/m)
  })

  it('signs a file pdf-lib wrote with object streams', async () => {
    const input = await makePdf([{}], { objectStreams: true })
    await expectPades((await signPdf(input, options({ visualMode: 'STAMP_ONLY' }))).pdf, 'pdflib-objstm')
  })

  it('keeps existing form fields and annotations and adds its own field beside them', async () => {
    const input = await makeFormPdf()
    const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
    await expectPades(out.pdf, 'form')
    const doc = await PDFDocument.load(out.pdf)
    const names = doc.getForm().getFields().map((f) => f.getName())
    expect(names).toEqual(expect.arrayContaining(['cliente.nome', 'cliente.aceite', 'Assinatura1']))
    expect(doc.getForm().getTextField('cliente.nome').getText()).toBe('Cliente Exemplo')
    const annots = doc.getPages()[0]!.node.Annots()!.asArray().map((a) => doc.context.lookup(a)!.toString())
    expect(annots.some((a) => a.includes('/Subtype /Link'))).toBe(true)
  })

  it('handles rotated pages (90/180/270/-90) and odd sizes with a CropBox off the origin', async () => {
    const input = await makePdf([
      { rotate: 180 }, { rotate: 270 }, { rotate: -90 }, { size: [200, 3000] }, { size: [3000, 150], rotate: 90 },
      { size: [90, 90] }, { size: [612, 792], crop: [50, 60, 400, 500] }
    ])
    const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
    await expectPades(out.pdf, 'odd')
  })

  it('signs a hybrid-reference file (/XRefStm) with a classic update that keeps the hidden objects reachable, twice', async () => {
    const input = makeHybridPdf()
    expect(Buffer.from(input).toString('latin1')).toMatch(/\/XRefStm \d+/)
    const first = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
    await expectPades(first.pdf, 'hybrid-signed')
    const update = Buffer.from(first.pdf.subarray(input.length)).toString('latin1')
    expect(update).toMatch(/^xref$/m)
    // The AcroForm lived in the object stream; the new field list replaces it in the update.
    const doc = await PDFDocument.load(first.pdf)
    expect(doc.getForm().getFields().map((f) => f.getName())).toEqual(['Assinatura1'])
    const { stdout } = await run('pdftotext', ['-f', '1', '-l', '1', join(dir, 'hybrid-signed.pdf'), '-'])
    expect(stdout).toContain('Arquivo com referencias hibridas')
    const second = await signPdf(first.pdf, options({ visualMode: 'STAMP_ONLY' }))
    const check = await checkSignedPdf(dir, second.pdf, pki.rootPemPath, 'hybrid-twice')
    expect(check.signatures).toHaveLength(2)
  })

  it('signs a file that already has an unsigned incremental update, building on its newest objects', async () => {
    const base = Buffer.from(await makePdf([{}]))
    const opened = await PDFDocument.load(base)
    const page = opened.getPages()[0]!
    const pageNumber = page.ref.objectNumber
    // Revision 2, written by hand: a new content stream for the page and the page itself again.
    const text = 'BT /Helv 18 Tf 72 700 Td (Texto da segunda revisao) Tj ET'
    const size = Number(/\/Size (\d+)/.exec(base.toString('latin1'))![1])
    const pageBody = `<< /Type /Page /Parent ${page.node.get(PDFName.of('Parent'))!.toString()} /MediaBox [0 0 595.28 841.89] ` +
      `/Resources << /Font << /Helv ${size + 1} 0 R >> >> /Contents ${size} 0 R >>`
    const objects = [
      `${pageNumber} 0 obj\n${pageBody}\nendobj\n`,
      `${size} 0 obj\n<< /Length ${text.length} >>\nstream\n${text}\nendstream\nendobj\n`,
      `${size + 1} 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n`
    ]
    let body = ''
    const offsets: number[] = []
    for (const o of objects) { offsets.push(base.length + body.length); body += o }
    const row = (o: number): string => `${String(o).padStart(10, '0')} 00000 n\r\n`
    const xrefAt = base.length + body.length
    const xref = `xref\n${pageNumber} 1\n${row(offsets[0]!)}${size} 2\n${row(offsets[1]!)}${row(offsets[2]!)}` +
      `trailer\n<< /Size ${size + 2} /Root ${/\/Root (\d+ \d+ R)/.exec(base.toString('latin1'))![1]} /Prev ${findStartXrefOf(base)} >>\nstartxref\n${xrefAt}\n%%EOF\n`
    const twoRevisions = Buffer.concat([base, Buffer.from(body + xref, 'latin1')])
    const out = await signPdf(twoRevisions, options({ visualMode: 'STAMP_ONLY' }))
    await expectPades(out.pdf, 'two-revisions')
    const { stdout } = await run('pdftotext', [join(dir, 'two-revisions.pdf'), '-'])
    expect(stdout).toContain('Texto da segunda revisao')
    expect(stdout).not.toContain('conteúdo de teste')
  })

  it('keeps bytes after the final %%EOF as they are but never reads objects from them', async () => {
    const pdf = Buffer.from(await makePdf([{}]))
    // If this were parsed, the document would lose its only page.
    const junk = Buffer.from('<html>2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n</html>', 'latin1')
    const input = Buffer.concat([pdf, junk])
    const out = await signPdf(input, options({ visualMode: 'STAMP_ONLY' }))
    expect(Buffer.from(out.pdf.subarray(0, input.length)).equals(input)).toBe(true)
    await expectPades(out.pdf, 'junk-after-eof')
    expect((await PDFDocument.load(out.pdf)).getPageCount()).toBe(1)
  })

  it('signs a linearized file (qpdf --linearize) as an update after the whole file', async () => {
    const input = await qpdf(dir, await makePdf([{}, {}]), ['--linearize'], 'linear')
    await expectPades((await signPdf(input, options({ visualMode: 'STAMP_ONLY' }))).pdf, 'linear-signed')
  })
})

describe.skipIf(!tools)('a PDF signed twice', () => {
  it('keeps the first signature valid when a second is appended (classic and xref-stream files)', async () => {
    for (const [name, input] of [['twice-table', await makePdf([{}])], ['twice-stream', await withObjectStreams(dir, await makePdf([{}]), 'twice-src')]] as const) {
      const first = await signPdf(input, options({ visualMode: 'STAMP_ONLY' }))
      const second = await signPdf(first.pdf, options({ visualMode: 'STAMP_AND_PAGE' }))
      expect(Buffer.from(second.pdf.subarray(0, first.pdf.length)).equals(first.pdf)).toBe(true)
      const check = await checkSignedPdf(dir, second.pdf, pki.rootPemPath, name)
      expect(check.signatures).toHaveLength(2)
      check.signatures.forEach((sig, i) => expect(padesAttributeProblems(check.attributes[i]!, sig.dictionary)).toEqual([]))
      expect(check.pdfsig.signatures[0]!.totalDocument).toBe(false)
      // The first revision on its own, as poppler recommends checking each signed revision.
      const firstRevision = join(dir, `${name}-rev1.pdf`)
      const [, , c, d] = check.signatures[0]!.byteRange
      await writeFile(firstRevision, second.pdf.subarray(0, c + d))
      const rev1 = await pdfsig(firstRevision)
      expect(rev1.signatures[0]).toMatchObject({ valid: true, totalDocument: true })
      const doc = await PDFDocument.load(second.pdf)
      expect(doc.getForm().getFields().map((f) => f.getName())).toEqual(['Assinatura1', 'Assinatura2'])
    }
  })
})

describe.skipIf(!tools)('refusals', () => {
  it('refuses, before reading the PDF, material whose certificate may not sign (keyUsage without digitalSignature or nonRepudiation)', async () => {
    const misused = { ...material, keyUsage: ['keyEncipherment' as const] }
    await expect(signPdf(Buffer.from('not even a PDF'), options({ material: misused }))).rejects.toMatchObject({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/key usage/) })
  })

  it('refuses a non-PDF, a truncated PDF and a PDF without pages as SIGN_PDF_INVALID on pdfBase64', async () => {
    const good = await makePdf([{}])
    for (const bad of [Buffer.from('hello world'), good.subarray(0, good.length - 200), Buffer.from('%PDF-1.7\n%%EOF\n')]) {
      await expect(signPdf(bad, options())).rejects.toMatchObject({ code: 'SIGN_PDF_INVALID', field: 'pdfBase64' })
    }
  })

  it('refuses an encrypted PDF it cannot change: a user password is needed, or the owner forbids changes (SIGN_PDF_UNSUPPORTED)', async () => {
    const plain = await makePdf([{}])
    const locked = await qpdf(dir, plain, ['--encrypt', '', 'dono', '256', '--modify=none', '--'], 'locked')
    await expect(signPdf(locked, options())).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(/opens without a password; its owner's permissions do not allow/) })
    const open = await qpdf(dir, plain, ['--encrypt', 'usuario', 'dono', '256', '--'], 'protected')
    await expect(signPdf(open, options())).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(/needs a password/) })
  })

  async function certified (level: number): Promise<Uint8Array> {
    const doc = await PDFDocument.load(await makePdf([{}]))
    const { context } = doc
    const certification = context.register(context.obj({
      Type: 'Sig', Filter: 'Adobe.PPKLite', SubFilter: 'ETSI.CAdES.detached',
      Reference: [{ Type: 'SigRef', TransformMethod: 'DocMDP', TransformParams: { Type: 'TransformParams', P: level, V: '1.2' } }]
    }))
    doc.catalog.set(PDFName.of('Perms'), context.obj({ DocMDP: certification }))
    return await doc.save({ useObjectStreams: false })
  }

  it('refuses a certified PDF whose DocMDP permission (P=1) allows no change as SIGN_PDF_UNSUPPORTED', async () => {
    await expect(signPdf(await certified(1), options())).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(/DocMDP/) })
  })

  it('on a certified PDF adds only what its DocMDP level allows: P=2 no stamp, P=3 stamps but no page', async () => {
    await expect(signPdf(await certified(2), options({ visualMode: 'STAMP_ONLY' }))).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED' })
    await expect(signPdf(await certified(3), options({ visualMode: 'PAGE_ONLY' }))).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED' })
    expect((await signPdf(await certified(2), options({ visualMode: 'NONE' }))).pdf.length).toBeGreaterThan(0)
    expect((await signPdf(await certified(3), options({ visualMode: 'STAMP_ONLY' }))).pdf.length).toBeGreaterThan(0)
  })

  it('accepts NUL and whitespace padding after the final %%EOF', async () => {
    const padded = Buffer.concat([Buffer.from(await makePdf([{}])), Buffer.from('\r\n\0\0\0\n')])
    await expectPades((await signPdf(padded, options())).pdf, 'padded')
  })

  it('refuses a PDF followed by more than 2 KiB of other data, saying so', async () => {
    const input = Buffer.concat([Buffer.from(await makePdf([{}])), Buffer.alloc(4096, 'x')])
    await expect(signPdf(input, options())).rejects.toMatchObject({ code: 'SIGN_PDF_INVALID', field: 'pdfBase64', message: expect.stringMatching(/no %%EOF in its last 2 KiB/) })
  })

  it('refuses a PDF that already holds another tool\'s unfilled signature placeholder as SIGN_PDF_UNSUPPORTED', async () => {
    const doc = await PDFDocument.load(await makePdf([{}]))
    const { context } = doc
    doc.catalog.set(PDFName.of('Orphan'), context.register(context.obj({ Type: 'Sig', ByteRange: [0, PDFName.of('**********'), PDFName.of('**********'), PDFName.of('**********')] })))
    const input = await doc.save({ useObjectStreams: false })
    await expect(signPdf(input, options())).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(/placeholder/) })
  })
})
