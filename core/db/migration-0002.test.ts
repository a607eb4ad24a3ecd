/**
 * Migration 0002 on a registry that already has companies (the state every installation
 * of the import service is in): they keep working, get an empresa_codigo each, and the
 * CNPJ constraint now takes the alphanumeric form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { addCompany, findCompany, listCompanies } from './companies.js'
import { loadMigrations, migrate } from './migrate.js'

let db: TestDatabase
beforeAll(async () => { db = await freshDatabase({ migrate: false }) })
afterAll(async () => { await db.drop() })

describe('migration 0002 (gateway fields)', () => {
  it('applies to an existing registry: old rows get unique codes and keep working', async () => {
    const client = await db.pool.connect()
    try {
      const all = await loadMigrations()
      expect(await migrate(client, all.filter((m) => m.version === 1))).toEqual([1])
      await client.query(`INSERT INTO empresas (codigo_dominio, nome, cnpj) VALUES ('100', 'Antiga Um', '11222333000181'), ('200', 'Antiga Dois', NULL)`)
      await client.query(`INSERT INTO importacoes (empresa_id, nome_arquivo, sha256, modo, status, batch_size)
        SELECT id, 'a.xlsx', repeat('a', 64), 'NORMAL', 'VALIDADO', 1000 FROM empresas WHERE codigo_dominio = '100'`)
      // Before 0002 the registry refuses letters.
      await expect(client.query(`UPDATE empresas SET cnpj = '12ABC34501DE35' WHERE codigo_dominio = '200'`)).rejects.toMatchObject({ code: '23514' })
      expect(await migrate(client, all)).toEqual(all.filter((m) => m.version > 1).map((m) => m.version))
    } finally {
      client.release()
    }
    const { rows } = await db.pool.query<{ codigo_dominio: string, empresa_codigo: string, herda_certificado_matriz: boolean, matriz_id: string | null }>(
      'SELECT codigo_dominio, empresa_codigo, herda_certificado_matriz, matriz_id FROM empresas ORDER BY codigo_dominio')
    expect(rows).toHaveLength(2)
    for (const r of rows) {
      expect(r.empresa_codigo).toMatch(/^EMP[0-9A-F]{10}$/)
      expect(r).toMatchObject({ herda_certificado_matriz: false, matriz_id: null })
    }
    expect(rows[0]!.empresa_codigo).not.toBe(rows[1]!.empresa_codigo)
    // The import side's module reads and writes as before.
    expect(await findCompany(db.pool, '100')).toMatchObject({ nome: 'Antiga Um', cnpj: '11222333000181', ativo: true, empresaCodigo: rows[0]!.empresa_codigo })
    const added = await addCompany(db.pool, { codigoDominio: '300', nome: 'Nova Alfa', cnpj: '12.abc.345/01de-35' })
    expect(added).toMatchObject({ cnpj: '12ABC34501DE35', empresaCodigo: expect.stringMatching(/^EMP[0-9A-F]{10}$/) })
    expect((await listCompanies(db.pool)).map((c) => c.codigoDominio)).toEqual(['100', '200', '300'])
    const { rows: imports } = await db.pool.query('SELECT status FROM importacoes')
    expect(imports).toEqual([{ status: 'VALIDADO' }])
  })

  it('constrains what the application could get wrong: CNPJ form, unique codes, inheritance without a head office', async () => {
    const bad = async (sql: string, params: unknown[] = []): Promise<string | undefined> => {
      try { await db.pool.query(sql, params) } catch (err) { return (err as { code?: string }).code }
      return undefined
    }
    expect(await bad(`INSERT INTO empresas (nome, cnpj) VALUES ('x', '12abc34501de35')`)).toBe('23514')
    expect(await bad(`INSERT INTO empresas (nome, cnpj) VALUES ('x', '12ABC34501DEAB')`)).toBe('23514')
    expect(await bad(`INSERT INTO empresas (nome, herda_certificado_matriz) VALUES ('x', true)`)).toBe('23514')
    const { rows } = await db.pool.query<{ empresa_codigo: string }>(`SELECT empresa_codigo FROM empresas LIMIT 1`)
    expect(await bad(`INSERT INTO empresas (nome, empresa_codigo) VALUES ('x', $1)`, [rows[0]!.empresa_codigo])).toBe('23505')
    expect(await bad(`INSERT INTO chaves_api (servico, sha256) VALUES ('gateway', 'not-a-hash')`)).toBe('23514')
    // A company without codigo_dominio is allowed now (the gateway registers such companies).
    expect(await bad(`INSERT INTO empresas (nome, cnpj) VALUES ('Só gateway', '11444777000161')`)).toBeUndefined()
  })
})
