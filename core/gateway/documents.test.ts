/**
 * Documents kept (issue 35, item 2): the key fields read from each kind of distributed
 * document, the bounds that refuse one, and storing in a real PostgreSQL (once; cancelled
 * whichever arrives first, also when both arrive at the same moment).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { gzipBase64, makeNfeDocuments, makeNfeEventDocument, makeNfseCancellation, makeNfseDocuments } from '../../fixtures/gateway/documents.js'
import { DocumentRefused, openNfeDocument, openNfseDocument } from './doc-zip.js'
import { getDocument, listDocuments, storeDocuments } from './documents.js'
import type { ReceivedDocument } from './documents.js'

const NFE = 'http://www.portalfiscal.inf.br/nfe'
const NFSE = 'http://www.sped.fazenda.gov.br/nfse'
const KEY = '35261199999090910270550010000000011000000100'
const HEAD = '11222333000181'

const refusal = (open: () => unknown): string => {
  try {
    open()
  } catch (e) {
    if (e instanceof DocumentRefused) return e.code
    throw e
  }
  return 'opened'
}

const procNFe = (o: { cStat?: string, ide?: string, vNF?: string, key?: string } = {}): string =>
  `<nfeProc xmlns="${NFE}" versao="4.00"><NFe><infNFe Id="NFe${o.key ?? KEY}" versao="4.00"><ide>${o.ide ?? '<dhEmi>2026-11-20T10:00:00-03:00</dhEmi>'}</ide>` +
  `<emit><CNPJ>99999090910270</CNPJ><xNome>FORNECEDOR</xNome></emit><dest><CPF>12345678909</CPF><xNome>CLIENTE</xNome></dest>` +
  `<total><ICMSTot><vNF>${o.vNF ?? '1234.50'}</vNF></ICMSTot></total></infNFe></NFe>` +
  `<protNFe versao="4.00"><infProt><chNFe>${o.key ?? KEY}</chNFe><cStat>${o.cStat ?? '100'}</cStat></infProt></protNFe></nfeProc>`

describe('opening a distributed document', () => {
  it('reads the key fields of a procNFe, exactly, and its status from the protocol', () => {
    expect(openNfeDocument(gzipBase64(procNFe()), 'procNFe_v4.00.xsd').facts).toEqual({
      kind: 'procNFe', chave: KEY, emitenteCnpj: '99999090910270', emitenteNome: 'FORNECEDOR', destinatarioDoc: '12345678909', destinatarioNome: 'CLIENTE',
      dataEmissao: '2026-11-20T10:00:00-03:00', valorTotal: '1234.50', situacao: 'autorizada', evento: null
    })
    expect(openNfeDocument(gzipBase64(procNFe({ cStat: '302' })), 'procNFe_v4.00.xsd').facts.situacao).toBe('denegada')
    // Layout 2.00's bare date is kept as a date; a malformed date-time or value is null, not guessed.
    expect(openNfeDocument(gzipBase64(procNFe({ ide: '<dEmi>2010-05-03</dEmi>' })), 'procNFe_v2.00.xsd').facts.dataEmissao).toBe('2010-05-03')
    const bad = openNfeDocument(gzipBase64(procNFe({ ide: '<dhEmi>2026-11-20T10:00:00</dhEmi>', vNF: '1e5' })), 'procNFe_v4.00.xsd').facts
    expect([bad.dataEmissao, bad.valorTotal]).toEqual([null, null])
  })

  it('reads a resNFe summary with cSitNFe, and events with their code and whether they cancel', () => {
    const res = makeNfeDocuments(HEAD, 1, 1)[0]!
    expect(openNfeDocument(res.docZip, res.schema).facts).toMatchObject({ kind: 'resNFe', emitenteCnpj: '99999090910270', situacao: 'autorizada', destinatarioDoc: null })
    for (const [cSit, situacao] of [['2', 'denegada'], ['3', 'cancelada']]) {
      expect(openNfeDocument(gzipBase64(res.xml.replace('<cSitNFe>1</cSitNFe>', `<cSitNFe>${cSit}</cSitNFe>`)), res.schema).facts.situacao).toBe(situacao)
    }
    const open = (d: { docZip: string, schema: string }): unknown => openNfeDocument(d.docZip, d.schema).facts.evento
    expect(open(makeNfeEventDocument(2, KEY, '110111', { kind: 'resEvento' }))).toEqual({ tipo: '110111', seq: '1', cancela: true })
    expect(open(makeNfeEventDocument(2, KEY, '110111', { kind: 'procEventoNFe', cStat: '155' }))).toEqual({ tipo: '110111', seq: '1', cancela: true })
    // 136: registered but not linked to the NF-e; a Ciência never cancels.
    expect(open(makeNfeEventDocument(2, KEY, '110111', { kind: 'procEventoNFe', cStat: '136' }))).toEqual({ tipo: '110111', seq: '1', cancela: false })
    expect(open(makeNfeEventDocument(2, KEY, '210210', { kind: 'procEventoNFe' }))).toEqual({ tipo: '210210', seq: '1', cancela: false })
  })

  it('reads an NFS-e (issuer, tomador, date, net value) and an NFS-e cancellation event by its e<code> element', () => {
    const xml = `<NFSe xmlns="${NFSE}" versao="1.00"><infNFSe Id="NFS${'4'.repeat(50)}"><nNFSe>7</nNFSe><dhProc>2026-11-20T11:00:00-03:00</dhProc>` +
      `<emit><CNPJ>${HEAD}</CNPJ><xNome>PRESTADORA</xNome></emit><valores><vLiq>980.00</vLiq></valores>` +
      `<DPS versao="1.00"><infDPS Id="DPS1"><dhEmi>2026-11-19T09:00:00-03:00</dhEmi><toma><CNPJ>99999090910270</CNPJ><xNome>TOMADORA</xNome></toma></infDPS></DPS></infNFSe></NFSe>`
    expect(openNfseDocument({ NSU: 1, ChaveAcesso: '4'.repeat(50), TipoDocumento: 'NFSE', ArquivoXml: gzipBase64(xml) }).facts).toEqual({
      kind: 'NFS-e', chave: '4'.repeat(50), emitenteCnpj: HEAD, emitenteNome: 'PRESTADORA', destinatarioDoc: '99999090910270', destinatarioNome: 'TOMADORA',
      dataEmissao: '2026-11-19T09:00:00-03:00', valorTotal: '980.00', situacao: 'autorizada', evento: null
    })
    const cancel = makeNfseCancellation(2, '4'.repeat(50), HEAD)
    // The element decides, whatever the ADN's TipoEvento name says.
    expect(openNfseDocument({ ...cancel, TipoEvento: 'OUTRO' }).facts.evento).toEqual({ tipo: '101101', seq: '1', cancela: true })
    const confirm = gzipBase64(cancel.xml.replaceAll('e101101', 'e203202'))
    expect(openNfseDocument({ ...cancel, ArquivoXml: confirm }).facts.evento).toEqual({ tipo: '203202', seq: '1', cancela: false })
    expect(refusal(() => openNfseDocument({ ...cancel, TipoDocumento: 'NFSE' }))).toBe('DOCZIP_UNKNOWN')
    expect(refusal(() => openNfseDocument({ ...cancel, ChaveAcesso: '123' }))).toBe('DOCZIP_UNKNOWN')
  })

  it('refuses a ratio bomb under the size cap, a DOCTYPE, deep nesting, another namespace or a root the schema does not name', () => {
    // 2 MiB of spaces: under the 4 MiB cap, but some thousand times its compressed size.
    expect(refusal(() => openNfeDocument(gzipBase64(`<resNFe xmlns="${NFE}">${' '.repeat(2 * 2 ** 20)}</resNFe>`), 'resNFe_v1.01.xsd'))).toBe('DOCZIP_BOMB')
    expect(refusal(() => openNfeDocument(gzipBase64(`<!DOCTYPE resNFe><resNFe xmlns="${NFE}"/>`), 'resNFe_v1.01.xsd'))).toBe('DOCZIP_DTD')
    expect(refusal(() => openNfeDocument(gzipBase64(`<?xml-stylesheet href="x"?><resNFe xmlns="${NFE}"/>`), 'resNFe_v1.01.xsd'))).toBe('DOCZIP_XML')
    expect(refusal(() => openNfeDocument(gzipBase64(`<resNFe xmlns="${NFE}">${'<a>'.repeat(40)}${'</a>'.repeat(40)}</resNFe>`), 'resNFe_v1.01.xsd'))).toBe('DOCZIP_XML')
    expect(refusal(() => openNfeDocument(gzipBase64(procNFe().replace(NFE, 'urn:other')), 'procNFe_v4.00.xsd'))).toBe('DOCZIP_UNKNOWN')
    expect(refusal(() => openNfeDocument(gzipBase64(procNFe()), 'resNFe_v1.01.xsd'))).toBe('DOCZIP_UNKNOWN')
    expect(refusal(() => openNfeDocument(gzipBase64(procNFe({ key: '123' })), 'procNFe_v4.00.xsd'))).toBe('DOCZIP_UNKNOWN')
    expect(refusal(() => openNfeDocument('H4sI====', 'resNFe_v1.01.xsd'))).toBe('DOCZIP_BASE64')
    expect(refusal(() => openNfeDocument(Buffer.from('not gzip').toString('base64'), 'resNFe_v1.01.xsd'))).toBe('DOCZIP_NOT_GZIP')
    expect(refusal(() => openNfeDocument(gzipBase64(procNFe()), 'procNFe_v4.00.xsd'))).toBe('opened')
  })
})

describe('storing documents', () => {
  let db: TestDatabase
  beforeAll(async () => { db = await freshDatabase() })
  beforeEach(async () => { await db.pool.query('DELETE FROM documentos_fiscais') })
  afterAll(async () => { await db?.drop() })

  const received = (d: { nsu: string, schema: string, docZip: string }): ReceivedDocument =>
    ({ nsu: d.nsu, esquema: d.schema.split('_v')[0]!, opened: openNfeDocument(d.docZip, d.schema) })
  const keyOf = (i: number): string => `352611999990909102705500100000${String(i).padStart(4, '0')}1100000010`

  it('keeps a document once: the same one again adds its company, and a later copy can only move it to cancelada', async () => {
    const res = makeNfeDocuments(HEAD, 1, 1)[0]!
    expect(await storeDocuments(db.pool, HEAD, [received(res)])).toEqual({ inserted: 1, repeated: 0 })
    expect(await storeDocuments(db.pool, HEAD, [received(res)])).toEqual({ inserted: 0, repeated: 1 })
    expect(await storeDocuments(db.pool, '99999090910270', [received(res)])).toEqual({ inserted: 0, repeated: 1 })
    const chave = /<chNFe>(\d{44})</.exec(res.xml)![1]!
    expect((await getDocument(db.pool, chave))?.documento).toMatchObject({ cnpjs: [HEAD, '99999090910270'], situacao: 'autorizada' })
    const cancelled = { ...res, docZip: gzipBase64(res.xml.replace('<cSitNFe>1</cSitNFe>', '<cSitNFe>3</cSitNFe>')) }
    await storeDocuments(db.pool, HEAD, [received(cancelled)])
    await storeDocuments(db.pool, HEAD, [received(res)])
    expect((await getDocument(db.pool, chave))?.documento.situacao).toBe('cancelada')
    expect((await db.pool.query('SELECT count(*)::int AS n FROM documentos_fiscais')).rows[0].n).toBe(1)
  })

  it('marks a note cancelled when its cancellation is stored at the same moment by another instance, in either order, every time', async () => {
    const rounds = 40
    for (let i = 0; i < rounds; i++) {
      const key = keyOf(i)
      const note = received({ nsu: String(i), schema: 'procNFe_v4.00.xsd', docZip: gzipBase64(procNFe({ key })) })
      const cancel = received(makeNfeEventDocument(i, key, '110111', { kind: 'procEventoNFe' }))
      // Two connections (the pool holds four), so the two transactions really overlap.
      await Promise.all(i % 2 === 0
        ? [storeDocuments(db.pool, HEAD, [note]), storeDocuments(db.pool, HEAD, [cancel])]
        : [storeDocuments(db.pool, HEAD, [cancel]), storeDocuments(db.pool, HEAD, [note])])
    }
    const rows = (await db.pool.query<{ situacao: string, n: number }>("SELECT situacao, count(*)::int AS n FROM documentos_fiscais WHERE evento = '' GROUP BY situacao")).rows
    expect(rows).toEqual([{ situacao: 'cancelada', n: rounds }])
  })

  it('stores an answer all or nothing, and two overlapping answers in different orders without a deadlock', async () => {
    const a = Array.from({ length: 10 }, (_, i) => received({ nsu: String(i), schema: 'procNFe_v4.00.xsd', docZip: gzipBase64(procNFe({ key: keyOf(100 + i) })) }))
    await Promise.all([storeDocuments(db.pool, HEAD, a), storeDocuments(db.pool, '99999090910270', [...a].reverse())])
    expect((await db.pool.query('SELECT count(*)::int AS n FROM documentos_fiscais WHERE cardinality(cnpjs) = 2')).rows[0].n).toBe(10)
    // A row the table refuses (a key of 43 digits) rolls back the whole answer.
    const broken = { ...a[0]!, opened: { ...a[0]!.opened, facts: { ...a[0]!.opened.facts, chave: '9'.repeat(43) } } }
    const fresh = received({ nsu: '99', schema: 'procNFe_v4.00.xsd', docZip: gzipBase64(procNFe({ key: keyOf(200) })) })
    await expect(storeDocuments(db.pool, HEAD, [fresh, broken])).rejects.toThrow(/documentos_fiscais_chave_check/)
    expect(await getDocument(db.pool, keyOf(200))).toBeUndefined()
  })

  it('writes the notifications in the store\'s transaction: once per document new to a company, global once, and a cancellation per company of the note', async () => {
    await db.pool.query('DELETE FROM eventos_documentos')
    const events = async (): Promise<string[]> => (await db.pool.query<{ e: string }>(
      "SELECT o.tipo || ' ' || d.chave || ' ' || o.cnpj || CASE WHEN o.primeiro THEN ' primeiro' ELSE '' END AS e FROM eventos_documentos o JOIN documentos_fiscais d ON d.id = o.documento_id ORDER BY o.id")).rows.map((r) => r.e)
    const a = received({ nsu: '1', schema: 'procNFe_v4.00.xsd', docZip: gzipBase64(procNFe({ key: keyOf(400) })) })
    const b = received({ nsu: '2', schema: 'procNFe_v4.00.xsd', docZip: gzipBase64(procNFe({ key: keyOf(401) })) })
    await storeDocuments(db.pool, HEAD, [a, b])
    await storeDocuments(db.pool, HEAD, [a])
    await storeDocuments(db.pool, '99999090910270', [a])
    expect(await events()).toEqual([`documento.novo ${keyOf(400)} ${HEAD} primeiro`, `documento.novo ${keyOf(401)} ${HEAD} primeiro`, `documento.novo ${keyOf(400)} 99999090910270`])
    await db.pool.query('DELETE FROM eventos_documentos')
    await storeDocuments(db.pool, HEAD, [received(makeNfeEventDocument(3, keyOf(400), '110111', { kind: 'procEventoNFe' }))])
    expect(await events()).toEqual([`documento.novo ${keyOf(400)} ${HEAD} primeiro`, `documento.cancelado ${keyOf(400)} ${HEAD} primeiro`, `documento.cancelado ${keyOf(400)} 99999090910270`])
    // An answer refused as a whole leaves no event either.
    await db.pool.query('DELETE FROM eventos_documentos')
    const broken = { ...a, opened: { ...a.opened, facts: { ...a.opened.facts, chave: '9'.repeat(43) } } }
    await expect(storeDocuments(db.pool, HEAD, [received({ nsu: '5', schema: 'procNFe_v4.00.xsd', docZip: gzipBase64(procNFe({ key: keyOf(402) })) }), broken])).rejects.toThrow()
    expect(await events()).toEqual([])
  })

  it('pages newest first by the row number as a number (9 before 10 would be text order), every row once', async () => {
    await db.pool.query('ALTER SEQUENCE documentos_fiscais_id_seq RESTART WITH 7')
    await storeDocuments(db.pool, HEAD, Array.from({ length: 6 }, (_, i) => received({ nsu: String(i), schema: 'procNFe_v4.00.xsd', docZip: gzipBase64(procNFe({ key: keyOf(300 + i) })) })))
    const seen: string[] = []
    let apos: string | undefined
    for (let pages = 0; pages < 10; pages++) {
      const page = await listDocuments(db.pool, { limite: 2, antesDe: apos })
      seen.push(...page.documentos.map((d) => d.id))
      if (page.proximo === null) break
      apos = page.proximo
    }
    expect(seen).toEqual(['12', '11', '10', '9', '8', '7'])
  })

  it('answers the full document before its summary, and the key\'s events with it', async () => {
    const makeNfse = makeNfseDocuments(HEAD, 1, 1)[0]!
    await storeDocuments(db.pool, HEAD, [
      { nsu: '1', esquema: 'NFSE', opened: openNfseDocument(makeNfse) },
      { nsu: '2', esquema: 'EVENTO', opened: openNfseDocument(makeNfseCancellation(2, makeNfse.ChaveAcesso, HEAD)) }
    ])
    const found = await getDocument(db.pool, makeNfse.ChaveAcesso)
    expect(found?.documento).toMatchObject({ tipo: 'NFS-e', situacao: 'cancelada' })
    expect(found?.xml).toBe(makeNfse.xml)
    expect(found?.eventos.map((e) => e.evento)).toEqual(['101101-1'])
  })
})
