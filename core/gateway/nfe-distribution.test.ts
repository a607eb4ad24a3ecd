import { describe, expect, it } from 'vitest'
import { buildDistNsuEnvelope, assertAnswered } from './nfe-distribution.js'
import type { RetDistDFeInt } from './dist-answer.js'

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
