/**
 * Issue 13, items 1, 4 and 5, end to end on files made here: encrypted files that open
 * without a password (qpdf writes every revision), bytes before the header, and damaged
 * cross-reference data. Every output is judged by qpdf, pdfsig and OpenSSL
 * (fixtures/pdf/verify.ts); encrypted outputs are also decrypted by qpdf and read back.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream, PDFString, decodePDFRawStream } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestPki } from '../../fixtures/pdf/pki.js'
import type { TestPki } from '../../fixtures/pdf/pki.js'
import { makeFormPdf, makePdf, qpdf, withObjectStreams } from '../../fixtures/pdf/samples.js'
import { checkSignedPdf, findSignatures, padesAttributeProblems, pdfsig, toolsAvailable } from '../../fixtures/pdf/verify.js'
import type { FullCheck } from '../../fixtures/pdf/verify.js'
import { loadPkcs12 } from './certificate.js'
import type { SigningMaterial } from './certificate.js'
import { signPdf } from './sign-pdf.js'
import type { SignPdfOptions } from './sign-pdf.js'

const run = promisify(execFile)
let dir: string
let pki: TestPki
let material: SigningMaterial
let plain: Uint8Array

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-issue13-'))
  pki = await createTestPki(dir)
  material = loadPkcs12(pki.signer.pkcs12, pki.password)
  plain = await makePdf([{}, { rotate: 90 }])
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

let counter = 0
function options (over: Partial<SignPdfOptions> = {}): SignPdfOptions {
  counter++
  return {
    material, visualMode: 'NONE', validatorUrl: 'https://validar.iti.gov.br/', timeZone: 'America/Sao_Paulo',
    documentIdentifier: `RZ-I13-${String(counter).padStart(4, '0')}`, signedAt: new Date(), ...over
  }
}

const tools = toolsAvailable('pdfsig', 'openssl', 'qpdf')

/** `qpdf --encrypt <args> --` of `input`. */
async function encrypt (input: Uint8Array, args: string[], name: string): Promise<Uint8Array> {
  return await qpdf(dir, input, ['--allow-weak-crypto', '--encrypt', ...args, '--'], name)
}

/** The decrypted copy qpdf writes (uncompressed, one object per line group), as text and as a path. */
async function decrypted (pdf: Uint8Array, name: string): Promise<{ path: string, text: string }> {
  const inPath = join(dir, `${name}.pdf`)
  const path = join(dir, `${name}-clear.pdf`)
  await writeFile(inPath, pdf)
  await run('qpdf', ['--decrypt', '--qdf', '--object-streams=disable', inPath, path]).catch((err: { code?: number }) => { if (err.code !== 3) throw err })
  return { path, text: (await readFile(path)).toString('latin1') }
}

/** The text drawn by each stamp's appearance stream, read from qpdf's decrypted copy with pdf-lib. */
async function stampTexts (clearPath: string): Promise<string[]> {
  const doc = await PDFDocument.load(await readFile(clearPath))
  const out: string[] = []
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict) || object.get(PDFName.of('Subtype')) !== PDFName.of('Stamp')) continue
    const ap = object.lookup(PDFName.of('AP'), PDFDict).lookup(PDFName.of('N'))
    if (!(ap instanceof PDFRawStream)) continue
    // The page's appearance draws the shared form (background, frame, the lines' common start), then its page number.
    const shared = ap.dict.lookup(PDFName.of('Resources'), PDFDict).lookup(PDFName.of('XObject'), PDFDict).lookup(PDFName.of('S'))
    if (!(shared instanceof PDFRawStream)) continue
    const content = [shared, ap].map((s) => Buffer.from(decodePDFRawStream(s).decode()).toString('latin1')).join(' ')
    // The stamp shows WinAnsi text as hex strings (pdf-lib's encodeText).
    out.push([...content.matchAll(/<([0-9A-Fa-f]+)> Tj/g)].map((m) => Buffer.from(m[1]!, 'hex').toString('latin1')).join(''))
  }
  return out
}

/** checkSignedPdf plus the PAdES attribute set; /M is read from the decrypted copy, since it is encrypted in the file. */
async function expectSigned (pdf: Uint8Array, name: string): Promise<FullCheck> {
  const check = await checkSignedPdf(dir, pdf, pki.rootPemPath, name)
  const encrypted = Buffer.from(pdf).toString('latin1').includes('/Encrypt ')
  check.signatures.forEach((sig, i) => {
    expect(padesAttributeProblems(check.attributes[i]!, sig.dictionary).filter((p) => !(encrypted && p === '/M missing'))).toEqual([])
  })
  return check
}

describe.skipIf(!tools)('item 1: encrypted PDFs that open without a password', () => {
  const revisions = [
    ['RC4 40-bit, revision 2', ['', 'dono', '40'], 2],
    ['RC4 128-bit, revision 3', ['', 'dono', '128', '--use-aes=n'], 3],
    ['AES-128, revision 4', ['', 'dono', '128', '--use-aes=y'], 4],
    ['AES-256, revision 5', ['', 'dono', '256', '--force-R5'], 5],
    ['AES-256, revision 6', ['', 'dono', '256'], 6]
  ] as const

  it.each(revisions)('%s: signed in NONE and STAMP_AND_PAGE; qpdf decrypts it without errors, pdfsig and OpenSSL verify, the stamp and page read back', async (label, args, revision) => {
    const input = await encrypt(plain, [...args], `enc-r${revision}`)
    for (const mode of ['NONE', 'STAMP_AND_PAGE'] as const) {
      const name = `enc-r${revision}-${mode}`
      const signing = options({ visualMode: mode })
      const out = await signPdf(input, signing)
      expect(Buffer.from(out.pdf.subarray(0, input.length)).equals(Buffer.from(input))).toBe(true)
      await expectSigned(out.pdf, name)
      const path = join(dir, `${name}.pdf`)
      const { stdout: shown } = await run('qpdf', ['--show-encryption', path])
      expect(shown).toContain(`R = ${revision}`)
      expect(shown).toMatch(/User password = \n/)
      // The update keeps the encryption dictionary and the permanent identifier.
      const update = Buffer.from(out.pdf.subarray(input.length)).toString('latin1')
      const source = Buffer.from(input).toString('latin1')
      expect(update).toContain(`/Encrypt ${/\/Encrypt (\d+ \d+ R)/.exec(source)![1]}`)
      expect(update).toContain(`/ID [<${/\/ID \[<([0-9a-fA-F]+)>/.exec(source)![1]}>`)
      // Nothing we add is left in clear: not the field name, the stamp's text and name, or /M.
      for (const clear of ['Assinatura1', 'razao-stamp', 'Assinado digitalmente', '/M (D:']) expect(update).not.toContain(clear)
      const clear = await decrypted(out.pdf, name)
      expect(clear.text).toContain('/T (Assinatura1)')
      expect(clear.text).toMatch(/\/M \(D:\d{14}-03'00'\)/)
      expect(clear.text.toLowerCase()).toContain(`/reason ${PDFHexString.fromText('Assinado digitalmente (PAdES-B)').toString().toLowerCase()}`)
      if (mode === 'STAMP_AND_PAGE') {
        const { stdout } = await run('pdftotext', ['-f', '3', '-l', '3', '-enc', 'UTF-8', clear.path, '-'])
        expect(stdout, label).toContain('Manifesto de assinatura digital')
        expect(stdout).toContain(signing.documentIdentifier)
        const stamps = await stampTexts(clear.path)
        expect(stamps).toHaveLength(2)
        for (const text of stamps) expect(text).toContain(`Assinado digitalmente por ${material.identity.signerName}`)
        expect(clear.text).toContain(`/NM (razao-stamp-${signing.documentIdentifier}-1)`)
      }
    }
  })

  it('signs encrypted files with object streams and a cross-reference stream (AES-128 and AES-256), answering with an xref stream', async () => {
    for (const bits of ['128', '256']) {
      const input = await encrypt(await withObjectStreams(dir, plain, `objstm-src-${bits}`), ['', 'dono', bits, ...(bits === '128' ? ['--use-aes=y'] : [])], `enc-objstm-${bits}`)
      expect(Buffer.from(input).toString('latin1')).toContain('/ObjStm')
      const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
      await expectSigned(out.pdf, `enc-objstm-${bits}-signed`)
      expect(Buffer.from(out.pdf.subarray(input.length)).toString('latin1')).toContain('/Type /XRef')
      const clear = await decrypted(out.pdf, `enc-objstm-${bits}-signed`)
      expect(await stampTexts(clear.path)).toHaveLength(2)
    }
  })

  it('re-encrypts the strings of the objects it rewrites (AcroForm, page), so they read back after decryption', async () => {
    // Strings in the two objects every signature rewrites: the AcroForm (/Fields grows) and page 1 (/Annots grows).
    const doc = await PDFDocument.load(await makeFormPdf())
    doc.getForm().acroForm.dict.set(PDFName.of('DA'), PDFString.of('/Helv 0 Tf 0 g'))
    doc.getPages()[0]!.node.set(PDFName.of('PieceInfo'), doc.context.obj({ razao: { Private: PDFString.of('segredo (da página)') } }))
    const form = await doc.save({ useObjectStreams: false })
    for (const [bits, extra] of [['40', []], ['128', ['--use-aes=n']], ['256', []]] as const) {
      const input = await encrypt(form, ['', 'dono', bits, ...extra], `enc-form-${bits}`)
      const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
      const update = Buffer.from(out.pdf.subarray(input.length)).toString('latin1')
      expect(update).toMatch(/\/DA <[0-9A-F]+>/)
      expect(update).not.toContain('segredo')
      await expectSigned(out.pdf, `enc-form-${bits}-signed`)
      const clear = await decrypted(out.pdf, `enc-form-${bits}-signed`)
      const read = await PDFDocument.load(await readFile(clear.path))
      expect(read.getForm().getFields().map((f) => f.getName())).toEqual(['cliente.nome', 'cliente.aceite', 'Assinatura1'])
      expect(read.getForm().getTextField('cliente.nome').getText()).toBe('Cliente Exemplo')
      expect(read.getForm().acroForm.dict.lookup(PDFName.of('DA'), PDFString).decodeText()).toBe('/Helv 0 Tf 0 g')
      const piece = read.getPages()[0]!.node.lookup(PDFName.of('PieceInfo'), PDFDict).lookup(PDFName.of('razao'), PDFDict)
      expect((piece.lookup(PDFName.of('Private')) as PDFString | PDFHexString).decodeText()).toBe('segredo (da página)')
    }
  })

  it('signs the other handler shapes qpdf writes: RC4 in a V 4 handler, and AES-256 with clear-text XMP metadata', async () => {
    const withXmp = await PDFDocument.load(plain)
    const xmp = '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta><?xpacket end="w"?>'
    withXmp.catalog.set(PDFName.of('Metadata'), withXmp.context.register(withXmp.context.stream(xmp, { Type: 'Metadata', Subtype: 'XML' })))
    const xmpPdf = await withXmp.save({ useObjectStreams: false })
    for (const [name, source, args] of [['v4-rc4', plain, ['', 'dono', '128', '--use-aes=n', '--force-V4']], ['clear-xmp', xmpPdf, ['', 'dono', '256', '--cleartext-metadata']]] as const) {
      const input = await encrypt(source, [...args], `enc-${name}`)
      if (name === 'clear-xmp') expect(Buffer.from(input).toString('latin1')).toContain('adobe:ns:meta')
      const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
      await expectSigned(out.pdf, `enc-${name}-signed`)
      const clear = await decrypted(out.pdf, `enc-${name}-signed`)
      expect(await stampTexts(clear.path)).toHaveLength(2)
    }
  })

  it('keeps an earlier signature in an encrypted file valid when it signs again', async () => {
    const input = await encrypt(plain, ['', 'dono', '128', '--use-aes=y'], 'enc-twice')
    const first = await signPdf(input, options({ visualMode: 'STAMP_ONLY' }))
    const second = await signPdf(first.pdf, options({ visualMode: 'STAMP_AND_PAGE' }))
    expect(Buffer.from(second.pdf.subarray(0, first.pdf.length)).equals(first.pdf)).toBe(true)
    const check = await expectSigned(second.pdf, 'enc-twice')
    expect(check.signatures).toHaveLength(2)
    expect(check.pdfsig.signatures[0]).toMatchObject({ valid: true, totalDocument: false })
    const [, , c, d] = check.signatures[0]!.byteRange
    const rev1 = join(dir, 'enc-twice-rev1.pdf')
    await writeFile(rev1, second.pdf.subarray(0, c + d))
    expect((await pdfsig(rev1)).signatures[0]).toMatchObject({ valid: true, totalDocument: true })
    const clear = await decrypted(second.pdf, 'enc-twice')
    expect(clear.text).toContain('/T (Assinatura2)')
  })

  it('writes the signature\'s /Contents in clear, so its hex is the CMS OpenSSL verified', async () => {
    const input = await encrypt(plain, ['', 'dono', '256'], 'enc-contents')
    const out = await signPdf(input, options())
    const [sig] = findSignatures(out.pdf)
    expect(sig!.cms[0]).toBe(0x30)
    expect(sig!.dictionary).toMatch(/\/Contents <30/)
  })

  it('refuses a file that needs a user password, saying so', async () => {
    const input = await encrypt(plain, ['usuario', 'dono', '256'], 'enc-user')
    await expect(signPdf(input, options())).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(/needs a password to be opened/) })
  })

  it.each([
    ['no modification at all (--modify=none)', ['--modify=none'], 'NONE', /bit 4/],
    ['comments and forms but no other change (--modify=annotate): a new field needs bit 4', ['--modify=annotate'], 'NONE', /bit 4/],
    ['no annotations (--annotate=n)', ['--annotate=n'], 'STAMP_ONLY', /stamp.*bit 6/],
    ['no assembly (--assemble=n) with a final page', ['--assemble=n'], 'PAGE_ONLY', /bit 11/]
  ] as const)('refuses an owner-restricted file with %s, naming the permission and saying it opens without a password', async (_label, restriction, mode, permission) => {
    const input = await encrypt(plain, ['', 'dono', '256', ...restriction], `enc-perm-${counter}`)
    const refusal = signPdf(input, options({ visualMode: mode }))
    await expect(refusal).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(permission) })
    await expect(refusal).rejects.toMatchObject({ message: expect.stringMatching(/opens without a password/) })
  })

  it('signs what the permissions allow: stamps without assembly, and a 40-bit file restricted only in printing', async () => {
    const noAssembly = await encrypt(plain, ['', 'dono', '128', '--use-aes=y', '--assemble=n'], 'enc-no-assembly')
    await expectSigned((await signPdf(noAssembly, options({ visualMode: 'STAMP_ONLY' }))).pdf, 'enc-no-assembly-signed')
    const noPrint = await encrypt(plain, ['', 'dono', '40', '--print=n'], 'enc-no-print')
    await expectSigned((await signPdf(noPrint, options({ visualMode: 'STAMP_AND_PAGE' }))).pdf, 'enc-no-print-signed')
  })

  it('refuses a 40-bit file whose owner forbids changes (revision 2 has no separate assembly bit)', async () => {
    const input = await encrypt(plain, ['', 'dono', '40', '--modify=n'], 'enc-r2-locked')
    await expect(signPdf(input, options())).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(/bit 4/) })
  })
})

/** Text of page `page` as pdftotext reads it. */
async function pageText (pdf: Uint8Array, name: string, page = 1): Promise<string> {
  const path = join(dir, `${name}-text.pdf`)
  await writeFile(path, pdf)
  return (await run('pdftotext', ['-f', String(page), '-l', String(page), '-enc', 'UTF-8', path, '-'])).stdout
}

describe.skipIf(!tools)('item 4: bytes before %PDF-', () => {
  const prefix = (length: number): Buffer => Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n\r\n'.padEnd(length, 'x').slice(0, length), 'latin1')

  it('drops a prefix of up to 1,023 bytes, keeps every byte from the header on, and says so; qpdf, pdfsig and OpenSSL agree', async () => {
    for (const [name, pdf] of [['table', plain], ['xref-stream', await withObjectStreams(dir, plain, 'prefix-objstm')]] as const) {
      for (const length of [1, 300, 1023]) {
        const input = Buffer.concat([prefix(length), pdf])
        const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
        expect(Buffer.from(out.pdf.subarray(0, pdf.length)).equals(Buffer.from(pdf))).toBe(true)
        expect(out.warnings).toEqual([expect.stringMatching(new RegExp(`^The ${length} bytes before the PDF header`))])
        const check = await expectSigned(out.pdf, `prefix-${name}-${length}`)
        expect(check.signatures[0]!.byteRange[0]).toBe(0)
        expect(await pageText(out.pdf, `prefix-${name}-${length}`)).toContain('Página 1 de 2')
      }
    }
  })

  it('keeps an earlier signature valid when a gateway prefixed the signed file', async () => {
    const first = await signPdf(plain, options({ visualMode: 'STAMP_ONLY' }))
    const second = await signPdf(Buffer.concat([prefix(200), first.pdf]), options())
    expect(Buffer.from(second.pdf.subarray(0, first.pdf.length)).equals(first.pdf)).toBe(true)
    const check = await expectSigned(second.pdf, 'prefix-twice')
    expect(check.pdfsig.signatures.map((s) => s.valid)).toEqual([true, true])
  })

  it('signs a prefixed encrypted file', async () => {
    const encrypted = await encrypt(plain, ['', 'dono', '256'], 'prefix-enc')
    const out = await signPdf(Buffer.concat([prefix(100), encrypted]), options({ visualMode: 'STAMP_AND_PAGE' }))
    await expectSigned(out.pdf, 'prefix-enc-signed')
  })

  it('refuses a header that starts past the first 1,024 bytes, blaming the leading bytes (INVALID_PDF)', async () => {
    const input = Buffer.concat([prefix(1024), plain])
    await expect(signPdf(input, options())).rejects.toMatchObject({
      code: 'SIGN_PDF_INVALID', field: 'pdfBase64', message: expect.stringMatching(/comes after 1024 bytes of other data; readers accept at most 1024/)
    })
  })
})

/** The classic-table file with `edit` applied to its text (latin1). */
function edited (pdf: Uint8Array, edit: (text: string) => string): Buffer {
  return Buffer.from(edit(Buffer.from(pdf).toString('latin1')), 'latin1')
}

/** Moves every in-use offset of the last table by `delta` bytes. */
const shiftOffsets = (delta: number) => (text: string): string => {
  const at = text.lastIndexOf('\nxref\n')
  return text.slice(0, at) + text.slice(at).replace(/^(\d{10}) (\d{5}) n/gm, (_m, o: string, g: string) => `${String(Number(o) + delta).padStart(10, '0')} ${g} n`)
}

describe.skipIf(!tools)('item 5: damaged cross-reference data', () => {
  const damages: Array<[string, (text: string) => string]> = [
    ['wrong offsets in the table', shiftOffsets(7)],
    ['a table cut short', (t) => t.replace(/(\nxref\n0 \d+\n(?:.{18,19}\n){3})(?:.{18,19}\n)+/, '$1')],
    ['no table at all (startxref names the trailer)', (t) => {
      const xref = t.lastIndexOf('\nxref\n') + 1
      const trailer = t.indexOf('trailer', xref)
      return t.slice(0, xref) + t.slice(trailer).replace(/startxref\n\d+/, `startxref\n${xref}`)
    }],
    ['no startxref', (t) => t.replace(/startxref\n\d+\n/, '')],
    ['a startxref past the end', (t) => t.replace(/startxref\n\d+/, 'startxref\n99999999')],
    ['a startxref into the middle of an object', (t) => t.replace(/startxref\n\d+/, 'startxref\n12')]
  ]

  it.each(damages)('rebuilds an unsigned file with %s and signs the rebuilt file, with a warning', async (label, damage) => {
    const input = edited(plain, damage)
    expect(input.equals(Buffer.from(plain))).toBe(false)
    const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
    expect(out.warnings).toEqual([expect.stringMatching(/cross-reference data was damaged \(.+\); the file was rebuilt from its objects before signing/)])
    const name = `damaged-${damages.findIndex(([l]) => l === label)}`
    await expectSigned(out.pdf, name)
    expect(await pageText(out.pdf, name)).toContain('Página 1 de 2')
    expect(await pageText(out.pdf, name, 2)).toContain('Página 2 de 2')
    expect(out.originalPages).toBe(2)
  })

  it('rebuilds a damaged file with a cross-reference stream and object streams', async () => {
    const source = await withObjectStreams(dir, plain, 'damaged-objstm-src')
    const input = edited(source, (t) => t.replace(/startxref\n\d+/, 'startxref\n40'))
    const out = await signPdf(input, options({ visualMode: 'STAMP_ONLY' }))
    expect(out.warnings).toHaveLength(1)
    await expectSigned(out.pdf, 'damaged-objstm')
    expect(await pageText(out.pdf, 'damaged-objstm', 2)).toContain('Página 2 de 2')
  })

  it.each([['AES-128', '--use-aes=y'], ['RC4 128-bit', '--use-aes=n']])('rebuilds a damaged %s file with object streams and keeps it encrypted with the same key and /ID', async (_label, aes) => {
    const source = await encrypt(await withObjectStreams(dir, plain, `damaged-enc-src${aes}`), ['', 'dono', '128', aes, '--force-V4'], `damaged-enc${aes}`)
    const input = edited(source, (t) => t.replace(/startxref\n\d+/, 'startxref\n40'))
    const out = await signPdf(input, options({ visualMode: 'STAMP_AND_PAGE' }))
    expect(out.warnings).toHaveLength(1)
    const name = `damaged-enc-signed${aes}`
    await expectSigned(out.pdf, name)
    const { stdout } = await run('qpdf', ['--show-encryption', join(dir, `${name}.pdf`)])
    expect(stdout).toContain('R = 4')
    expect(Buffer.from(out.pdf).toString('latin1')).toContain(`/ID [<${/\/ID \[<([0-9a-fA-F]+)>/.exec(Buffer.from(source).toString('latin1'))![1]}>`)
    const clear = await decrypted(out.pdf, name)
    expect(await stampTexts(clear.path)).toHaveLength(2)
    expect(clear.text).toContain('/T (Assinatura1)')
  })

  it('rebuilds a damaged file with sparse object numbers into a table of runs that qpdf and pdfsig accept', async () => {
    const content = 'BT /F1 14 Tf 40 150 Td (Pagina numerada esparsa) Tj ET'
    const text = '%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [5000 0 R] /Count 1 >>\nendobj\n' +
      '5000 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 5001 0 R /Resources << /Font << /F1 5002 0 R >> >> >>\nendobj\n' +
      `5001 0 obj\n<< /Length ${content.length} >>\nstream\n${content}\nendstream\nendobj\n` +
      '5002 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'
    const out = await signPdf(Buffer.from(text, 'latin1'), options({ visualMode: 'STAMP_AND_PAGE' }))
    expect(out.warnings).toHaveLength(1)
    expect(Buffer.from(out.pdf).toString('latin1')).toMatch(/\nxref\n0 1\n0000000000 65535 f\r\n1 2\n/)
    await expectSigned(out.pdf, 'damaged-sparse')
    expect(await pageText(out.pdf, 'damaged-sparse')).toContain('Pagina numerada esparsa')
  })

  it('rebuilds a damaged file without reading what follows its final %%EOF', async () => {
    // Parsed, this would replace the page tree with an empty one.
    const junk = Buffer.from('<html>2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n</html>', 'latin1')
    const pagesRef = /\/Pages (\d+) 0 R/.exec(Buffer.from(plain).toString('latin1'))![1]
    const input = Buffer.concat([edited(plain, (t) => t.replace(/startxref\n\d+/, 'startxref\n12')), Buffer.from(junk.toString('latin1').replace('2 0 obj', `${pagesRef} 0 obj`), 'latin1')])
    const out = await signPdf(input, options({ visualMode: 'STAMP_ONLY' }))
    expect(out.originalPages).toBe(2)
    await expectSigned(out.pdf, 'damaged-junk')
  })

  it('refuses a damaged file that holds a signature, saying a rebuild would invalidate it', async () => {
    const signed = await signPdf(plain, options())
    for (const damage of [(t: string) => t.replace(/startxref\n\d+\n%%EOF\s*$/, 'startxref\n12\n%%EOF\n'), shiftOffsets(3)]) {
      expect(edited(signed.pdf, damage).equals(signed.pdf)).toBe(false)
      await expect(signPdf(edited(signed.pdf, damage), options())).rejects.toMatchObject({
        code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(/damaged .* holds a digital signature\. Signing it would mean rebuilding the file, which invalidates that signature/)
      })
    }
  })

  it('still refuses a file cut short before its end (no %%EOF): a rebuild could silently lose pages', async () => {
    await expect(signPdf(plain.subarray(0, plain.length - 200), options())).rejects.toMatchObject({ code: 'SIGN_PDF_INVALID', message: expect.stringMatching(/truncated/) })
  })
})
