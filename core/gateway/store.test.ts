/**
 * The encrypted certificate store and the resolver on a real PostgreSQL, with ICP-Brasil
 * style certificates made in the test (core/sign dev chain): what the database holds,
 * what a wrong master key does, what an upload is checked for, and inheritance.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { cnpjCheckDigits } from '../cnpj.js'
import { hasCode } from '../errors.js'
import { createDevChain } from '../sign/index.js'
import type { DevChain } from '../sign/index.js'
import {
  CertificateStore, createGatewayCompany, deactivateGatewayCompany, getGatewayCompany, masterKeyId, parseMasterKey, updateGatewayCompany
} from './index.js'
import type { MasterKey } from './index.js'

const DAY_MS = 86_400_000
let db: TestDatabase
let masterKey: MasterKey
let store: CertificateStore
let matrizChain: DevChain

beforeAll(async () => {
  db = await freshDatabase()
  masterKey = parseMasterKey(randomBytes(32).toString('hex'))!
  store = new CertificateStore({ pool: db.pool, masterKey })
  matrizChain = createDevChain({ document: '11222333000181', password: 'senha secreta da matriz' })
})
afterAll(async () => { await db.drop() })

async function rejected (promise: Promise<unknown>): Promise<{ code?: string, message: string }> {
  try { await promise } catch (err) { return err as { code?: string, message: string } }
  throw new Error('expected a rejection')
}

/** A valid CNPJ from its first 12 characters (the Receita Federal CNPJ rules), for test companies. */
function cnpjWithDigits (base: string): string {
  return base + cnpjCheckDigits(base)
}

let counter = 0
async function company (cnpj: string, extra: { matriz?: string, herda?: boolean } = {}) {
  counter++
  return await createGatewayCompany(db.pool, {
    razaoSocial: `Empresa ${counter}`, cnpj, matrizEmpresaCodigo: extra.matriz, herdaCertificadoMatriz: extra.herda
  })
}

describe('certificate store', () => {
  it('keeps no plaintext certificate, password or key in the database, and gives them back decrypted', async () => {
    const matriz = await company('11.222.333/0001-81')
    const facts = await store.putCertificate(matriz.empresaCodigo, matrizChain.pkcs12, matrizChain.password)
    expect(facts).toMatchObject({ cnpj: '11222333000181', fingerprint: expect.stringMatching(/^[0-9A-F]{64}$/) })
    expect(facts.subject).toMatch(/CN=.*11222333000181/)

    const dump = await db.pool.query<{ t: string }>(`
      SELECT row_to_json(c)::text AS t FROM certificados c UNION ALL
      SELECT row_to_json(e)::text FROM empresas e UNION ALL
      SELECT row_to_json(k)::text FROM chaves_api k`)
    const text = dump.rows.map((r) => r.t).join('\n')
    const raw = await db.pool.query<{ pfx_cifrado: Buffer, senha_cifrada: Buffer }>('SELECT pfx_cifrado, senha_cifrada FROM certificados')
    const bytes = Buffer.concat(raw.rows.flatMap((r) => [r.pfx_cifrado, r.senha_cifrada]))
    expect(text).not.toContain(matrizChain.password)
    expect(bytes.includes(Buffer.from(matrizChain.password))).toBe(false)
    // Any 32-byte window of the PKCS#12 would betray it; check several, and the whole file in the text forms.
    for (const at of [0, 100, 500, matrizChain.pkcs12.length - 32]) {
      const window = matrizChain.pkcs12.subarray(at, at + 32)
      expect(bytes.includes(window)).toBe(false)
      expect(text).not.toContain(window.toString('hex'))
    }
    expect(text).not.toContain(matrizChain.pkcs12.toString('base64').slice(0, 40))
    for (const form of [masterKey.key.toString('hex'), masterKey.key.toString('base64')]) expect(text).not.toContain(form)
    expect(bytes.includes(masterKey.key)).toBe(false)

    const resolved = await store.resolveCertificate(matriz.empresaCodigo)
    expect(resolved.pfx.equals(matrizChain.pkcs12)).toBe(true)
    expect(resolved.password).toBe(matrizChain.password)
    expect(resolved.fingerprint).toBe(facts.fingerprint)
    expect(resolved.empresa.empresaCodigo).toBe(matriz.empresaCodigo)
    expect(resolved.certificateCompany.empresaCodigo).toBe(matriz.empresaCodigo)
  })

  it('refuses to decrypt under another master key, saying so, and refuses a sealed value moved to another company', async () => {
    const a = await company(cnpjWithDigits('555666770001'))
    const b = await company(cnpjWithDigits('555666770002'))
    const chain = createDevChain({ document: a.cnpj!, password: 'pw-a' })
    await store.putCertificate(a.empresaCodigo, chain.pkcs12, chain.password)
    await store.putCertificate(b.empresaCodigo, createDevChain({ document: b.cnpj!, password: 'pw-b' }).pkcs12, 'pw-b')

    const otherKey = parseMasterKey(randomBytes(32).toString('base64'))!
    expect(otherKey.id).not.toBe(masterKey.id)
    const wrong = await rejected(new CertificateStore({ pool: db.pool, masterKey: otherKey }).resolveCertificate(a.empresaCodigo))
    expect(wrong.code).toBe('GATEWAY_STORE_KEY_MISMATCH')
    expect(wrong.message).toMatch(/another master key/)
    // The same key id but other key bytes (a forged id): authentication still fails.
    const forged = new CertificateStore({ pool: db.pool, masterKey: { key: otherKey.key, id: masterKey.id } })
    expect((await rejected(forged.resolveCertificate(a.empresaCodigo))).code).toBe('GATEWAY_STORE_KEY_MISMATCH')

    // Copy A's sealed certificate onto B's row: the additional data names A, so it does not open as B's.
    await db.pool.query(`UPDATE certificados SET pfx_cifrado = (SELECT pfx_cifrado FROM certificados WHERE empresa_id = $1) WHERE empresa_id = $2`, [a.id, b.id])
    const moved = await rejected(store.resolveCertificate(b.empresaCodigo))
    expect(moved.code).toBe('GATEWAY_STORE_KEY_MISMATCH')
  })

  it('checks an upload: wrong password, not a PKCS#12, expired, not yet valid, another CNPJ root, not an e-CNPJ', async () => {
    const c = await company(cnpjWithDigits('777888990001'))
    const good = createDevChain({ document: c.cnpj!, password: 'certa' })
    const wrongPassword = await rejected(store.putCertificate(c.empresaCodigo, good.pkcs12, 'errada'))
    expect(wrongPassword).toMatchObject({ code: 'GATEWAY_CERT_UNREADABLE', message: expect.stringMatching(/password/) })
    const junk = await rejected(store.putCertificate(c.empresaCodigo, randomBytes(2000), 'x'))
    expect(junk).toMatchObject({ code: 'GATEWAY_CERT_UNREADABLE', message: expect.stringMatching(/not a readable PKCS#12/) })
    const now = Date.now()
    const expired = createDevChain({ document: c.cnpj!, password: 'p', signerNotBefore: new Date(now - 400 * DAY_MS), signerNotAfter: new Date(now - DAY_MS) })
    expect((await rejected(store.putCertificate(c.empresaCodigo, expired.pkcs12, 'p'))).code).toBe('GATEWAY_CERT_EXPIRED')
    const future = createDevChain({ document: c.cnpj!, password: 'p', signerNotBefore: new Date(now + DAY_MS), signerNotAfter: new Date(now + 400 * DAY_MS) })
    expect((await rejected(store.putCertificate(c.empresaCodigo, future.pkcs12, 'p'))).code).toBe('GATEWAY_CERT_EXPIRED')
    const otherRoot = createDevChain({ document: '11444777000161', password: 'p' })
    const mismatch = await rejected(store.putCertificate(c.empresaCodigo, otherRoot.pkcs12, 'p'))
    expect(mismatch).toMatchObject({ code: 'GATEWAY_CERT_CNPJ_MISMATCH', message: expect.stringMatching(/11444777.*77788899/) })
    const person = createDevChain({ holder: 'CPF', password: 'p' })
    expect((await rejected(store.putCertificate(c.empresaCodigo, person.pkcs12, 'p'))).code).toBe('GATEWAY_CERT_UNREADABLE')
    // Nothing was written by the refused uploads.
    expect((await db.pool.query('SELECT 1 FROM certificados WHERE empresa_id = $1', [c.id])).rowCount).toBe(0)
    // A branch's certificate (same root, other order number) is accepted, and the 3DES legacy layout opens too.
    const branchCert = createDevChain({ document: cnpjWithDigits('777888990002'), password: 'p', algorithm: '3des' })
    expect((await store.putCertificate(c.empresaCodigo, branchCert.pkcs12, 'p')).cnpj).toBe(branchCert.signer.cert.subject.getField('CN').value.split(':')[1])
  })

  it('reads an alphanumeric CNPJ from the certificate and matches it case-insensitively typed', async () => {
    const cnpj = '12ABC34501DE35'
    const c = await company('12.abc.345/01de-35')
    expect(c.cnpj).toBe(cnpj)
    const chain = createDevChain({ document: cnpj, password: 'alfa' })
    expect((await store.putCertificate(c.empresaCodigo, chain.pkcs12, 'alfa')).cnpj).toBe(cnpj)
    expect((await store.resolveCertificate(c.empresaCodigo)).password).toBe('alfa')
  })

  it('resolves a branch that inherits to its head office certificate, and refuses the rest with typed errors', async () => {
    const matriz = await company(cnpjWithDigits('333444550001'))
    const chain = createDevChain({ document: matriz.cnpj!, password: 'matriz' })
    await store.putCertificate(matriz.empresaCodigo, chain.pkcs12, 'matriz')
    const herda = await company(cnpjWithDigits('333444550002'), { matriz: matriz.empresaCodigo, herda: true })
    const naoHerda = await company(cnpjWithDigits('333444550003'), { matriz: matriz.empresaCodigo })

    const resolved = await store.resolveCertificate(herda.empresaCodigo)
    expect(resolved.empresa).toMatchObject({ empresaCodigo: herda.empresaCodigo, cnpj: herda.cnpj })
    expect(resolved.certificateCompany.empresaCodigo).toBe(matriz.empresaCodigo)
    expect(resolved.pfx.equals(chain.pkcs12)).toBe(true)

    expect((await rejected(store.resolveCertificate(naoHerda.empresaCodigo))).code).toBe('GATEWAY_CERT_MISSING')
    expect((await rejected(store.resolveCertificate('EMPNAOEXISTE'))).code).toBe('GATEWAY_COMPANY_NOT_FOUND')
    await deactivateGatewayCompany(db.pool, naoHerda.empresaCodigo)
    expect((await rejected(store.resolveCertificate(naoHerda.empresaCodigo))).code).toBe('GATEWAY_COMPANY_INACTIVE')

    // Past the certificate's end (a moved clock): expired, for the head office and the branch alike.
    const later = new CertificateStore({ pool: db.pool, masterKey, now: () => new Date(Date.now() + 400 * DAY_MS) })
    expect((await rejected(later.resolveCertificate(herda.empresaCodigo))).code).toBe('GATEWAY_CERT_EXPIRED')
    expect((await rejected(later.resolveCertificate(matriz.empresaCodigo))).code).toBe('GATEWAY_CERT_EXPIRED')

    // The head office deactivated: the inheriting branch has no usable certificate.
    await deactivateGatewayCompany(db.pool, matriz.empresaCodigo)
    expect((await rejected(store.resolveCertificate(herda.empresaCodigo))).code).toBe('GATEWAY_CERT_MISSING')
    await updateGatewayCompany(db.pool, matriz.empresaCodigo, { ativo: true })
    // Inheritance switched off: the branch has no certificate of its own.
    await updateGatewayCompany(db.pool, herda.empresaCodigo, { herdaCertificadoMatriz: false })
    expect((await rejected(store.resolveCertificate(herda.empresaCodigo))).code).toBe('GATEWAY_CERT_MISSING')
  })

  it('keeps the registry\'s structure: branches share the root, one level, inheritance needs a head office', async () => {
    const matriz = await company(cnpjWithDigits('444555660001'))
    const branch = await company(cnpjWithDigits('444555660002'), { matriz: matriz.empresaCodigo })
    const refused = async (p: Promise<unknown>) => (await rejected(p)).code
    expect(await refused(company(cnpjWithDigits('999888770002'), { matriz: matriz.empresaCodigo }))).toBe('REQUEST_INVALID')
    expect(await refused(company(cnpjWithDigits('444555660003'), { matriz: branch.empresaCodigo }))).toBe('REQUEST_INVALID')
    expect(await refused(company(cnpjWithDigits('444555660004'), { herda: true }))).toBe('REQUEST_INVALID')
    expect(await refused(company(cnpjWithDigits('444555660005'), { matriz: 'EMPNAOEXISTE' }))).toBe('REQUEST_INVALID')
    expect(await refused(updateGatewayCompany(db.pool, matriz.empresaCodigo, { matrizEmpresaCodigo: matriz.empresaCodigo }))).toBe('REQUEST_INVALID')
    expect(await refused(updateGatewayCompany(db.pool, matriz.empresaCodigo, { cnpj: '11444777000161' }))).toBe('REQUEST_INVALID')
    expect(await refused(company('11.222.333/0001-82'))).toBe('REQUEST_INVALID')
    expect((await getGatewayCompany(db.pool, branch.empresaCodigo)).matrizEmpresaCodigo).toBe(matriz.empresaCodigo)
    expect(hasCode(await rejected(getGatewayCompany(db.pool, 'NOPE')), 'GATEWAY_COMPANY_NOT_FOUND')).toBe(true)
  })

  it('names a master key by an id that is not the key', () => {
    const key = randomBytes(32)
    expect(masterKeyId(key)).toMatch(/^[0-9a-f]{16}$/)
    expect(key.toString('hex')).not.toContain(masterKeyId(key))
    expect(parseMasterKey('zz')).toBeUndefined()
    expect(parseMasterKey(randomBytes(16).toString('hex'))).toBeUndefined()
    expect(parseMasterKey(key.toString('base64url'))?.key.equals(key)).toBe(true)
  })
})
