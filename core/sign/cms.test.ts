import { X509Certificate, createHash, verify } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { loadPkcs12 } from './certificate.js'
import { buildCades, issuerAndSerial, OID } from './cms.js'
import { child, children, compareDer, decodeOid, readNode } from './der.js'
import { createDevChain } from './dev-chain.js'

const chain = createDevChain({ password: 'x' })
const material = loadPkcs12(chain.pkcs12, 'x')
const digest = createHash('sha256').update('conteúdo assinado').digest()

async function signerInfo (policy?: { oid: string, hash: Buffer }) {
  const cms = await buildCades(digest, { material, policy })
  const signedData = child(child(readNode(cms), 1), 0)
  const parts = children(signedData)
  return { cms, parts, si: children(child(parts[parts.length - 1]!, 0)) }
}

describe('buildCades', () => {
  it('emits content-type, message-digest and signing-certificate-v2, no signing-time, sorted in DER order', async () => {
    const { si } = await signerInfo({ oid: '2.16.76.1.7.1.11.1.3', hash: digest })
    const attrs = children(si[3]!)
    const oids = attrs.map((a) => decodeOid(child(a, 0).content))
    expect(oids).toEqual(expect.arrayContaining([OID.contentType, OID.messageDigest, OID.signingCertificateV2, OID.signaturePolicyIdentifier]))
    expect(oids).not.toContain(OID.signingTime)
    for (let i = 1; i < attrs.length; i++) expect(compareDer(attrs[i - 1]!.bytes, attrs[i]!.bytes)).toBeLessThan(0)
  })

  it('signs the attributes re-encoded as a DER SET, as a validator that re-encodes them computes', async () => {
    const { si } = await signerInfo()
    const signed = Buffer.concat([Buffer.from([0x31]), si[3]!.bytes.subarray(1)])
    expect(verify('sha256', signed, material.leaf.publicKey, si[5]!.content)).toBe(true)
    const md = children(si[3]!).find((a) => decodeOid(child(a, 0).content) === OID.messageDigest)!
    expect(child(child(md, 1), 0).content.equals(digest)).toBe(true)
  })

  it('identifies the signer certificate by SHA-256 hash and issuer + serial in ESSCertIDv2', async () => {
    const { si } = await signerInfo()
    const ess = children(si[3]!).find((a) => decodeOid(child(a, 0).content) === OID.signingCertificateV2)!
    const certId = child(child(child(child(ess, 1), 0), 0), 0)
    const [hash, issuerSerial] = children(certId)
    expect(hash!.content.equals(createHash('sha256').update(material.chain[0]!).digest())).toBe(true)
    const { issuer, serial } = issuerAndSerial(material.chain[0]!)
    expect(child(child(child(issuerSerial!, 0), 0), 0).bytes.equals(issuer)).toBe(true)
    expect(child(issuerSerial!, 1).bytes.equals(serial)).toBe(true)
  })

  it('carries the whole chain and no eContent (detached)', async () => {
    const { parts } = await signerInfo()
    const certs = children(parts.find((p) => p.tag === 0xa0)!).map((c) => new X509Certificate(c.bytes).subject.split('\n').pop())
    expect(certs).toHaveLength(3)
    expect(children(parts[2]!)).toHaveLength(1)
  })
})
