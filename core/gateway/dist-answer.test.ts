import { describe, expect, it } from 'vitest'
import { DistAnswerReader, MAX_DOCUMENTS, parseDistAnswer } from './dist-answer.js'

const ENVELOPE = (inner: string, declaration = '<?xml version="1.0" encoding="utf-8"?>'): string =>
  `${declaration}<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>` +
  '<nfeDistDFeInteresseResponse xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe"><nfeDistDFeInteresseResult>' +
  inner + '</nfeDistDFeInteresseResult></nfeDistDFeInteresseResponse></soap:Body></soap:Envelope>'
const FIELDS = '<tpAmb>1</tpAmb><verAplic>1.4.0</verAplic><cStat>138</cStat><xMotivo>Documento(s) localizado(s)</xMotivo>' +
  '<dhResp>2026-03-02T10:15:00-03:00</dhResp><ultNSU>000000000000052</ultNSU><maxNSU>000000000000130</maxNSU>'
const RET = (fields: string, lote = ''): string =>
  ENVELOPE(`<retDistDFeInt versao="1.01" xmlns="http://www.portalfiscal.inf.br/nfe">${fields}${lote}</retDistDFeInt>`)
const DOC = (nsu: number, text = 'H4sIAAAAAAAEAKtWSs7PS8tMBwBTl3lmDgAAAA=='): string =>
  `<docZip NSU="${String(nsu).padStart(15, '0')}" schema="resNFe_v1.01.xsd">${text}</docZip>`
const refusal = (xml: string | Buffer, contentType?: string): string => {
  try {
    parseDistAnswer(xml, contentType)
  } catch (e) {
    expect((e as Error).name).toBe('AnswerRefused')
    return (e as Error).message
  }
  return 'accepted'
}

describe('parseDistAnswer', () => {
  it('reads retDistDFeInt and keeps docZip, NSU and schema as the XML gives them', () => {
    const wrapped = 'H4sIAAAAAAAEAKtWSs7PS8tMBwBTl3lmDgAAAA==\nH4sI'
    const parsed = parseDistAnswer(RET(FIELDS, `<loteDistDFeInt>${DOC(51)}<docZip schema="procNFe_v4.00.xsd">${wrapped}</docZip></loteDistDFeInt>`))
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
    // A CR LF in the text is one line feed once parsed (XML 1.0 §2.11), as any XML reader gives it.
    expect(parseDistAnswer(RET(FIELDS, `<loteDistDFeInt>${DOC(1, 'H4sI\r\nAAAA')}</loteDistDFeInt>`))).toMatchObject({ ret: { documentos: [{ docZip: 'H4sI\nAAAA' }] } })
  })

  it('reads a prefixed retDistDFeInt the same way (the namespace counts, not the prefix)', () => {
    const parsed = parseDistAnswer(ENVELOPE('<n:retDistDFeInt xmlns:n="http://www.portalfiscal.inf.br/nfe" versao="1.01"><n:tpAmb>2</n:tpAmb><n:verAplic>x</n:verAplic>' +
      '<n:cStat>137</n:cStat><n:xMotivo>Nenhum documento localizado</n:xMotivo><n:dhResp>2026-03-02T10:15:00-03:00</n:dhResp>' +
      '<n:ultNSU>000000000000009</n:ultNSU><n:maxNSU>000000000000009</n:maxNSU></n:retDistDFeInt>'))
    expect(parsed).toMatchObject({ ret: { cStat: '137', ultNSU: '000000000000009', documentos: [] } })
  })

  it('reads a SOAP 1.2 Fault and a SOAP 1.1 one', () => {
    expect(parseDistAnswer('<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><soap:Fault>' +
      '<soap:Code><soap:Value>soap:Receiver</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="pt">Erro interno</soap:Text><soap:Text xml:lang="en">Internal</soap:Text></soap:Reason>' +
      '<soap:Detail><a><b><c/></b></a></soap:Detail></soap:Fault></soap:Body></soap:Envelope>')).toEqual({ fault: { code: 'Receiver', reason: 'Erro interno' } })
    expect(parseDistAnswer('<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode>' +
      '<faultstring>Bad request</faultstring></s:Fault></s:Body></s:Envelope>')).toEqual({ fault: { code: 'Client', reason: 'Bad request' } })
  })

  it('refuses what the schema does not place where it stands', () => {
    expect(refusal('<html><body>Erro</body></html>')).toBe('it holds html (no namespace), which the schema does not allow there')
    expect(refusal('<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body/></soap:Envelope>')).toBe('its Body is empty')
    expect(refusal(RET('<retConsStatServ xmlns="http://www.portalfiscal.inf.br/nfe"><cStat>107</cStat></retConsStatServ>').replace('<retDistDFeInt versao="1.01" xmlns="http://www.portalfiscal.inf.br/nfe">', '').replace('</retDistDFeInt>', '')))
      .toContain('nfeDistDFeInteresseResult holds retConsStatServ')
    expect(refusal(RET(FIELDS.replace('<verAplic>1.4.0</verAplic>', '')))).toBe('its retDistDFeInt holds cStat (namespace http://www.portalfiscal.inf.br/nfe) where the schema expects verAplic')
    expect(refusal(RET(FIELDS.replace('<maxNSU>000000000000130</maxNSU>', '')))).toBe('its retDistDFeInt has no maxNSU')
    expect(refusal(RET(FIELDS.replace('<cStat>138</cStat>', '<cStat>13</cStat>')))).toBe('its cStat is "13", which its schema type does not allow')
    expect(refusal(RET(FIELDS, '<loteDistDFeInt></loteDistDFeInt>'))).toBe('its loteDistDFeInt has no docZip')
    expect(refusal(RET(FIELDS, '<loteDistDFeInt><docZip NSU="000000000000001">H4sI</docZip></loteDistDFeInt>'))).toMatch(/no schema attribute/)
    expect(refusal(RET(FIELDS, `<loteDistDFeInt>${DOC(1, 'H4sI!')}</loteDistDFeInt>`))).toMatch(/docZip is "H4sI!", which its schema type does not allow/)
    expect(refusal(RET(FIELDS).replace('versao="1.01"', 'versao="1.02"'))).toMatch(/versao "1.02"; the gateway reads layout 1.01/)
    expect(refusal(RET(FIELDS).replace('<soap:Body>', '<soap:Body>texto'))).toBe('its Body holds text where the schema allows only elements')
  })

  it('refuses a DOCTYPE, a processing instruction, broken XML, a duplicate attribute and deep nesting', () => {
    expect(refusal('<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>')).toMatch(/DOCTYPE/)
    expect(refusal(RET(FIELDS).replace('<soap:Body>', '<soap:Body><?php x?>'))).toMatch(/processing instruction/)
    expect(refusal('<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>')).toMatch(/not well-formed XML/)
    expect(refusal(RET(FIELDS, `<loteDistDFeInt>${DOC(1).replace('NSU=', 'NSU="000000000000002" NSU=')}</loteDistDFeInt>`))).toMatch(/duplicate attribute/)
    const deep = '<a>'.repeat(40) + '</a>'.repeat(40)
    expect(refusal('<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><soap:Fault><soap:Code><soap:Value>soap:Sender</soap:Value></soap:Code>' +
      `<soap:Reason><soap:Text>x</soap:Text></soap:Reason><soap:Detail>${deep}</soap:Detail></soap:Fault></soap:Body></soap:Envelope>`)).toBe('its elements nest deeper than 32 levels')
  })

  it(`accepts ${MAX_DOCUMENTS} docZip and refuses the next one`, () => {
    const docs = (n: number): string => Array.from({ length: n }, (_, i) => DOC(i + 1)).join('')
    expect(parseDistAnswer(RET(FIELDS, `<loteDistDFeInt>${docs(MAX_DOCUMENTS)}</loteDistDFeInt>`))).toMatchObject({ ret: { documentos: { length: MAX_DOCUMENTS } } })
    expect(refusal(RET(FIELDS, `<loteDistDFeInt>${docs(MAX_DOCUMENTS + 1)}</loteDistDFeInt>`))).toBe('its loteDistDFeInt holds more than 50 docZip elements, the most the schema allows')
  })
})

describe('the encoding of an answer', () => {
  const latin1 = (declaration: string): Buffer => Buffer.from(RET(FIELDS.replace('Documento(s) localizado(s)', 'Rejeição: não')).replace('<?xml version="1.0" encoding="utf-8"?>', declaration), 'latin1')

  it('decodes ISO-8859-1 when the declaration or the Content-Type says so, and UTF-8 by default', () => {
    expect(parseDistAnswer(latin1('<?xml version="1.0" encoding="ISO-8859-1"?>'))).toMatchObject({ ret: { xMotivo: 'Rejeição: não' } })
    expect(parseDistAnswer(latin1(''), 'application/soap+xml; charset=iso-8859-1')).toMatchObject({ ret: { xMotivo: 'Rejeição: não' } })
    expect(parseDistAnswer(Buffer.from(`\ufeff${RET(FIELDS.replace('Documento(s) localizado(s)', 'Rejeição'))}`, 'utf8'))).toMatchObject({ ret: { xMotivo: 'Rejeição' } })
  })

  it('refuses bytes that are not the declared encoding, an unknown encoding and a header that contradicts the declaration', () => {
    expect(refusal(latin1(''))).toBe('it holds bytes that are not UTF-8, the encoding it declares')
    expect(refusal(latin1('<?xml version="1.0" encoding="windows-1250"?>'))).toMatch(/names the encoding "windows-1250", which the gateway does not read/)
    expect(refusal(latin1('<?xml version="1.0" encoding="ISO-8859-1"?>'), 'application/soap+xml; charset=utf-8')).toBe('its Content-Type says utf-8 but its XML declaration says iso-8859-1')
    expect(refusal(Buffer.from(`\ufeff${RET(FIELDS)}`, 'utf16le'))).toMatch(/UTF-16/)
  })

  it('reads a docZip the same whether its text is plain Base64 or goes through the parser, however the bytes are split', () => {
    // A '>' inside an attribute, CDATA, a character reference and a CR LF: all through saxes after the first plain run.
    const lote = '<loteDistDFeInt><docZip NSU="000000000000001" schema="a>b">AAAA<![CDATA[BBBB]]>CC&#68;D\r\nEE</docZip>' +
      `${DOC(2, 'H4sI\nAAAA')}<docZip schema="x"/></loteDistDFeInt>`
    const bytes = Buffer.from(RET(FIELDS, lote), 'utf8')
    for (const size of [1, 2, 5, 64, bytes.length]) {
      const reader = new DistAnswerReader(undefined)
      for (let at = 0; at < bytes.length; at += size) reader.write(bytes.subarray(at, at + size))
      expect(reader.end()).toMatchObject({ ret: { documentos: [{ docZip: 'AAAABBBBCCDD\nEE', schema: 'a>b' }, { docZip: 'H4sI\nAAAA' }, { docZip: '', schema: 'x' }] } })
    }
  })

  it('reads the same answer however its bytes are split, even inside a character or the declaration', () => {
    const bytes = Buffer.from(RET(FIELDS.replace('Documento(s) localizado(s)', 'Rejeição')), 'utf8')
    for (const size of [1, 3, 7]) {
      const reader = new DistAnswerReader(undefined)
      for (let at = 0; at < bytes.length; at += size) reader.write(bytes.subarray(at, at + size))
      expect(reader.end()).toMatchObject({ ret: { xMotivo: 'Rejeição' } })
    }
  })
})
