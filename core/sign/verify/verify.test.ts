/**
 * Verification end to end in core: our own signatures in every visual mode, PAdES-B and
 * -T (a real RFC 3161 responder on loopback) and with a policy; @signpdf's signatures;
 * real signed PDFs from other projects (fixtures/pdf/signed/README.md: pyHanko's PAdES-B-LTA
 * with a DSS, a certification, coverage anomalies); and tampered files: a byte changed in
 * the signed range, an update appended after the signature (a page, an annotation under
 * DocMDP), a replaced certificate, a time-stamp over other bytes.
 */
import { X509Certificate, createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as asn1js from 'asn1js'
import * as pkijs from 'pkijs'
import { PDFDocument, PDFName, PDFNumber, PDFString } from 'pdf-lib'
import type { PDFArray, PDFDict, PDFRef } from 'pdf-lib'
import { SignPdf } from '@signpdf/signpdf'
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib'
import { P12Signer } from '@signpdf/signer-p12'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestPki } from '../../../fixtures/pdf/pki.js'
import type { TestPki } from '../../../fixtures/pdf/pki.js'
import { makeFormPdf, makePdf } from '../../../fixtures/pdf/samples.js'
import { startLocalTsa } from '../../../fixtures/pdf/tsa-server.js'
import type { LocalTsa } from '../../../fixtures/pdf/tsa-server.js'
import { createDevChain, loadPkcs12, signPdf, VISUAL_MODES } from '../index.js'
import type { SigningMaterial, SignPdfOptions } from '../index.js'
import { requestTimestamp } from '../tsa.js'
import { loadTrustStore, shippedAnchorsDir, verifyPdf, TrustStoreError } from './index.js'
import type { TrustAnchor, VerificationReport } from './index.js'

const SIGNED = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'pdf', 'signed')
let dir: string
let pki: TestPki
let material: SigningMaterial
let tsa: LocalTsa
/** The test signer's root and the test TSA's root: what a user of this PKI would trust. */
let anchors: TrustAnchor[]
let twoPages: Uint8Array

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-verify-'))
  pki = await createTestPki(dir)
  material = loadPkcs12(pki.signer.pkcs12, pki.password)
  tsa = await startLocalTsa({ dir, certPath: pki.tsa.certPath, keyPath: pki.tsa.keyPath, rootPemPath: pki.tsa.rootPemPath })
  anchors = [{ cert: new X509Certificate(pki.signer.root.certPem), source: 'signer-root.pem' }, { cert: new X509Certificate(pki.tsa.root.certPem), source: 'tsa-root.pem' }]
  twoPages = await makePdf([{}, { rotate: 90 }])
})
afterAll(async () => {
  await tsa.close()
  await rm(dir, { recursive: true, force: true })
})

function options (over: Partial<SignPdfOptions> = {}): SignPdfOptions {
  return { material, visualMode: 'NONE', validatorUrl: 'https://validar.iti.gov.br/', timeZone: 'America/Sao_Paulo', documentIdentifier: 'RZ-VERIFY-0001', signedAt: new Date(), ...over }
}

const only = (report: VerificationReport): VerificationReport['signatures'][number] => {
  expect(report.signatures).toHaveLength(1)
  return report.signatures[0]!
}

/** Appends an incremental update (classic cross-reference table) holding the objects `change` returns, as pdf-lib serializes them. */
async function appendUpdate (pdf: Uint8Array, change: (doc: PDFDocument) => PDFRef[]): Promise<Buffer> {
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true })
  const refs = change(doc)
  const text = Buffer.from(pdf).toString('latin1')
  const prev = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)?.[1])
  let body = Buffer.from(pdf).at(-1) === 0x0a ? '' : '\n'
  const offsets: Array<[number, number]> = []
  for (const ref of refs) {
    offsets.push([ref.objectNumber, pdf.length + Buffer.byteLength(body, 'latin1')])
    body += `${ref.objectNumber} 0 obj\n${doc.context.lookup(ref)!.toString()}\nendobj\n`
  }
  const xrefAt = pdf.length + Buffer.byteLength(body, 'latin1')
  body += 'xref\n' + offsets.map(([num, off]) => `${num} 1\n${String(off).padStart(10, '0')} 00000 n \n`).join('')
  body += `trailer\n<< /Size ${doc.context.largestObjectNumber + 1} /Root ${doc.context.trailerInfo.Root!.toString()} /Prev ${prev} >>\nstartxref\n${xrefAt}\n%%EOF\n`
  return Buffer.concat([pdf, Buffer.from(body, 'latin1')])
}

/** A new blank page at the end of the page tree. */
const addPage = (doc: PDFDocument): PDFRef[] => {
  const pagesRef = doc.catalog.get(PDFName.of('Pages')) as PDFRef
  const pages = doc.context.lookup(pagesRef) as PDFDict
  const page = doc.context.register(doc.context.obj({ Type: 'Page', Parent: pagesRef, MediaBox: [0, 0, 595, 842] }))
  ;(pages.get(PDFName.of('Kids')) as PDFArray).push(page)
  pages.set(PDFName.of('Count'), PDFNumber.of((pages.get(PDFName.of('Count')) as PDFNumber).asNumber() + 1))
  return [page, pagesRef]
}

/** A sticky-note annotation on the first page. */
const addNote = (doc: PDFDocument): PDFRef[] => {
  const page = doc.getPages()[0]!
  const note = doc.context.register(doc.context.obj({ Type: 'Annot', Subtype: 'Text', Rect: [10, 10, 30, 30], Contents: PDFString.of('nota depois da assinatura') }))
  page.node.set(PDFName.of('Annots'), doc.context.obj([...(page.node.Annots()?.asArray() ?? []), note]))
  return [note, page.ref]
}

/** The signature's CMS re-encoded by `edit` and written back into its /Contents (same room, zero padded). */
function editCms (pdf: Uint8Array, edit: (signedData: pkijs.SignedData) => void): Buffer {
  const bytes = Buffer.from(pdf)
  const text = bytes.toString('latin1')
  const m = [...text.matchAll(/\/ByteRange\s*\[\s*0\s+(\d+)\s+(\d+)\s+\d+\s*\]/g)].at(-1)!
  const [gapStart, gapEnd] = [Number(m[1]), Number(m[2])]
  const hex = text.slice(gapStart + 1, gapEnd - 1)
  const der = Buffer.from(hex, 'hex')
  const info = pkijs.ContentInfo.fromBER(new Uint8Array(der.subarray(0, asn1js.fromBER(new Uint8Array(der)).offset)))
  const signedData = new pkijs.SignedData({ schema: info.content })
  edit(signedData)
  const out = Buffer.from(new pkijs.ContentInfo({ contentType: info.contentType, content: signedData.toSchema(true) }).toSchema().toBER()).toString('hex')
  expect(out.length).toBeLessThanOrEqual(hex.length)
  bytes.write(out.padEnd(hex.length, '0'), gapStart + 1, 'latin1')
  return bytes
}

describe('our own signatures', () => {
  it.each(VISUAL_MODES.flatMap((mode) => [[mode, 'B'], [mode, 'T']] as const))('%s PAdES-%s: VALID against the test roots, with the signer, chain, level and time', async (mode, level) => {
    const withTsa = level === 'T'
    const signed = await signPdf(twoPages, options({ visualMode: mode, tsa: withTsa ? { url: tsa.url, timeoutMs: 10_000 } : undefined }))
    const report = await verifyPdf(signed.pdf, { anchors })
    const s = only(report)
    expect(s.problems).toEqual([])
    expect(report.verdict).toBe('VALID')
    expect(s).toMatchObject({
      kind: 'signature',
      subFilter: 'ETSI.CAdES.detached',
      verdict: 'VALID',
      integrity: { coverage: 'WHOLE_FILE', digestAlgorithm: 'sha256', digestMatches: true, signatureValid: true, signingCertificateMatches: true },
      chain: { trusted: true, anchor: 'signer-root.pem' },
      validity: { atSigningTime: true, now: true, signingTimeSource: withTsa ? 'SIGNATURE_TIMESTAMP' : 'CLAIMED' },
      pades: { level: withTsa ? 'B-T' : 'B-B', forbiddenAttributes: [] },
      changesAfter: { level: 'NONE' }
    })
    expect(s.signer).toMatchObject({ name: material.identity.signerName, document: material.identity.signerDocument, documentKind: 'CNPJ', icpBrasil: { cnpj: material.identity.signerDocument } })
    expect(s.chain.certificates.map((c) => c.subject)).toHaveLength(3)
    expect(report.pageCount).toBe(mode === 'PAGE_ONLY' || mode === 'STAMP_AND_PAGE' ? 3 : 2)
    if (withTsa) {
      expect(s.timestamp).toMatchObject({ valid: true, trusted: true, authority: expect.stringContaining('ACT TESTE LOCAL') })
      expect(Math.abs(s.timestamp!.time!.getTime() - signed.timestampTime!.getTime())).toBeLessThan(1000)
    } else {
      expect(s.timestamp).toBeNull()
    }
  })

  it('names the ICP-Brasil policy it carries and checks its hash against the published ones', async () => {
    // AD-RB v1.3: the signPolicyHash the policy file declares about itself.
    const hash = Buffer.from('23E4BE4B9B362172E4EBB0E72B86A133ECE5AAD843D8651C6E38A0BA3F08FC60', 'hex')
    const s = only(await verifyPdf((await signPdf(twoPages, options({ policy: { oid: '2.16.76.1.7.1.11.1.3', hash, uri: 'http://politicas.icpbrasil.gov.br/PA_PAdES_AD_RB_v1_3.der' } }))).pdf, { anchors }))
    expect(s.pades.policy).toMatchObject({ oid: '2.16.76.1.7.1.11.1.3', name: 'AD-RB v1.3', publishedHash: true, hashAlgorithm: 'sha256', uri: 'http://politicas.icpbrasil.gov.br/PA_PAdES_AD_RB_v1_3.der' })
    const wrong = only(await verifyPdf((await signPdf(twoPages, options({ policy: { oid: '2.16.76.1.7.1.11.1.3', hash: Buffer.alloc(32, 7) } }))).pdf, { anchors }))
    expect(wrong.pades.policy?.publishedHash).toBe(false)
    expect(wrong.notes.join(' ')).toContain('not one AD-RB v1.3 publishes')
  })

  it('is INDETERMINATE against the shipped ICP-Brasil roots: the development chain is trusted nowhere', async () => {
    const shipped = loadTrustStore(shippedAnchorsDir())
    const report = await verifyPdf((await signPdf(twoPages, options())).pdf, { anchors: shipped })
    const s = only(report)
    expect(report.verdict).toBe('INDETERMINATE')
    expect(s.integrity).toMatchObject({ digestMatches: true, signatureValid: true })
    expect(s.chain.trusted).toBe(false)
    expect(s.problems.join(' ')).toMatch(/AC RAIZ RAZAO DESENVOLVIMENTO.*not in the trust store/)
  })

  it('a second signature adding stamps keeps the first VALID and lists what the update added', async () => {
    const first = await signPdf(twoPages, options())
    const second = await signPdf(first.pdf, options({ visualMode: 'STAMP_ONLY', documentIdentifier: 'RZ-VERIFY-0002' }))
    const report = await verifyPdf(second.pdf, { anchors })
    expect(report.verdict).toBe('VALID')
    const [older, newer] = report.signatures
    expect(older!.integrity.coverage).toBe('REVISION')
    expect(older!.changesAfter).toMatchObject({ updates: 1, pagesAdded: 0, annotationsAddedOrChanged: 2, signaturesAdded: 1, level: 'ANNOTATIONS' })
    expect(newer!.changesAfter.level).toBe('NONE')
  })

  it('a second signature asked for with a signature page keeps the first VALID: no page is added, and the answer says why', async () => {
    const first = await signPdf(twoPages, options({ visualMode: 'STAMP_AND_PAGE' }))
    const second = await signPdf(first.pdf, options({ visualMode: 'STAMP_AND_PAGE', documentIdentifier: 'RZ-VERIFY-0003' }))
    expect(second.warnings.join(' ')).toMatch(/already signed: a page added after a signature invalidates it/)
    const report = await verifyPdf(second.pdf, { anchors })
    // Before, the second signature's page made the first INVALID here (and for pyHanko and Adobe).
    expect(report.pageCount).toBe(3)
    expect(report.signatures.map((s) => s.verdict)).toEqual(['VALID', 'VALID'])
    expect(report.signatures[0]!.changesAfter).toMatchObject({ pagesAdded: 0, signaturesAdded: 1 })
  })
})

describe('tampered files', () => {
  it('a byte changed inside the signed range: INVALID, the digest no longer matches', async () => {
    const signed = Buffer.from((await signPdf(twoPages, options())).pdf)
    signed[300] = signed[300] === 0x20 ? 0x21 : 0x20
    const s = only(await verifyPdf(signed, { anchors }))
    expect(s.verdict).toBe('INVALID')
    expect(s.integrity).toMatchObject({ digestMatches: false, signatureValid: true })
    expect(s.problems[0]).toMatch(/do not match the signature's message digest/)
  })

  it('an update appended after the signature adding a page: INVALID, the page counted', async () => {
    const signed = await signPdf(twoPages, options())
    const tampered = await appendUpdate(signed.pdf, addPage)
    const report = await verifyPdf(tampered, { anchors })
    const s = only(report)
    expect(report.pageCount).toBe(3)
    expect(s.integrity).toMatchObject({ coverage: 'REVISION', digestMatches: true, signatureValid: true })
    expect(s.changesAfter).toMatchObject({ updates: 1, pagesAdded: 1, level: 'OTHER' })
    expect(s.verdict).toBe('INVALID')
    expect(s.problems.join(' ')).toContain('1 page(s) added')
  })

  it('an annotation appended after an approval signature is allowed and reported', async () => {
    const signed = await signPdf(twoPages, options())
    const s = only(await verifyPdf(await appendUpdate(signed.pdf, addNote), { anchors }))
    expect(s.verdict).toBe('VALID')
    expect(s.changesAfter).toMatchObject({ annotationsAddedOrChanged: 1, level: 'ANNOTATIONS' })
  })

  it('a form field\'s value changed after the signature is seen (form filling), though only a string changed', async () => {
    const signed = await signPdf(await makeFormPdf(), options())
    const filled = await appendUpdate(signed.pdf, (doc) => {
      const field = doc.getForm().getFields().find((f) => f.acroField.dict.get(PDFName.of('FT'))?.toString() === '/Tx')!
      field.acroField.dict.set(PDFName.of('V'), PDFString.of('valor trocado depois'))
      return [field.ref]
    })
    const s = only(await verifyPdf(filled, { anchors }))
    expect(s.changesAfter).toMatchObject({ formFieldsAddedOrChanged: 1, level: 'FORM_FILLING' })
    expect(s.verdict).toBe('VALID')
  })

  it('a replaced certificate: INVALID', async () => {
    const other = createDevChain({ password: 'outra' })
    const otherLeaf = Buffer.from(forgeDer(other.signer.certPem))
    const tampered = editCms((await signPdf(twoPages, options())).pdf, (sd) => {
      sd.certificates![0] = pkijs.Certificate.fromBER(new Uint8Array(otherLeaf))
    })
    const s = only(await verifyPdf(tampered, { anchors }))
    expect(s.verdict).toBe('INVALID')
    expect(s.integrity.signatureValid).toBe(false)
    expect(s.problems.join(' ')).toMatch(/certificate is not in the signature|does not verify/)
  })

  it('a replaced certificate with the same issuer and serial is caught by the signing-certificate attribute', async () => {
    const tampered = editCms((await signPdf(twoPages, options())).pdf, (sd) => {
      // The same certificate with one byte of its signature changed: sid still matches, its hash does not.
      const der = Buffer.from(material.chain[0]!)
      der[der.length - 3] = der[der.length - 3]! ^ 0xff
      sd.certificates![0] = pkijs.Certificate.fromBER(new Uint8Array(der))
    })
    const s = only(await verifyPdf(tampered, { anchors }))
    expect(s.verdict).toBe('INVALID')
    expect(s.integrity).toMatchObject({ digestMatches: true, signatureValid: true, signingCertificateMatches: false })
    expect(s.problems.join(' ')).toContain('certificate was replaced')
  })

  it('a time-stamp issued over other bytes: INVALID, the imprint does not match', async () => {
    const signed = await signPdf(twoPages, options({ tsa: { url: tsa.url, timeoutMs: 10_000 } }))
    const foreign = await requestTimestamp(createHash('sha256').update('outros bytes').digest(), { url: tsa.url, timeoutMs: 10_000 })
    const tampered = editCms(signed.pdf, (sd) => {
      sd.signerInfos[0]!.unsignedAttrs!.attributes[0]!.values = [asn1js.fromBER(new Uint8Array(foreign.token)).result]
    })
    const s = only(await verifyPdf(tampered, { anchors }))
    expect(s.integrity).toMatchObject({ digestMatches: true, signatureValid: true })
    expect(s.timestamp).toMatchObject({ valid: false })
    expect(s.verdict).toBe('INVALID')
    expect(s.problems.join(' ')).toContain('messageImprint mismatch')
    expect(s.validity.signingTimeSource).toBe('CLAIMED')
  })

  it('a file that is not a PDF is refused; a PDF without signatures is UNSIGNED', async () => {
    await expect(verifyPdf(Buffer.from('hello'), { anchors })).rejects.toMatchObject({ code: 'SIGN_PDF_INVALID' })
    expect((await verifyPdf(twoPages, { anchors })).verdict).toBe('UNSIGNED')
  })
})

describe('@signpdf output', () => {
  it('pdflibAddPlaceholder + P12Signer with our test certificate: VALID, adbe.pkcs7.detached (no PAdES level), signing-time allowed there', async () => {
    const doc = await PDFDocument.load(twoPages)
    pdflibAddPlaceholder({ pdfDoc: doc, reason: 'teste', contactInfo: 'teste@example.com', name: 'Teste', location: 'Porto Alegre', signatureLength: 16_384 })
    const prepared = Buffer.from(await doc.save({ useObjectStreams: false }))
    const signed = await new SignPdf().sign(prepared, new P12Signer(pki.signer.pkcs12, { passphrase: pki.password }))
    const s = only(await verifyPdf(signed, { anchors }))
    expect(s.problems).toEqual([])
    expect(s).toMatchObject({ verdict: 'VALID', subFilter: 'adbe.pkcs7.detached', pades: { level: null, forbiddenAttributes: [] }, integrity: { signingCertificateMatches: null } })
    expect(s.notes.join(' ')).toContain('Not a PAdES baseline signature')
  })

  it('node-signpdf\'s own signed-twice.pdf: both signatures intact, INDETERMINATE (self-signed certificates no trust store holds), the second listed as a change after the first', async () => {
    const pdf = await readFile(join(SIGNED, 'signpdf-signed-twice.pdf'))
    const untrusted = await verifyPdf(pdf, { anchors })
    expect(untrusted.signatures.map((s) => [s.integrity.digestMatches, s.integrity.signatureValid, s.verdict])).toEqual([[true, true, 'INDETERMINATE'], [true, true, 'INDETERMINATE']])
    expect(untrusted.signatures[0]!.changesAfter).toMatchObject({ signaturesAdded: 1, level: 'FORM_FILLING' })
  })
})

describe('signed PDFs from pyHanko', () => {
  let pyhanko: TrustAnchor[]
  beforeAll(async () => {
    pyhanko = [{ cert: new X509Certificate(await readFile(join(SIGNED, 'pyhanko-root.pem'))), source: 'pyhanko-root.pem' }]
  })

  it('PAdES-B-LTA with a DSS (OCSP, CRL) and a document time-stamp, then a B-LT signature: all VALID, levels read', async () => {
    const report = await verifyPdf(await readFile(join(SIGNED, 'pades-lta-dss-indirect-arrs-test-2.pdf')), { anchors: pyhanko })
    expect(report.verdict).toBe('VALID')
    expect(report.securityStore).toMatchObject({ ocspResponses: 2, crls: 1 })
    expect(report.signatures.map((s) => [s.kind, s.verdict, s.pades.level])).toEqual([
      ['signature', 'VALID', 'B-LTA'],
      ['document-timestamp', 'VALID', null],
      ['signature', 'VALID', 'B-LT']
    ])
    const first = report.signatures[0]!
    expect(first.revocation.checked.map((c) => [c.status, c.source])).toEqual([['GOOD', 'OCSP'], ['GOOD', 'CRL']])
    // The signer's certificate expired in 2022: the time-stamp proves it signed in time.
    expect(first.validity).toMatchObject({ atSigningTime: true, now: false, signingTimeSource: 'SIGNATURE_TIMESTAMP' })
    expect(first.changesAfter).toMatchObject({ documentTimestampsAdded: 1, securityStoreAdded: true, level: 'FORM_FILLING' })
  })

  it('the same before the later signature: the DSS and the document time-stamp are LTA updates, which even DocMDP P=1 allows', async () => {
    const report = await verifyPdf(await readFile(join(SIGNED, 'pades-lta-dss-indirect-arrs-test.pdf')), { anchors: pyhanko })
    expect(report.signatures.map((s) => [s.kind, s.verdict, s.pades.level])).toEqual([['signature', 'VALID', 'B-LTA'], ['document-timestamp', 'VALID', null]])
    expect(report.signatures[0]!.changesAfter).toMatchObject({ updates: 2, documentTimestampsAdded: 1, securityStoreAdded: true, formFieldsAddedOrChanged: 0, level: 'LTA_UPDATES' })
    expect(report.signatures[1]!.changesAfter).toMatchObject({ securityStoreAdded: true, level: 'LTA_UPDATES' })
  })

  it('without the signature time-stamp an expired certificate is INDETERMINATE now, VALID at a time inside its validity', async () => {
    const pdf = await readFile(join(SIGNED, 'pades-with-old-style-signing-cert-attr.pdf'))
    const now = only(await verifyPdf(pdf, { anchors: pyhanko }))
    expect(now.verdict).toBe('INDETERMINATE')
    expect(now.problems.join(' ')).toContain('no time-stamp proves')
    const then = only(await verifyPdf(pdf, { anchors: pyhanko, now: new Date('2020-12-01T00:00:00Z') }))
    expect(then).toMatchObject({ verdict: 'VALID', pades: { level: 'B-B' }, integrity: { signingCertificateMatches: true } })
  })

  it('a signer named by its subject key identifier', async () => {
    const s = only(await verifyPdf(await readFile(join(SIGNED, 'sig-with-ski-sid.pdf')), { anchors: pyhanko, now: new Date('2020-12-01T00:00:00Z') }))
    expect(s.verdict).toBe('VALID')
  })

  it('a certification signature (DocMDP P=1): VALID alone, INVALID once an annotation is appended', async () => {
    const pdf = await readFile(join(SIGNED, 'certified-with-indirect-refs-in-dir.pdf'))
    const at = new Date('2020-06-01T00:00:00Z')
    const alone = only(await verifyPdf(pdf, { anchors: pyhanko, now: at }))
    expect(alone).toMatchObject({ verdict: 'VALID', docMdp: 1 })
    const changed = only(await verifyPdf(await appendUpdate(pdf, addNote), { anchors: pyhanko, now: at }))
    expect(changed.changesAfter.level).toBe('ANNOTATIONS')
    expect(changed.verdict).toBe('INVALID')
    expect(changed.problems.join(' ')).toContain('DocMDP P=1')
  })

  it('coverage and structure anomalies: INVALID', async () => {
    const tail = only(await verifyPdf(await readFile(join(SIGNED, 'tail-uncovered.pdf')), { anchors: pyhanko }))
    expect(tail.integrity.coverage).toBe('UNCLEAR')
    expect(tail.verdict).toBe('INVALID')
    const econtent = only(await verifyPdf(await readFile(join(SIGNED, 'pdf-sig-with-econtent.pdf')), { anchors: pyhanko }))
    expect(econtent.verdict).toBe('INVALID')
    expect(econtent.problems.join(' ')).toContain('not detached')
  })
})

describe('trust store', () => {
  it('ships the four ICP-Brasil roots, pinned by fingerprint', () => {
    const shipped = loadTrustStore(shippedAnchorsDir())
    expect(shipped.map((a) => [a.source, a.cert.fingerprint256])).toEqual([
      ['ICP-Brasilv10.pem', '6E:0B:FF:06:9A:26:99:4C:15:DE:2C:48:88:CC:54:AF:84:88:2E:54:95:B7:FB:F6:6B:E9:CC:FF:EC:74:89:F6'],
      ['ICP-Brasilv11.pem', '14:06:71:00:58:18:0F:A4:08:1A:AB:3F:24:6F:17:02:42:9C:55:2A:11:FA:31:43:B8:4C:88:CB:3A:B8:E5:E7'],
      ['ICP-Brasilv12.pem', 'D8:47:8E:37:CE:19:C6:90:CF:65:73:81:E6:8F:E6:00:E4:E1:A0:42:53:68:30:F0:68:47:E0:3E:55:4C:4B:01'],
      ['ICP-Brasilv5.pem', 'CA:A5:3F:C6:09:1C:69:51:88:7C:97:6E:37:8F:6E:F8:9A:A6:37:7C:55:D9:7B:64:75:42:2B:71:ED:7E:9B:17']
    ])
  })

  it('reads PEM and DER roots from a folder and refuses an intermediate, naming the file', async () => {
    const folder = join(dir, 'trust')
    await mkdir(folder)
    await writeFile(join(folder, 'root.pem'), pki.signer.root.certPem)
    await writeFile(join(folder, 'tsa.der'), new X509Certificate(pki.tsa.root.certPem).raw)
    await writeFile(join(folder, 'notes.txt'), 'ignored')
    expect(loadTrustStore(folder).map((a) => a.source)).toEqual(['root.pem', 'tsa.der'])
    await writeFile(join(folder, 'intermediate.pem'), pki.signer.intermediate.certPem)
    expect(() => loadTrustStore(folder)).toThrow(TrustStoreError)
    expect(() => loadTrustStore(folder)).toThrow(/intermediate\.pem .*not self-signed/)
  })
})

/** DER of a PEM certificate. */
function forgeDer (pem: string): Buffer {
  return new X509Certificate(pem).raw
}
