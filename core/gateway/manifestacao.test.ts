/**
 * The manifestação's request and answer (manifestacao-xml.ts, manifestacao-answer.ts) and the
 * loopback NFeRecepcaoEvento4 fake: our signature is checked by an independent verifier,
 * Debian's xmlsec1, both here directly and inside the fake, which must also refuse a
 * tampered one. The route, the records and the automatic Ciência run against the real
 * database in server/gateway/manifestacao.test.ts.
 */
import { execFile, execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadPkcs12 } from '../sign/index.js'
import type { GatewayError } from './errors.js'
import { callHttps } from './https-call.js'
import { parseEventoAnswer } from './manifestacao-answer.js'
import {
  EVENTO_CONTENT_TYPE, buildEnvEventoEnvelope, buildEvento, eventDateTime, eventoId, signEvento
} from './manifestacao-xml.js'
import type { EventoFields } from './manifestacao-xml.js'
import { checkManifestRequests } from './manifestacao.js'
import { TlsAgentCache } from './tls-agents.js'
import type { XmlSigner } from './tls-agents.js'
import { startEventoFake } from '../../fixtures/gateway/evento-fake.js'
import type { EventoFake } from '../../fixtures/gateway/evento-fake.js'
import { HEAD_OFFICE_CNPJ, OTHER_ROOT_CNPJ, createGatewayPki } from '../../fixtures/gateway/pki.js'
import type { GatewayPki } from '../../fixtures/gateway/pki.js'
import { AnswerRefused } from './answer-encoding.js'

const hasXmlsec = ((): boolean => { try { execFileSync('xmlsec1', ['--version'], { stdio: 'ignore' }); return true } catch { return false } })()
// CI installs xmlsec1 (.ci/run): there a missing verifier fails the file instead of skipping it.
const withXmlsec = hasXmlsec || process.env.CI === 'true'

const KEY_OURS = '35261111222333000181550010000000011000000104'
const KEY_OTHERS = '35261111222333000181550010000000021000000205'
const KEY_UNKNOWN = '35261111222333000181550010000000031000000306'

let pki: GatewayPki
let signer: XmlSigner
let dir: string
let fake: EventoFake
let agents: TlsAgentCache

beforeAll(async () => {
  pki = createGatewayPki()
  const m = loadPkcs12(pki.client.pfx, pki.client.password)
  signer = { key: m.key, certDer: Buffer.from(m.chain[0]!) }
  dir = await mkdtemp(join(tmpdir(), 'razao-manif-'))
  await writeFile(join(dir, 'root.pem'), pki.rootPem)
  await writeFile(join(dir, 'int.pem'), pki.chain.intermediate.certPem)
  if (!withXmlsec) return
  fake = await startEventoFake({
    pki: { ...pki, intermediatePem: pki.chain.intermediate.certPem },
    tpAmb: 2,
    // KEY_OTHERS was addressed to a company of another CNPJ root.
    notas: new Map([[KEY_OURS, HEAD_OFFICE_CNPJ], [KEY_OTHERS, OTHER_ROOT_CNPJ]])
  })
  agents = new TlsAgentCache({ extraCaPem: pki.rootPem, openPkcs12: async (f, p) => loadPkcs12(f, p) })
})
afterAll(async () => {
  agents?.close()
  await fake?.close()
  await rm(dir, { recursive: true, force: true })
})

const fields = (over: Partial<EventoFields> = {}): EventoFields => ({
  tpAmb: 2, cnpj: HEAD_OFFICE_CNPJ, chNFe: KEY_OURS, tpEvento: '210210', nSeqEvento: 1, dhEvento: eventDateTime(Date.now()), ...over
})

function xmlsec (xml: string): Promise<boolean> {
  return (async () => {
    const file = join(dir, `ev-${Math.random().toString(36).slice(2)}.xml`)
    await writeFile(file, xml)
    return await new Promise<boolean>((resolve) => {
      execFile('xmlsec1', ['--verify', '--id-attr:Id', 'http://www.portalfiscal.inf.br/nfe:infEvento', '--trusted-pem', join(dir, 'root.pem'), '--untrusted-pem', join(dir, 'int.pem'), file], (err) => resolve(err === null))
    })
  })()
}

describe('the evento and its signature', () => {
  it('builds the evento of leiauteConfRecebto 1.00: the Id of its parts, cOrgao 91, the exact descEvento, xJust only where the event has one', () => {
    expect(eventoId('210200', KEY_OURS, 1)).toBe(`ID210200${KEY_OURS}01`)
    expect(eventoId('210200', KEY_OURS, 1)).toHaveLength(54)
    const ciencia = buildEvento(fields({ xJust: 'ignored because Ciencia has none' }))
    expect(ciencia).toBe(`<evento xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.00"><infEvento Id="ID210210${KEY_OURS}01"><cOrgao>91</cOrgao><tpAmb>2</tpAmb>` +
      `<CNPJ>${HEAD_OFFICE_CNPJ}</CNPJ><chNFe>${KEY_OURS}</chNFe><dhEvento>${fields().dhEvento}</dhEvento><tpEvento>210210</tpEvento><nSeqEvento>1</nSeqEvento>` +
      '<verEvento>1.00</verEvento><detEvento versao="1.00"><descEvento>Ciencia da Operacao</descEvento></detEvento></infEvento></evento>')
    const naoRealizada = buildEvento(fields({ tpEvento: '210240', nSeqEvento: 2, xJust: 'Devolvida: "avaria" & <atraso>' }))
    expect(naoRealizada).toContain(`Id="ID210240${KEY_OURS}02"`)
    expect(naoRealizada).toContain('<descEvento>Operacao nao Realizada</descEvento><xJust>Devolvida: &quot;avaria&quot; &amp; &lt;atraso&gt;</xJust>')
  })

  it('writes dhEvento in Brasília time (-03:00), whole seconds, a minute back, whatever the process time zone', () => {
    expect(eventDateTime(Date.UTC(2026, 10, 29, 12, 0, 30, 900))).toBe('2026-11-29T08:59:30-03:00')
    expect(eventDateTime(Date.UTC(2027, 0, 1, 2, 0, 0))).toBe('2026-12-31T22:59:00-03:00')
  })

  it('refuses the justifications the schema would: missing for 210240, present for Confirmação, too short, on two lines, outside Latin-1', () => {
    const refused = (r: Parameters<typeof checkManifestRequests>[0]): string => {
      try { checkManifestRequests(r) } catch (e) { expect((e as GatewayError).status).toBe(400); return (e as GatewayError).detail }
      throw new Error('accepted')
    }
    expect(refused([{ chave: KEY_OURS, tpEvento: '210240' }])).toMatch(/justificativa is required/)
    expect(refused([{ chave: KEY_OURS, tpEvento: '210200', xJust: 'Uma justificativa qualquer' }])).toMatch(/not part of a Confirmação/)
    expect(refused([{ chave: KEY_OURS, tpEvento: '210220', xJust: 'curta' }])).toMatch(/5 characters; the authority requires 15 to 255/)
    expect(refused([{ chave: KEY_OURS, tpEvento: '210240', xJust: 'primeira linha\nsegunda linha' }])).toMatch(/U\+000A, a line break/)
    expect(refused([{ chave: KEY_OURS, tpEvento: '210240', xJust: 'Entrega recusada — sem pedido' }])).toMatch(/U\+2014/)
    expect(refused([{ chave: KEY_OURS, tpEvento: '210210' }, { chave: KEY_OURS, tpEvento: '210210' }])).toMatch(/asked twice \(event 2\)/)
    expect(refused(Array.from({ length: 21 }, (_, i) => ({ chave: `${KEY_OURS.slice(0, 40)}${String(i).padStart(4, '0')}`, tpEvento: '210210' as const })))).toMatch(/1 to 20/)
    // Accented Latin-1 text is fine, and blanks around it are trimmed.
    expect(checkManifestRequests([{ chave: KEY_OURS, tpEvento: '210240', xJust: '  Operação não realizada: pedido cancelado  ' }])[0]!.xJust).toBe('Operação não realizada: pedido cancelado')
  })

  it.runIf(withXmlsec)('signs with the one profile the NF-e xmldsig schema allows, and xmlsec1 verifies it; one changed character and it does not', async () => {
    const signed = signEvento(buildEvento(fields({ tpEvento: '210240', xJust: 'Operação não realizada: mercadoria devolvida' })), signer)
    expect(signed).toMatch(/<\/infEvento><Signature xmlns="http:\/\/www.w3.org\/2000\/09\/xmldsig#"><SignedInfo><CanonicalizationMethod Algorithm="http:\/\/www.w3.org\/TR\/2001\/REC-xml-c14n-20010315"\/>/)
    expect(signed).toContain('<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>')
    expect(signed).toContain(`<Reference URI="#ID210240${KEY_OURS}01"><Transforms><Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/><Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/></Transforms><DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/>`)
    expect(signed).toContain(`<KeyInfo><X509Data><X509Certificate>${signer.certDer.toString('base64')}</X509Certificate></X509Data></KeyInfo></Signature></evento>`)
    expect(await xmlsec(signed)).toBe(true)
    expect(await xmlsec(signed.replace('mercadoria devolvida', 'mercadoria devolvidA'))).toBe(false)
  })
})

async function post (envelope: string): Promise<{ status: number, body: string }> {
  const agent = await agents.agentFor(pki.client)
  const answer = await callHttps({ url: fake.url, method: 'POST', headers: { 'content-type': EVENTO_CONTENT_TYPE }, body: envelope, agent, timeoutMs: 20_000, service: 'test' })
  return { status: answer.status, body: answer.body }
}
const results = (body: string): Array<[string, string | undefined]> => {
  const parsed = parseEventoAnswer(body)
  if ('fault' in parsed) throw new Error(`fault: ${parsed.fault.reason}`)
  expect(parsed.ret.cStat).toBe('128')
  return parsed.ret.eventos.map((e) => [e.cStat, e.chNFe])
}

describe.runIf(withXmlsec)('the fake NFeRecepcaoEvento4, over mutual TLS, with xmlsec1 inside', () => {
  it('registers a batch (135) and refuses, per event, a tampered signature (297, xmlsec1 said no), another recipient\'s NF-e (631) and an unknown key (494)', async () => {
    const good = signEvento(buildEvento(fields()), signer)
    // Changed after signing: the time zone of dhEvento.
    const tampered = signEvento(buildEvento(fields({ chNFe: KEY_UNKNOWN })), signer).replace('-03:00</dhEvento>', '-02:00</dhEvento>')
    const others = signEvento(buildEvento(fields({ chNFe: KEY_OTHERS })), signer)
    const unknown = signEvento(buildEvento(fields({ chNFe: KEY_UNKNOWN, tpEvento: '210200' })), signer)
    const failedBefore = fake.xmlsecRuns().failed
    const res = await post(buildEnvEventoEnvelope('202611290001', [good, tampered, others, unknown]))
    expect(res.status).toBe(200)
    expect(results(res.body)).toEqual([['135', KEY_OURS], ['297', KEY_UNKNOWN], ['631', KEY_OTHERS], ['494', KEY_UNKNOWN]])
    expect(fake.xmlsecRuns().failed).toBe(failedBefore + 1)
    expect(fake.requests.at(-1)!.eventos.every((e) => e.signatureChecked)).toBe(true)
    expect(fake.requests.at(-1)!.certCnpj).toBe(HEAD_OFFICE_CNPJ)
  })

  it('answers 573 when the same event (the same Id) comes again, even freshly signed', async () => {
    const again = signEvento(buildEvento(fields({ dhEvento: eventDateTime(Date.now() + 1000) })), signer)
    expect(results((await post(buildEnvEventoEnvelope('202611290002', [again]))).body)).toEqual([['573', KEY_OURS]])
  })

  it('refuses a signature outside the fixed profile (298) before running the verifier, and a batch with whitespace between tags (588)', async () => {
    const sha256 = signEvento(buildEvento(fields({ tpEvento: '210200' })), signer).replace('xmldsig#rsa-sha1', 'xmldsig-more#rsa-sha256')
    const runs = fake.xmlsecRuns().total
    expect(results((await post(buildEnvEventoEnvelope('202611290003', [sha256]))).body)).toEqual([['298', KEY_OURS]])
    expect(fake.xmlsecRuns().total).toBe(runs)
    const spaced = buildEnvEventoEnvelope('202611290004', [signEvento(buildEvento(fields({ tpEvento: '210200' })), signer)]).replace('<idLote>', '\n  <idLote>')
    const parsed = parseEventoAnswer((await post(spaced)).body)
    expect('ret' in parsed && [parsed.ret.cStat, parsed.ret.eventos.length]).toEqual(['588', 0])
  })
})

describe('reading retEnvEvento', () => {
  const NS = 'xmlns="http://www.portalfiscal.inf.br/nfe"'
  const envelope = (inner: string): string => '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>' +
    `<nfeResultMsg xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4">${inner}</nfeResultMsg></soap:Body></soap:Envelope>`
  const ret = (events: string): string => `<retEnvEvento versao="1.00" ${NS}><idLote>1</idLote><tpAmb>2</tpAmb><verAplic>AN_4.0</verAplic><cOrgao>91</cOrgao><cStat>128</cStat><xMotivo>Lote de Evento Processado</xMotivo>${events}</retEnvEvento>`
  const retEvento = `<retEvento versao="1.00"><infEvento Id="ID891260000000001"><tpAmb>2</tpAmb><verAplic>AN_4.0</verAplic><cOrgao>91</cOrgao><cStat>135</cStat><xMotivo>Evento registrado e vinculado a NF-e</xMotivo><chNFe>${KEY_OURS}</chNFe><tpEvento>210200</tpEvento><xEvento>Confirmacao da Operacao</xEvento><nSeqEvento>1</nSeqEvento><CNPJDest>${HEAD_OFFICE_CNPJ}</CNPJDest><dhRegEvento>2026-11-29T09:00:01-03:00</dhRegEvento><nProt>891260000000001</nProt></infEvento></retEvento>`

  it('reads both levels and keeps each retEvento as the exact text sent, for procEventoNFe', () => {
    const parsed = parseEventoAnswer(envelope(ret(retEvento)))
    expect(parsed).toEqual({
      ret: {
        idLote: '1', tpAmb: '2', cStat: '128', xMotivo: 'Lote de Evento Processado',
        eventos: [{ cStat: '135', xMotivo: 'Evento registrado e vinculado a NF-e', chNFe: KEY_OURS, tpEvento: '210200', nSeqEvento: '1', dhRegEvento: '2026-11-29T09:00:01-03:00', nProt: '891260000000001', xml: retEvento }]
      }
    })
  })

  it('reads a SOAP Fault, and refuses a DOCTYPE, a processing instruction, 21 results, a bad cStat and a prefixed retEvento', () => {
    const fault = '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><soap:Fault><soap:Code><soap:Value>soap:Receiver</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="pt">Erro interno</soap:Text></soap:Reason></soap:Fault></soap:Body></soap:Envelope>'
    expect(parseEventoAnswer(fault)).toEqual({ fault: { code: 'Receiver', reason: 'Erro interno' } })
    const refusal = (xml: string): string => { try { parseEventoAnswer(xml) } catch (e) { expect(e).toBeInstanceOf(AnswerRefused); return (e as Error).message } throw new Error('read') }
    expect(refusal(`<!DOCTYPE x [<!ENTITY a "b">]>${envelope(ret(''))}`)).toMatch(/DOCTYPE/)
    expect(refusal(envelope(ret('<?evil x?>')))).toMatch(/processing instruction/)
    expect(refusal(envelope(ret(retEvento.repeat(21))))).toMatch(/21 retEvento/)
    expect(refusal(envelope(ret(retEvento.replace('<cStat>135', '<cStat>1350'))))).toMatch(/cStat/)
    const prefixed = retEvento.replace('<retEvento versao="1.00">', '<n:retEvento xmlns:n="http://www.portalfiscal.inf.br/nfe" versao="1.00">').replace('</retEvento>', '</n:retEvento>')
    expect(refusal(envelope(ret(prefixed)))).toMatch(/default namespace/)
  })
})
