import { execFile } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toolsAvailable } from '../../fixtures/pdf/verify.js'
import { assertSigningKeyUsage, assertValidAt, loadPkcs12, readPemCertificates } from './certificate.js'
import { createDevChain, issueCertificate, toPkcs12 } from './dev-chain.js'
import type { DevChain, KeyUsageName } from './dev-chain.js'
import { readOtherNames, readSignerIdentity } from './icp-brasil.js'

const run = promisify(execFile)
let dir: string
let chain: DevChain

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-cert-'))
  chain = createDevChain({ password: 'segredo' })
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

describe('loadPkcs12', () => {
  it('reads the e-CNPJ holder, CNPJ, issuer, serial and validity of an ICP-Brasil-style certificate', () => {
    const m = loadPkcs12(chain.pkcs12, 'segredo')
    expect(m.identity).toMatchObject({
      signerName: 'EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA',
      signerDocument: '11222333000181',
      documentKind: 'CNPJ',
      certificateAuthority: 'AC RAZAO DESENVOLVIMENTO v1 - TESTE'
    })
    expect(m.identity.serialNumber).toBe(new X509Certificate(chain.signer.certPem).serialNumber.toUpperCase())
    expect(m.identity.validUntil.getTime()).toBeGreaterThan(Date.now())
    expect(m.warnings).toEqual([])
  })

  it('orders the chain signer, intermediate, root whatever order the file lists them in', () => {
    const shuffled = toPkcs12(chain.signer, [chain.root, chain.intermediate], 'x')
    const m = loadPkcs12(shuffled, 'x')
    const subjects = m.chain.map((der) => new X509Certificate(der).subject.split('\n').pop())
    expect(subjects).toEqual([
      'CN=EMPRESA DESENVOLVIMENTO RAZAO TESTE LTDA:11222333000181',
      'CN=AC RAZAO DESENVOLVIMENTO v1 - TESTE',
      'CN=AC RAIZ RAZAO DESENVOLVIMENTO - NAO CONFIAVEL'
    ])
  })

  it('takes the holder CPF from otherName 2.16.76.1.3.1 of an e-CPF (after the 8-digit birth date)', () => {
    const pf = createDevChain({ holder: 'CPF', name: 'MARIA DA SILVA', document: '52998224725', password: 'x' })
    const names = readOtherNames(new X509Certificate(pf.signer.certPem).raw)
    expect(names.get('2.16.76.1.3.1')?.slice(8, 19)).toBe('52998224725')
    expect(loadPkcs12(pf.pkcs12, 'x').identity).toMatchObject({ signerName: 'MARIA DA SILVA', signerDocument: '52998224725', documentKind: 'CPF' })
  })

  it('never takes the responsible person\'s CPF (2.16.76.1.3.4) as the e-CNPJ holder\'s document', () => {
    const names = readOtherNames(new X509Certificate(chain.signer.certPem).raw)
    expect(names.get('2.16.76.1.3.4')).toContain('52998224725')
    expect(loadPkcs12(chain.pkcs12, 'segredo').identity.signerDocument).toBe('11222333000181')
  })

  it('falls back to the NAME:digits common name when there are no otherName entries', () => {
    const now = Date.now()
    const root = issueCertificate({ kind: 'root', commonName: 'AC X', notBefore: new Date(now - 1000), notAfter: new Date(now + 1e9) })
    const leaf = issueCertificate({ kind: 'signer', commonName: 'JOSE PEREIRA:52998224725', issuer: root, notBefore: new Date(now - 1000), notAfter: new Date(now + 1e9) })
    const id = readSignerIdentity(new X509Certificate(leaf.certPem))
    expect(id).toMatchObject({ signerName: 'JOSE PEREIRA', signerDocument: '52998224725', documentKind: 'CPF', certificateAuthority: 'AC X' })
  })

  it('refuses a wrong password as SIGN_CERT_INVALID naming the password variable', () => {
    expect(() => loadPkcs12(chain.pkcs12, 'errada')).toThrow(expect.objectContaining({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/SIGN_CERT_PASSWORD/) }))
  })

  it('refuses a file that is not PKCS#12', () => {
    expect(() => loadPkcs12(Buffer.from('not a pfx'), 'x')).toThrow(expect.objectContaining({ code: 'SIGN_CERT_INVALID' }))
  })

  it('refuses to sign with an expired certificate', () => {
    const old = createDevChain({ password: 'x', signerNotBefore: new Date(Date.now() - 400 * 86_400_000), signerNotAfter: new Date(Date.now() - 86_400_000) })
    const m = loadPkcs12(old.pkcs12, 'x')
    expect(() => assertValidAt(m, new Date())).toThrow(expect.objectContaining({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/expired/) }))
  })

  it('warns, naming the issuer, when the file holds only the signer certificate', () => {
    const alone = toPkcs12(chain.signer, [], 'x')
    expect(loadPkcs12(alone, 'x').warnings).toEqual([expect.stringMatching(/signer's issuer \(AC RAZAO DESENVOLVIMENTO v1 - TESTE\) is not in the certificate file/)])
  })

  it('warns when the file holds the root but not the intermediate that issued the signer, and keeps only the signer', () => {
    const m = loadPkcs12(toPkcs12(chain.signer, [chain.root], 'x'), 'x')
    expect(m.chain).toHaveLength(1)
    expect(m.warnings).toEqual([expect.stringMatching(/signer's issuer .* SIGN_CERT_CHAIN_PATH/)])
  })

  it('does not warn when only the root is left out: validators hold it', () => {
    expect(loadPkcs12(toPkcs12(chain.signer, [chain.intermediate], 'x'), 'x').warnings).toEqual([])
  })

  it('builds the path through issuers given beside the file, once each', () => {
    const issuers = readPemCertificates(chain.intermediate.certPem + chain.root.certPem + chain.intermediate.certPem, 'the chain file')
    const m = loadPkcs12(toPkcs12(chain.signer, [chain.root], 'x'), 'x', issuers)
    expect(m.chain.map((c) => c.toString('base64'))).toEqual([chain.signer, chain.intermediate, chain.root].map((c) => new X509Certificate(c.certPem).raw.toString('base64')))
    expect(m.warnings).toEqual([])
  })
})

describe('readPemCertificates', () => {
  it('refuses a file without a certificate, naming it', () => {
    expect(() => readPemCertificates(chain.signer.keyPem, 'The chain file')).toThrow(expect.objectContaining({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/^The chain file holds no PEM certificate/) }))
  })

  it('refuses a certificate block that does not parse', () => {
    expect(() => readPemCertificates('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', 'The chain file')).toThrow(expect.objectContaining({ code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/cannot be read/) }))
  })
})

describe('assertSigningKeyUsage', () => {
  const withUsage = (keyUsage: KeyUsageName[] | undefined): ReturnType<typeof loadPkcs12> => {
    const signer = issueCertificate({
      kind: 'server', commonName: 'servidor.teste', issuer: chain.intermediate, notBefore: new Date(Date.now() - 3_600_000), notAfter: new Date(Date.now() + 86_400_000),
      ...(keyUsage === undefined ? {} : { keyUsage })
    })
    return loadPkcs12(toPkcs12(signer, [chain.intermediate], 'x'), 'x')
  }

  it('reads the keyUsage bits of the certificate', () => {
    expect(loadPkcs12(chain.pkcs12, 'segredo').keyUsage).toEqual(['digitalSignature', 'nonRepudiation', 'keyEncipherment'])
    expect(withUsage(['keyAgreement', 'cRLSign']).keyUsage).toEqual(['keyAgreement', 'cRLSign'])
  })

  it('refuses keyEncipherment alone, naming the bits found and the bits needed', () => {
    expect(() => assertSigningKeyUsage(withUsage(['keyEncipherment']))).toThrow(expect.objectContaining({
      code: 'SIGN_CERT_INVALID', message: expect.stringMatching(/key usage \(keyEncipherment\) allows neither digitalSignature nor nonRepudiation/)
    }))
    expect(() => assertSigningKeyUsage(withUsage(['keyEncipherment', 'dataEncipherment', 'keyAgreement']))).toThrow(/key usage/)
  })

  it('accepts digitalSignature or nonRepudiation alone, and the ICP-Brasil set', () => {
    expect(() => assertSigningKeyUsage(withUsage(['digitalSignature']))).not.toThrow()
    expect(() => assertSigningKeyUsage(withUsage(['nonRepudiation']))).not.toThrow()
    expect(() => assertSigningKeyUsage(loadPkcs12(chain.pkcs12, 'segredo'))).not.toThrow()
  })
})

describe.skipIf(!toolsAvailable('openssl'))('legacy PKCS#12 written by OpenSSL', () => {
  it('opens an RC2/3DES (-legacy) file and keeps every certificate byte-identical', async () => {
    await writeFile(join(dir, 'key.pem'), chain.signer.keyPem)
    await writeFile(join(dir, 'cert.pem'), chain.signer.certPem)
    await writeFile(join(dir, 'chain.pem'), chain.intermediate.certPem + chain.root.certPem)
    const out = join(dir, 'legacy.p12')
    await run('openssl', ['pkcs12', '-export', '-legacy', '-inkey', join(dir, 'key.pem'), '-in', join(dir, 'cert.pem'), '-certfile', join(dir, 'chain.pem'), '-out', out, '-passout', 'pass:antigo'])
    const m = loadPkcs12(await readFile(out), 'antigo')
    expect(m.chain.map((c) => c.toString('base64'))).toEqual([chain.signer, chain.intermediate, chain.root].map((c) => new X509Certificate(c.certPem).raw.toString('base64')))
    expect(m.identity.signerDocument).toBe('11222333000181')
  })
})
