/**
 * `razao companies …`, `razao import …` and `razao imports …` as a user runs them: child
 * processes on the TypeScript sources with DATABASE_URL pointing at a fresh database of the
 * run's PostgreSQL, including a process killed in the middle of a load, one interrupted by
 * Ctrl-C (a real SIGINT) and one cancelled from another process.
 */
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { holdLoadsAt as holdLoadsAtRow } from '../fixtures/db/load-gate.js'
import type { LoadGate } from '../fixtures/db/load-gate.js'
import { freshDatabase } from '../fixtures/db/test-database.js'
import type { TestDatabase } from '../fixtures/db/test-database.js'
import { generateLedger } from '../fixtures/ledger/generate.js'
import type { LedgerFacts } from '../fixtures/ledger/generate.js'
import { centsToDecimal } from '../core/money/index.js'
import { razaoArgs } from '../fixtures/razao-cli.js'

let dir: string
let db: TestDatabase
let ledger: string
let facts: LedgerFacts

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-cli-import-'))
  db = await freshDatabase()
  ledger = join(dir, 'ledger.xlsx')
  facts = await generateLedger({ path: ledger, format: 'xlsx', rows: 4000, seed: 31, textAmountEvery: 5 })
}, 120_000)
afterAll(async () => {
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

interface Run { code: number | null, stdout: string, stderr: string }

function start (args: string[], stdin?: Buffer): ChildProcess {
  const child = spawn(process.execPath, [...razaoArgs(), ...args], {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, RAZAO_DATA_DIR: join(dir, 'data'), DATABASE_URL: db.url },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']
  })
  if (stdin !== undefined) child.stdin!.end(stdin)
  return child
}

/** Every load of this file's database held at `row` (fixtures/db/load-gate.ts). */
const holdLoadsAt = async (row: number): Promise<LoadGate> => await holdLoadsAtRow(db.pool, 7316, row)

/** A running razao whose stderr lines can be waited for. */
function watch (args: string[]) {
  const child = start(args)
  let stdout = ''
  let stderr = ''
  const waiters: Array<() => void> = []
  child.stdout!.on('data', (c: Buffer) => { stdout += c.toString() })
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString()
    for (const w of waiters.splice(0)) w()
  })
  const exited = new Promise<Run>((resolve) => child.on('close', (code) => {
    for (const w of waiters.splice(0)) w()
    resolve({ code, stdout, stderr })
  }))
  let closed = false
  void exited.then(() => { closed = true })
  return {
    child,
    exited,
    /** Resolves with the first stderr line matching `pattern`. */
    line: async (pattern: RegExp): Promise<string> => {
      for (;;) {
        const found = stderr.split('\n').find((l) => pattern.test(l))
        if (found !== undefined) return found
        if (closed) throw new Error(`razao ended without such a line: ${stderr}`)
        await new Promise<void>((resolve) => waiters.push(resolve))
      }
    }
  }
}

function razao (args: string[], stdin?: Buffer): Promise<Run> {
  return new Promise((resolve) => {
    const child = start(args, stdin)
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (c: Buffer) => { stdout += c.toString() })
    child.stderr!.on('data', (c: Buffer) => { stderr += c.toString() })
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe('razao companies', () => {
  it('add, list, deactivate and activate, with JSON on stdout', async () => {
    const add = await razao(['companies', 'add', '--codigo-dominio', '9001', '--nome', 'Mercado Bom Preço', '--cnpj', '11.444.777/0001-61'])
    expect(add.stderr).toBe('')
    expect(add.code).toBe(0)
    expect(JSON.parse(add.stdout)).toMatchObject({ codigo_dominio: '9001', nome: 'Mercado Bom Preço', cnpj: '11444777000161', ativo: true })
    await razao(['companies', 'add', '--codigo-dominio', '42', '--nome', 'Outra'])

    const list = await razao(['companies', 'list'])
    expect(list.code).toBe(0)
    const companies = JSON.parse(list.stdout) as Array<Record<string, unknown>>
    expect(companies.map((c) => c.codigo_dominio)).toEqual(['42', '9001'])

    const off = await razao(['companies', 'deactivate', '--codigo-dominio', '9001'])
    expect(off.code).toBe(0)
    expect(JSON.parse(off.stdout)).toMatchObject({ codigo_dominio: '9001', ativo: false })
    const on = await razao(['companies', 'activate', '--codigo-dominio', '9001'])
    expect(JSON.parse(on.stdout)).toMatchObject({ ativo: true })
  })

  it('accepts an alphanumeric CNPJ typed in lower case with its mask, and stores it upper-case and bare', async () => {
    const add = await razao(['companies', 'add', '--codigo-dominio', '9100', '--nome', 'Nova Alfa Ltda', '--cnpj', '12.abc.345/01de-35'])
    expect(add.code).toBe(0)
    expect(JSON.parse(add.stdout)).toMatchObject({ codigo_dominio: '9100', cnpj: '12ABC34501DE35', empresa_codigo: expect.stringMatching(/^[A-Z0-9]{4,32}$/) })
    const wrongDigits = await razao(['companies', 'add', '--codigo-dominio', '9101', '--nome', 'X', '--cnpj', '12.ABC.345/01DE-53'])
    expect(wrongDigits.code).toBe(2)
    expect(wrongDigits.stderr).toMatch(/not a valid CNPJ/)
  })

  it('refuses a duplicate code (exit 1), a bad CNPJ or a missing flag (exit 2), an unknown code (exit 1)', async () => {
    const dup = await razao(['companies', 'add', '--codigo-dominio', '42', '--nome', 'De novo'])
    expect(dup.code).toBe(1)
    expect(dup.stderr).toMatch(/already registered/)
    const cnpj = await razao(['companies', 'add', '--codigo-dominio', '77', '--nome', 'X', '--cnpj', '12345'])
    expect(cnpj.code).toBe(2)
    expect(cnpj.stderr).toMatch(/not a valid CNPJ/)
    const missing = await razao(['companies', 'add', '--nome', 'X'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/--codigo-dominio/)
    // One active company per CNPJ: the error names the company that has it.
    const sameCnpj = await razao(['companies', 'add', '--codigo-dominio', '9002', '--nome', 'Mercado de Novo', '--cnpj', '11444777000161'])
    expect(sameCnpj.code).toBe(1)
    expect(sameCnpj.stderr).toMatch(/CNPJ 11\.444\.777\/0001-61 already belongs to the active company "Mercado Bom Preço" \(codigo_dominio "9001"/)
    expect(sameCnpj.stderr).not.toMatch(/ at |\.ts:/)
    const unknown = await razao(['companies', 'deactivate', '--codigo-dominio', 'nope'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/No company is registered/)
    expect(unknown.stderr).not.toMatch(/ at |\.ts:/)
  })
})

describe('razao import', () => {
  it('loads a ledger, refuses the duplicate, replaces it with --reimportar', async () => {
    const first = await razao(['import', ledger, '--codigo-dominio', '9001'])
    expect(first.code).toBe(0)
    const body = JSON.parse(first.stdout) as Record<string, unknown>
    expect(body).toMatchObject({ status: 'VALIDADO', inserted_rows: facts.totalRows, total_debit: facts.totalDebitCents / 100, modo_importacao: 'NORMAL' })
    const { rows } = await db.pool.query<{ debito: string }>('SELECT sum(debito)::text AS debito FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1)', [body.importacao_id])
    expect(rows[0]!.debito).toBe(centsToDecimal(facts.totalDebitCents))

    // The same bytes from standard input: the same file, refused as the duplicate.
    const dup = await razao(['import', '-', '--codigo-dominio', '9001'], await readFile(ledger))
    expect(dup.code).toBe(1)
    expect(dup.stderr).toMatch(/already has an active import/)
    const again = await razao(['import', ledger, '--codigo-dominio', '9001', '--reimportar'])
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ replaced_importacao_id: body.importacao_id, modo_importacao: 'REIMPORTAR' })
  })

  it('loads the same ledger exported as CSV: NORMAL refuses its movements, already imported; --reimportar replaces the XLSX import', async () => {
    const csv = join(dir, 'ledger.csv')
    // Tab-separated UTF-8 with a BOM, as Excel's "CSV UTF-8" export with tabs; the same seed, the same ledger.
    expect(await generateLedger({ path: csv, format: 'csv', csv: { delimiter: '\t', encoding: 'utf-8-bom' }, rows: 4000, seed: 31, textAmountEvery: 5 })).toEqual(facts)
    const refused = await razao(['import', csv, '--codigo-dominio', '9001'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(new RegExp(`${facts.totalRows} movements of this file are already imported for company "9001"`))
    const replaced = await razao(['import', csv, '--codigo-dominio', '9001', '--reimportar'])
    expect(replaced.code).toBe(0)
    const body = JSON.parse(replaced.stdout) as Record<string, unknown>
    expect(body).toMatchObject({ file_name: 'ledger.csv', status: 'VALIDADO', inserted_rows: facts.totalRows, total_debit: facts.totalDebitCents / 100, modo_importacao: 'REIMPORTAR' })
    const { rows } = await db.pool.query<{ debito: string, credito: string }>('SELECT sum(debito)::text AS debito, sum(credito)::text AS credito FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1)', [body.importacao_id])
    expect(rows[0]).toEqual({ debito: centsToDecimal(facts.totalDebitCents), credito: centsToDecimal(facts.totalCreditCents) })
  })

  it('a process killed mid-load leaves nothing visible, and the next start marks its import FALHOU', async () => {
    await db.pool.query("CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(3); RETURN NEW; END $$")
    await db.pool.query('CREATE TRIGGER stall BEFORE INSERT ON movimentos FOR EACH ROW WHEN (NEW.linha_origem = 3000) EXECUTE FUNCTION stall()')
    try {
      const child = start(['import', ledger, '--codigo-dominio', '42'])
      const exited = new Promise((resolve) => child.on('close', resolve))
      const until = Date.now() + 30_000
      let inProgress: string | undefined
      while (inProgress === undefined && Date.now() < until) {
        const { rows } = await db.pool.query<{ id: string }>("SELECT i.id FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = '42' AND i.status = 'PROCESSANDO'")
        inProgress = rows[0]?.id
        if (inProgress === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(inProgress).toBeDefined()
      child.kill('SIGKILL')
      await exited
      // The dead client's session ends when its backend next reads the socket (at
      // once, or after the stall); recovery only marks it once the session is gone.
      // The next start of any razao process (here: a CLI command) marks it failed.
      let status = 'PROCESSANDO'
      while (status === 'PROCESSANDO' && Date.now() < until) {
        const next = await razao(['companies', 'list'])
        expect(next.code).toBe(0)
        status = (await db.pool.query<{ status: string }>('SELECT status FROM importacoes WHERE id = $1', [inProgress])).rows[0]!.status
      }
      expect(status).toBe('FALHOU')
      const { rows } = await db.pool.query<{ status: string, erro: string, n: string }>(
        'SELECT status, erro, (SELECT count(*) FROM movimentos WHERE importacao_seq = (SELECT seq FROM importacoes WHERE id = $1)) AS n FROM importacoes WHERE id = $1', [inProgress])
      expect(rows[0]).toMatchObject({ status: 'FALHOU', n: '0' })
      expect(rows[0]!.erro).toMatch(/interrupted/)
    } finally {
      await db.pool.query('DROP TRIGGER IF EXISTS stall ON movimentos')
    }
    const retry = await razao(['import', ledger, '--codigo-dominio', '42'])
    expect(retry.code).toBe(0)
    expect(JSON.parse(retry.stdout)).toMatchObject({ status: 'VALIDADO', inserted_rows: facts.totalRows })
  }, 90_000)
})

describe('razao import --follow and Ctrl-C', () => {
  it('shows phase, rows and rate as plain lines, writes them to its row, and on SIGINT rolls the load back: CANCELADO, exit 130', async () => {
    await razao(['companies', 'add', '--codigo-dominio', 'ctrl-c', '--nome', 'Interrompida'])
    const gate = await holdLoadsAt(3000)
    try {
      const run = watch(['import', ledger, '--codigo-dominio', 'ctrl-c', '--follow'])
      const line = await run.line(/carregando/)
      const id = /import ledger\.xlsx ([0-9a-f-]{36}): carregando, \d+ rows read, \d+ rows\/s/.exec(line)?.[1]
      expect(id, line).toBeDefined()
      // Others see it: its row carries the phase and the rows read (written once a second).
      await expect.poll(async () => (await db.pool.query<{ fase: string, linhas_lidas: number, status: string, origem: string }>(
        'SELECT fase, linhas_lidas, status, origem FROM importacoes WHERE id = $1', [id])).rows[0]).toMatchObject({ status: 'PROCESSANDO', origem: 'cli', fase: 'carregando', linhas_lidas: expect.any(Number) })
      await expect.poll(async () => (await db.pool.query<{ n: number }>('SELECT linhas_lidas AS n FROM importacoes WHERE id = $1', [id])).rows[0]!.n).toBeGreaterThan(0)
      run.child.kill('SIGINT')
      const ended = await run.exited
      expect(ended.code).toBe(130)
      expect(ended.stderr).toContain(`razao: import ${id!} cancelled: nothing of it was kept`)
      expect(ended.stdout).toBe('')
      const { rows } = await db.pool.query<{ status: string, erro_codigo: string, n: number }>(
        'SELECT status, erro_codigo, (SELECT count(*)::int FROM movimentos m WHERE m.importacao_seq = i.seq) AS n FROM importacoes i WHERE id = $1', [id])
      expect(rows).toEqual([{ status: 'CANCELADO', erro_codigo: 'IMPORT_CANCELLED', n: 0 }])
    } finally {
      await gate.release()
    }
  }, 90_000)
})

describe('razao imports', () => {
  it('lists, shows and cancels imports, one running in another process included', async () => {
    await razao(['companies', 'add', '--codigo-dominio', 'outro-processo', '--nome', 'Cancelada de fora'])
    const gate = await holdLoadsAt(3000)
    let id: string | undefined
    try {
      const load = watch(['import', ledger, '--codigo-dominio', 'outro-processo'])
      while (id === undefined) {
        const { rows } = await db.pool.query<{ id: string }>("SELECT i.id FROM importacoes i JOIN empresas e ON e.id = i.empresa_id WHERE e.codigo_dominio = 'outro-processo' AND i.status = 'PROCESSANDO'")
        id = rows[0]?.id
        if (id === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const shownRunning = await razao(['imports', 'show', id])
      expect(shownRunning.code).toBe(0)
      expect(JSON.parse(shownRunning.stdout)).toMatchObject({ importacao_id: id, status: 'PROCESSANDO', origem: 'cli', resultado: null })

      const cancel = await razao(['imports', 'cancel', id])
      expect(cancel.code).toBe(0)
      expect(JSON.parse(cancel.stdout)).toMatchObject({ importacao_id: id, status: 'CANCELADO', erro: { code: 'IMPORT_CANCELLED' } })
      expect(cancel.stderr).toContain(`razao: import ${id} cancelled: nothing of it was kept`)
      const loaded = await load.exited
      expect(loaded.code).toBe(1)
      expect(loaded.stderr).toContain(`razao: import ${id} cancelled: nothing of it was kept`)
    } finally {
      await gate.release()
    }

    const list = await razao(['imports', 'list', '--codigo-dominio', '9001'])
    expect(list.code).toBe(0)
    const listed = JSON.parse(list.stdout) as Array<Record<string, unknown>>
    expect(listed.map((i) => i.status)).toEqual(['VALIDADO', 'SUBSTITUIDO', 'SUBSTITUIDO'])
    expect(listed[0]).not.toHaveProperty('resultado')
    const cancelled = await razao(['imports', 'list', '--status', 'CANCELADO', '--limit', '1'])
    expect(JSON.parse(cancelled.stdout)).toHaveLength(1)
    const shown = await razao(['imports', 'show', listed[0]!.importacao_id as string])
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'VALIDADO', resultado: { status: 'VALIDADO', inserted_rows: facts.totalRows } })

    const again = await razao(['imports', 'cancel', id])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/has already ended \(CANCELADO\)/)
    const badStatus = await razao(['imports', 'list', '--status', 'feito'])
    expect(badStatus.code).toBe(2)
    expect(badStatus.stderr).toMatch(/status must be one of/)
    const unknown = await razao(['imports', 'show', '00000000-0000-4000-8000-000000000000'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/No import has the id/)
  }, 90_000)
})
