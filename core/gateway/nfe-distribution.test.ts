import { describe, expect, it } from 'vitest'
import { buildDistNsuEnvelope, parseDistAnswer, assertAnswered } from './nfe-distribution.js'
import type { RetDistDFeInt } from './nfe-distribution.js'

const RET = (inner: string): string =>
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>' +
  '<nfeDistDFeInteresseResponse xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe"><nfeDistDFeInteresseResult>' +
  inner + '</nfeDistDFeInteresseResult></nfeDistDFeInteresseResponse></soap:Body></soap:Envelope>'

describe('buildDistNsuEnvelope', () => {
  it('builds the SOAP 1.2 distNSU envelope with the data area in the default NF-e namespace and no whitespace', () => {
    const xml = buildDistNsuEnvelope({ tpAmb: 2, cUFAutor: 35, cnpj: '11222333000181', ultNSU: '000000000000123' })
    expect(xml).toContain('<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"')
    expect(xml).toContain('<soap:Body><nfeDistDFeInteresse xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe"><nfeDadosMsg>' +
      '<distDFeInt xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.01"><tpAmb>2</tpAmb><cUFAutor>35</cUFAutor><CNPJ>11222333000181</CNPJ>' +
      '<distNSU><ultNSU>000000000000123</ultNSU></distNSU></distDFeInt></nfeDadosMsg></nfeDistDFeInteresse></soap:Body>')
  })

  it('leaves cUFAutor out when it is not configured (optional in distDFeInt_v1.01.xsd)', () => {
    const xml = buildDistNsuEnvelope({ tpAmb: 1, cnpj: '12ABC345000188', ultNSU: '000000000000000' })
    expect(xml).toContain('<tpAmb>1</tpAmb><CNPJ>12ABC345000188</CNPJ>')
    expect(xml).not.toContain('cUFAutor')
  })
})

describe('parseDistAnswer', () => {
  it('reads retDistDFeInt and keeps docZip, NSU and schema verbatim, line breaks included', () => {
    const wrapped = 'H4sIAAAAAAAEAKtWSs7PS8tMBwBTl3lmDgAAAA==\r\nH4sI'
    const parsed = parseDistAnswer(RET(
      '<retDistDFeInt versao="1.01" xmlns="http://www.portalfiscal.inf.br/nfe"><tpAmb>1</tpAmb><verAplic>1.4.0</verAplic>' +
      '<cStat>138</cStat><xMotivo>Documento(s) localizado(s)</xMotivo><dhResp>2026-03-02T10:15:00-03:00</dhResp>' +
      '<ultNSU>000000000000052</ultNSU><maxNSU>000000000000130</maxNSU><loteDistDFeInt>' +
      '<docZip NSU="000000000000051" schema="resNFe_v1.01.xsd">H4sIAAAAAAAEAKtWSs7PS8tMBwBTl3lmDgAAAA==</docZip>' +
      `<docZip schema="procNFe_v4.00.xsd">${wrapped}</docZip>` +
      '</loteDistDFeInt></retDistDFeInt>'))
    expect(parsed).toEqual({
      ret: {
        tpAmb: '1', verAplic: '1.4.0', cStat: '138', xMotivo: 'Documento(s) localizado(s)', dhResp: '2026-03-02T10:15:00-03:00',
        ultNSU: '000000000000052', maxNSU: '000000000000130',
        documentos: [
          { nsu: '000000000000051', schema: 'resNFe_v1.01.xsd', docZip: 'H4sIAAAAAAAEAKtWSs7PS8tMBwBTl3lmDgAAAA==' },
          { nsu: null, schema: 'procNFe_v4.00.xsd', docZip: wrapped }
        ]
      }
    })
  })

  it('reads a prefixed retDistDFeInt the same way (the namespace counts, not the prefix)', () => {
    const parsed = parseDistAnswer(RET('<n:retDistDFeInt xmlns:n="http://www.portalfiscal.inf.br/nfe" versao="1.01"><n:tpAmb>2</n:tpAmb>' +
      '<n:cStat>137</n:cStat><n:xMotivo>Nenhum documento localizado</n:xMotivo><n:ultNSU>000000000000009</n:ultNSU><n:maxNSU>000000000000009</n:maxNSU></n:retDistDFeInt>'))
    expect(parsed).toMatchObject({ ret: { cStat: '137', ultNSU: '000000000000009', documentos: [] } })
  })

  it('reads a SOAP 1.2 Fault and a SOAP 1.1 one', () => {
    expect(parseDistAnswer('<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><soap:Fault>' +
      '<soap:Code><soap:Value>soap:Receiver</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="pt">Erro interno</soap:Text></soap:Reason>' +
      '</soap:Fault></soap:Body></soap:Envelope>')).toEqual({ fault: { code: 'Receiver', reason: 'Erro interno' } })
    expect(parseDistAnswer('<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode>' +
      '<faultstring>Bad request</faultstring></s:Fault></s:Body></s:Envelope>')).toEqual({ fault: { code: 'Client', reason: 'Bad request' } })
  })

  it('returns null for an answer of another service and throws on broken XML or a DOCTYPE', () => {
    expect(parseDistAnswer(RET('<retConsStatServ xmlns="http://www.portalfiscal.inf.br/nfe"><cStat>107</cStat></retConsStatServ>'))).toBeNull()
    expect(() => parseDistAnswer('<soap:Envelope xmlns:soap="x"><soap:Body>')).toThrow()
    expect(() => parseDistAnswer('<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>')).toThrow()
  })
})

describe('assertAnswered', () => {
  const base: RetDistDFeInt = { tpAmb: '1', verAplic: 'x', cStat: '138', xMotivo: 'ok', dhResp: '', ultNSU: '000000000000001', maxNSU: '000000000000002', documentos: [] }

  it('lets 137 and 138 through, maps a paused service to 503 and other cStats to 422 carrying the cursor fields', () => {
    expect(() => assertAnswered(base)).not.toThrow()
    expect(() => assertAnswered({ ...base, cStat: '137' })).not.toThrow()
    expect(() => assertAnswered({ ...base, cStat: '108', xMotivo: 'Servico paralisado momentaneamente' })).toThrow(expect.objectContaining({ status: 503 }))
    expect(() => assertAnswered({ ...base, cStat: '589', xMotivo: 'NSU superior' })).toThrow(expect.objectContaining({
      status: 422, body: { cStat: '589', xMotivo: 'NSU superior', ultNSU: '000000000000001', maxNSU: '000000000000002' }
    }))
  })
})
