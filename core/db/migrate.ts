/**
 * Plain, numbered SQL migrations (`migrations/NNNN_name.sql`), applied in order at
 * start-up under an advisory lock and recorded in `schema_migrations`. Applying
 * them again is a no-op; several processes starting at once apply each one once.
 */
import { readdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { ClientBase } from 'pg'
import { readRegularFile } from '../files/index.js'

/** The source folder when running TypeScript, its copy in dist/ when built. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))

/** A migration is a few KB of SQL; a file past this (or not a regular file) is refused, not read. */
const MAX_MIGRATION_BYTES = 1024 * 1024

/** Arbitrary, fixed: every razao process takes the same lock to migrate. */
const MIGRATION_LOCK = 7_301_846_211

export interface Migration { version: number, name: string, sql: string }

export async function loadMigrations (dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort()
  const migrations: Migration[] = []
  for (const file of files) {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file)
    if (match === null) throw new Error(`Migration file name "${file}" is not NNNN_name.sql`)
    const version = Number(match[1])
    if (migrations.some((m) => m.version === version)) throw new Error(`Two migrations share version ${version}`)
    migrations.push({ version, name: match[2]!, sql: (await readRegularFile(`${dir}${file}`, MAX_MIGRATION_BYTES)).toString('utf8') })
  }
  return migrations
}

/** Applies the pending migrations, each in its own transaction; returns the versions applied now. */
export async function migrate (client: ClientBase, migrations?: Migration[]): Promise<number[]> {
  const all = migrations ?? await loadMigrations()
  const applied: number[] = []
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version))
    for (const migration of all) {
      if (done.has(migration.version)) continue
      await client.query('BEGIN')
      try {
        await client.query(migration.sql)
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
        await client.query('COMMIT')
      } catch (err) {
        await client.query('ROLLBACK')
        throw new Error(`Migration ${migration.version} (${migration.name}) failed: ${(err as Error).message}`, { cause: err })
      }
      applied.push(migration.version)
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
  }
  return applied
}
