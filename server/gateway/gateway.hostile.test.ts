/**
 * The gateway's hostile group: concurrent edits of the company hierarchy through real
 * HTTP requests on `razao serve gateway` (its own process, measured apart from the test)
 * and the real PostgreSQL, and `razao gateway rekey`, which re-seals every stored secret
 * or, when one does not open with the old key, changes nothing.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { cnpjCheckDigits } from '../../core/cnpj.js'
import { CertificateStore, createGatewayCompany, parseMasterKey, rekeyCertificates } from '../../core/gateway/index.js'
import type { MasterKey } from '../../core/gateway/index.js'
import { createDevChain } from '../../core/sign/index.js'
import type { DevChain } from '../../core/sign/index.js'
import { serveProcess } from '../../fixtures/serve-process.js'
import type { ServedProcess } from '../../fixtures/serve-process.js'
import { rekeyKeys } from './rekey-command.js'
import { runRazao } from '../../fixtures/razao-cli.js'
import type { RazaoRun } from '../../fixtures/razao-cli.js'
import { runEnvironment } from '../../fixtures/suite/run-env.js'

const ROOT = join(import.meta.dirname, '..', '..')
const ADMIN = `admin-${randomBytes(16).toString('hex')}`
const newKeyText = (): string => randomBytes(32).toString('hex')

let db: TestDatabase
let dir: string
beforeAll(async () => {
  db = await freshDatabase()
  dir = await mkdtemp(join(tmpdir(), 'razao-gateway-hostile-'))
})
afterAll(async () => {
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

/** A valid CNPJ of root `root` (8 digits) and branch number `branch`. */
const cnpj = (root: string, branch: number): string => {
  const base = root + String(branch).padStart(4, '0')
  return base + cnpjCheckDigits(base)
}

/** The razao command (fixtures/razao-cli.ts), on the test database. */
async function razao (args: string[], env: Record<string, string>): Promise<RazaoRun> {
  return await runRazao(args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...runEnvironment(), DATABASE_URL: db.url, RAZAO_DATA_DIR: join(dir, '.data'), LOG_LEVEL: 'warn', ...env }
  })
}

describe('concurrent edits of the company hierarchy', () => {
  let gateway: ServedProcess

  beforeAll(async () => {
    gateway = await serveProcess('gateway', {
      DATABASE_URL: db.url, RAZAO_DATA_DIR: join(dir, '.data'), GATEWAY_PORT: '0',
      GATEWAY_ADMIN_TOKEN: ADMIN, GATEWAY_MASTER_KEY: newKeyText(), GATEWAY_API_KEY: `operational-${randomBytes(16).toString('hex')}`
    })
  }, 120_000)
  afterAll(async () => {
    if (gateway === undefined) return
    process.stderr.write(`gateway hostile group: peak RSS of razao serve gateway ${Math.round(gateway.rss().peak / 2 ** 20)} MB\n`)
    expect(await gateway.stop()).toBe(0)
  })

  const admin = async (method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> => {
    const res = await fetch(`${gateway.url}${path}`, {
      method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: res.status, body: await res.json() }
  }
  let roots = 10_000_000
  /** Three companies of one CNPJ root, all head offices. */
  const trio = async (): Promise<string[]> => {
    const root = String(++roots).padStart(8, '0')
    const codes = []
    for (let branch = 1; branch <= 3; branch++) {
      const res = await admin('POST', '/admin/empresas', { razao_social: `Empresa ${root}/${branch}`, cnpj: cnpj(root, branch) })
      expect(res.status).toBe(201)
      codes.push(res.body.empresa_codigo as string)
    }
    return codes
  }
  /** No branch whose head office is itself a branch, anywhere in the registry. */
  const twoLevels = async (): Promise<number> => (await db.pool.query(
    'SELECT count(*)::int AS n FROM empresas f JOIN empresas m ON m.id = f.matriz_id WHERE m.matriz_id IS NOT NULL')).rows[0].n

  it('A→B and B→C at once: one is refused with 400, never both accepted, over many rounds', async () => {
    const statuses: number[] = []
    for (let round = 0; round < 25; round++) {
      const [a, b, c] = await trio()
      const answers = await Promise.all([
        admin('PATCH', `/admin/empresas/${a}`, { matriz_empresa_codigo: b }),
        admin('PATCH', `/admin/empresas/${b}`, { matriz_empresa_codigo: c })
      ])
      statuses.push(...answers.map((x) => x.status))
      expect(answers.map((x) => x.status).sort()).toEqual([200, 400])
      const refused = answers.find((x) => x.status === 400)!
      expect(refused.body.detail).toMatch(/is itself a branch|has branches of its own/)
    }
    expect(await twoLevels()).toBe(0)
    expect(statuses).not.toContain(500)
  })

  it('two companies made each other\'s branch at once: one wins, the other gets 400, never a deadlock\'s 500', async () => {
    for (let round = 0; round < 25; round++) {
      const [a, b] = await trio()
      const answers = await Promise.all([
        admin('PATCH', `/admin/empresas/${a}`, { matriz_empresa_codigo: b }),
        admin('PATCH', `/admin/empresas/${b}`, { matriz_empresa_codigo: a })
      ])
      expect(answers.map((x) => x.status).sort()).toEqual([200, 400])
    }
    expect(await twoLevels()).toBe(0)
    const mutual = await db.pool.query('SELECT count(*)::int AS n FROM empresas x JOIN empresas y ON y.id = x.matriz_id AND x.id = y.matriz_id')
    expect(mutual.rows[0].n).toBe(0)
  })

  it('a new branch of B and B becoming a branch at once: never two levels', async () => {
    for (let round = 0; round < 15; round++) {
      const [a, b, c] = await trio()
      const root = String(roots).padStart(8, '0')
      const answers = await Promise.all([
        admin('POST', '/admin/empresas', { razao_social: `Filial ${root}`, cnpj: cnpj(root, 4), matriz_empresa_codigo: b }),
        admin('PATCH', `/admin/empresas/${b}`, { matriz_empresa_codigo: c }),
        admin('PATCH', `/admin/empresas/${a}`, { razao_social: `Renomeada ${root}` })
      ])
      // The new branch first (then B has a branch), or B's move first (then B is no head office).
      expect([[200, 400], [201, 400]]).toContainEqual([answers[0]!.status, answers[1]!.status].sort())
      expect(answers[2]!.status).toBe(200)
    }
    expect(await twoLevels()).toBe(0)
  })
})

describe('razao gateway rekey', () => {
  let chain: DevChain
  let oldKey: MasterKey
  let codes: string[]
  beforeAll(async () => {
    chain = createDevChain({ document: cnpj('44555666', 1), password: 'senha do certificado' })
    oldKey = parseMasterKey(newKeyText())!
    const store = new CertificateStore({ pool: db.pool, masterKey: oldKey })
    codes = []
    for (let branch = 1; branch <= 3; branch++) {
      const company = await createGatewayCompany(db.pool, { razaoSocial: `Rekey ${branch}`, cnpj: cnpj('44555666', branch) })
      await store.putCertificate(company.empresaCodigo, chain.pkcs12, chain.password)
      codes.push(company.empresaCodigo)
    }
  }, 120_000)

  const sealedRows = async (): Promise<string> => JSON.stringify((await db.pool.query(
    'SELECT empresa_id, encode(pfx_cifrado, \'hex\') AS p, encode(senha_cifrada, \'hex\') AS s, chave_id FROM certificados ORDER BY empresa_id')).rows)

  it('refuses, changing nothing, when a stored value does not open with the old key', async () => {
    const stranger = parseMasterKey(newKeyText())!
    const company = await createGatewayCompany(db.pool, { razaoSocial: 'Sealed elsewhere', cnpj: cnpj('44555666', 9) })
    await new CertificateStore({ pool: db.pool, masterKey: stranger }).putCertificate(company.empresaCodigo, chain.pkcs12, chain.password)
    const before = await sealedRows()
    const refused = await rekeyCertificates(db.pool, oldKey, parseMasterKey(newKeyText())!).then(() => undefined, (err: unknown) => err as { code: string, message: string })
    expect(refused).toMatchObject({ code: 'GATEWAY_STORE_KEY_MISMATCH' })
    expect(refused!.message).toContain(`1 of 4 stored certificate(s) do not open with the old master key (empresa_codigo ${company.empresaCodigo})`)
    expect(await sealedRows()).toBe(before)

    // Through the command: exit 1, the same sentence, the same rows.
    const cli = await razao(['gateway', 'rekey'], { GATEWAY_OLD_MASTER_KEY: oldKey.key.toString('hex'), GATEWAY_NEW_MASTER_KEY: newKeyText() })
    expect(cli.code).toBe(1)
    expect(cli.stderr).toContain('nothing was changed')
    expect(await sealedRows()).toBe(before)
    await db.pool.query('DELETE FROM certificados WHERE empresa_id = $1', [company.id])
  })

  it('re-seals every certificate in one go: the new key opens them, the old one no longer does', async () => {
    const newText = newKeyText()
    const newKey = parseMasterKey(newText)!
    const keyFile = join(dir, 'new-key')
    await writeFile(keyFile, `${newText}\n`, { mode: 0o600 })
    const cli = await razao(['gateway', 'rekey', '--new-key-file', keyFile], { GATEWAY_MASTER_KEY: oldKey.key.toString('base64') })
    expect(cli.code, cli.stderr).toBe(0)
    expect(JSON.parse(cli.stdout)).toEqual({ certificados: 3, chave_id_anterior: oldKey.id, chave_id_nova: newKey.id })
    expect(cli.stderr).toMatch(/Set GATEWAY_MASTER_KEY to it and restart the gateway/)
    for (const form of [newText, oldKey.key.toString('hex')]) expect(cli.stdout + cli.stderr).not.toContain(form)
    const fresh = new CertificateStore({ pool: db.pool, masterKey: newKey })
    const stale = new CertificateStore({ pool: db.pool, masterKey: oldKey })
    for (const code of codes) {
      const resolved = await fresh.resolveCertificate(code)
      expect(resolved.pfx.equals(chain.pkcs12)).toBe(true)
      expect(resolved.password).toBe(chain.password)
      await expect(stale.resolveCertificate(code)).rejects.toMatchObject({ code: 'GATEWAY_STORE_KEY_MISMATCH' })
    }
    // Run again with the same old key: nothing opens with it any more, nothing changes.
    const again = await razao(['gateway', 'rekey'], { GATEWAY_OLD_MASTER_KEY: oldKey.key.toString('hex'), GATEWAY_NEW_MASTER_KEY: newKeyText() })
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('3 of 3 stored certificate(s) do not open')
  })

  it('says what is missing or wrong before touching the database', async () => {
    const missing = await razao(['gateway', 'rekey'], { GATEWAY_OLD_MASTER_KEY: newKeyText() })
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('GATEWAY_NEW_MASTER_KEY or --new-key-file must give the new master key') })
    const refusal = async (env: NodeJS.ProcessEnv, files: { oldKeyFile?: string, newKeyFile?: string } = {}): Promise<string> =>
      await rekeyKeys(env, files, join(dir, 'no-data')).then(() => 'accepted', (err: Error) => err.message)
    const bad = await refusal({ GATEWAY_OLD_MASTER_KEY: newKeyText(), GATEWAY_NEW_MASTER_KEY: 'short-secret-value' })
    expect(bad).toBe('GATEWAY_NEW_MASTER_KEY must be 32 bytes written as 64 hexadecimal characters or in base64')
    expect(await refusal({ GATEWAY_NEW_MASTER_KEY: newKeyText() }, { newKeyFile: join(dir, 'nope') })).toBe('GATEWAY_NEW_MASTER_KEY and --new-key-file are both given; give one')
    expect(await refusal({}, { newKeyFile: join(dir, 'nope') })).toMatch(/^--new-key-file cannot be read from .*nope \(ENOENT\)$/)
    // No old key configured and no development key file: nothing to open the store with.
    expect(await refusal({ GATEWAY_NEW_MASTER_KEY: newKeyText() })).toMatch(/^GATEWAY_OLD_MASTER_KEY or --old-key-file must give the old master key: GATEWAY_MASTER_KEY is not set and there is no development key file .*gateway-master-key$/)
    const same = newKeyText()
    await expect(rekeyCertificates(db.pool, parseMasterKey(same)!, parseMasterKey(same)!)).rejects.toMatchObject({ code: 'REQUEST_INVALID' })
  })
})
