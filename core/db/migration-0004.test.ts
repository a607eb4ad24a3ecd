/**
 * Migration 0004 on a database from before it: the movements of active imports become
 * runs of active ids, the earliest import keeping a movement two of them repeat; two
 * active companies with one CNPJ stop the migration with their codes named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase } from '../../fixtures/db/test-database.js'
import type { TestDatabase } from '../../fixtures/db/test-database.js'
import { loadMigrations, migrate } from './migrate.js'

let db: TestDatabase
beforeAll(async () => { db = await freshDatabase({ migrate: false }) })
afterAll(async () => { await db.drop() })

describe('migration 0004 (movement identity, one active company per CNPJ)', () => {
  it('stops on two active companies with one CNPJ, naming them; once one is inactive, fills the active ids, earliest import first', async () => {
    const client = await db.pool.connect()
    try {
      const all = await loadMigrations()
      expect(await migrate(client, all.filter((m) => m.version < 4))).toEqual([1, 2, 3])
      await client.query(`INSERT INTO empresas (codigo_dominio, nome, cnpj) VALUES ('100', 'Padaria', '11222333000181'), ('101', 'Padaria de novo', '11222333000181'), ('200', 'Outra', NULL)`)
      const imports = [['100', 'a', 'VALIDADO', [1, 2, 3, 10, 11]], ['100', 'b', 'VALIDADO', [3, 4, 5]], ['100', 'c', 'SUBSTITUIDO', [20]], ['200', 'd', 'VALIDADO', [1, 2]]] as const
      for (const [code, sha, status, ids] of imports) {
        const { rows } = await client.query<{ seq: string, id: string }>(
          `INSERT INTO importacoes (empresa_id, nome_arquivo, sha256, modo, status, batch_size, substituida_por)
           SELECT id, $2 || '.xlsx', repeat($2, 64), 'NORMAL', $3, 1000, CASE WHEN $3 = 'SUBSTITUIDO' THEN (SELECT min(i.id::text)::uuid FROM importacoes i) END
             FROM empresas WHERE codigo_dominio = $1 RETURNING seq::text, id`, [code, sha, status])
        for (const id of ids) {
          await client.query(`INSERT INTO movimentos (importacao_seq, linha_origem, id, id_movim_finan, credito, debito) VALUES ($1, $2, $3, 1, 0, 0)`, [rows[0]!.seq, id, id])
        }
      }
      await expect(migrate(client, all)).rejects.toThrow(/Several active companies share a CNPJ \(CNPJ 11222333000181: 100, 101\)\. Deactivate all but one of each \(razao companies deactivate --codigo-dominio CODE\)/)
      await client.query(`UPDATE empresas SET ativo = false WHERE codigo_dominio = '101'`)
      expect(await migrate(client, all)).toEqual(all.filter((m) => m.version >= 4).map((m) => m.version))
    } finally {
      client.release()
    }
    const { rows } = await db.pool.query<{ empresa: string, arquivo: string, ids: string }>(
      `SELECT e.codigo_dominio AS empresa, i.nome_arquivo AS arquivo, a.ids::text
         FROM movimentos_ativos a JOIN empresas e ON e.id = a.empresa_id JOIN importacoes i ON i.seq = a.importacao_seq
        ORDER BY 1, lower(a.ids)`)
    // Id 3 is in two active imports of company 100: the earlier (a) keeps it.
    expect(rows).toEqual([
      { empresa: '100', arquivo: 'a.xlsx', ids: '[1,4)' },
      { empresa: '100', arquivo: 'b.xlsx', ids: '[4,6)' },
      { empresa: '100', arquivo: 'a.xlsx', ids: '[10,12)' },
      { empresa: '200', arquivo: 'd.xlsx', ids: '[1,3)' }
    ])
    // The registry now refuses a second active company with that CNPJ.
    await expect(db.pool.query(`UPDATE empresas SET ativo = true WHERE codigo_dominio = '101'`)).rejects.toMatchObject({ code: '23505' })
  })
})
