/**
 * Migrations and the company registry on a real PostgreSQL (a fresh database of
 * the run's server), including the constraint that keeps one active import per
 * company and file even when application code is bypassed.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { hasCode } from '../errors.js'
import { isValidCnpj } from '../cnpj.js'
import { addCompany, findCompany, listCompanies, setCompanyActive } from './companies.js'
import { loadMigrations, migrate } from './migrate.js'

let db: TestDatabase
beforeAll(async () => { db = await freshDatabase({ migrate: false }) })
afterAll(async () => { await db.drop() })

async function rejected (promise: Promise<unknown>): Promise<unknown> {
  try { await promise } catch (err) { return err }
  throw new Error('expected a rejection')
}

describe('migrations', () => {
  it('apply once, even from several connections at the same time, and record each version', async () => {
    const clients = await Promise.all([0, 1, 2].map(async () => {
      const c = new pg.Client({ connectionString: db.url })
      await c.connect()
      return c
    }))
    try {
      const applied = await Promise.all(clients.map((c) => migrate(c)))
      const versions = (await loadMigrations()).map((m) => m.version)
      expect(applied.flat().sort((a, b) => a - b)).toEqual(versions)
      expect(await migrate(clients[0]!)).toEqual([])
      const { rows } = await db.pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
      expect(rows.map((r) => r.version)).toEqual(versions)
    } finally {
      await Promise.all(clients.map((c) => c.end()))
    }
  })
})

describe('company registry', () => {
  it('adds, finds, lists, deactivates and activates', async () => {
    const added = await addCompany(db.pool, { codigoDominio: ' 4521 ', nome: 'Padaria Pão Quente Ltda', cnpj: '11.222.333/0001-81' })
    expect(added).toMatchObject({ codigoDominio: '4521', nome: 'Padaria Pão Quente Ltda', cnpj: '11222333000181', ativo: true })
    expect(added.id).toMatch(/^[0-9a-f-]{36}$/)
    await addCompany(db.pool, { codigoDominio: '17', nome: 'Oficina Dois' })
    expect((await listCompanies(db.pool)).map((c) => c.codigoDominio)).toEqual(['17', '4521'])
    expect((await setCompanyActive(db.pool, '4521', false)).ativo).toBe(false)
    expect((await findCompany(db.pool, '4521'))?.ativo).toBe(false)
    expect((await setCompanyActive(db.pool, '4521', true)).ativo).toBe(true)
  })

  it('refuses a second company with the same code, a bad CNPJ and unknown codes', async () => {
    await addCompany(db.pool, { codigoDominio: 'dup', nome: 'Primeira' })
    expect(hasCode(await rejected(addCompany(db.pool, { codigoDominio: 'dup', nome: 'Segunda' })), 'COMPANY_EXISTS')).toBe(true)
    expect(hasCode(await rejected(addCompany(db.pool, { codigoDominio: 'x1', nome: 'X', cnpj: '11.222.333/0001-82' })), 'REQUEST_INVALID')).toBe(true)
    expect(hasCode(await rejected(addCompany(db.pool, { codigoDominio: 'x2', nome: 'X', cnpj: '123' })), 'REQUEST_INVALID')).toBe(true)
    expect(hasCode(await rejected(setCompanyActive(db.pool, 'nope', false)), 'COMPANY_NOT_FOUND')).toBe(true)
    expect(await findCompany(db.pool, 'x1')).toBeUndefined()
  })

  it('checks CNPJ check digits', () => {
    expect(isValidCnpj('11222333000181')).toBe(true)
    expect(isValidCnpj('11444777000161')).toBe(true)
    expect(isValidCnpj('11444777000162')).toBe(false)
    expect(isValidCnpj('00000000000000')).toBe(false)
  })
})

describe('one active import per company and file', () => {
  it('is enforced by the database itself', async () => {
    const company = await addCompany(db.pool, { codigoDominio: 'constraint', nome: 'Constraint SA' })
    const insert = (status: string) => db.pool.query(
      `INSERT INTO importacoes (empresa_id, nome_arquivo, sha256, modo, status, batch_size) VALUES ($1, 'a.xlsx', $2, 'NORMAL', $3, 1000)`,
      [company.id, 'a'.repeat(64), status])
    await insert('VALIDADO')
    await insert('FALHOU')
    await insert('PROCESSANDO')
    const err = await rejected(insert('VALIDADO'))
    expect((err as { code?: string }).code).toBe('23505')
    expect((err as { constraint?: string }).constraint).toBe('importacoes_uma_ativa_por_arquivo')
  })
})
