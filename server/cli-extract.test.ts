/**
 * `razao extract` as a user runs it: a child process on the TypeScript sources, PDFs
 * written by the fixture generators, the real pool and pdf.js, real exit codes.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeTextPdf } from '../fixtures/extraction/pdf-writer.js'
import { generateExtrato } from '../plugins/pgdas-extrato/fixtures/generate.js'
import type { PgdasExtrato } from '../plugins/pgdas-extrato/index.js'
import { runRazao } from '../fixtures/razao-cli.js'
import type { RazaoRun } from '../fixtures/razao-cli.js'

let dir: string
let extrato: string
let truth: PgdasExtrato
let unknown: string
let notPdf: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-cli-extract-'))
  const fixture = await generateExtrato({ seed: 51 })
  truth = fixture.truth
  extrato = join(dir, 'extrato.pdf')
  await writeFile(extrato, fixture.pdf)
  unknown = join(dir, 'contrato.pdf')
  await writeFile(unknown, await writeTextPdf([[{ text: 'Contrato de locação comercial', x: 40, y: 780 }]], { seed: 4 }))
  notPdf = join(dir, 'planilha.pdf')
  await writeFile(notPdf, 'PK\u0003\u0004 a zip, not a pdf')
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function razao (args: string[], env: Record<string, string> = {}, stdin?: Buffer): Promise<RazaoRun> {
  return await runRazao(args, {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, RAZAO_DATA_DIR: join(dir, 'data'), RAZAO_POOL_SIZE: '2', ...env },
    stdin
  })
}

/** The concatenated pretty-printed objects on stdout. */
function objects (stdout: string): Array<Record<string, any>> {
  return stdout.split(/\n(?=\{)/).filter((s) => s.trim() !== '').map((s) => JSON.parse(s) as Record<string, any>)
}

describe('razao extract', () => {
  it('prints the route\'s response for one PDF and exits 0', async () => {
    const run = await razao(['extract', extrato])
    expect(run.code).toBe(0)
    const [body] = objects(run.stdout)
    expect(Object.keys(body!).sort()).toEqual(['data', 'documentType', 'engine', 'errors', 'pages', 'requestId', 'success', 'warnings'])
    expect(body).toMatchObject({ success: true, documentType: 'PGDAS_EXTRATO', pages: 1, data: truth, requestId: expect.stringMatching(/^cli-/) })
  }, 60_000)

  it('adds evidence with --evidence', async () => {
    const run = await razao(['extract', '--evidence', extrato])
    expect(run.code).toBe(0)
    expect(objects(run.stdout)[0]!.evidence.cnpjBasico).toMatchObject({ page: 1 })
  }, 60_000)

  it('prints one object per file in order, with name and status, and exits 1 when any file fails (- reads one from stdin)', async () => {
    const run = await razao(['extract', unknown, '-', notPdf], {}, await readFile(extrato))
    expect(run.code).toBe(1)
    expect(objects(run.stdout).map((o) => [o.fileName, o.status, o.success, o.documentType, o.errors[0]?.code])).toEqual([
      ['contrato.pdf', 200, false, 'UNKNOWN', 'PLUGIN_NO_MATCH'],
      ['stdin', 200, true, 'PGDAS_EXTRATO', undefined],
      ['planilha.pdf', 415, false, null, 'PDF_NOT_PDF']
    ])
    expect(run.stderr).toBe('')
  }, 60_000)

  it('exits 2 without a file, with a missing file, or with a bad limit, naming the problem', async () => {
    const none = await razao(['extract'])
    expect(none).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/missing FILE/) })
    const missing = await razao(['extract', join(dir, 'nope.pdf')])
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot read .*nope\.pdf/) })
    const bad = await razao(['extract', extrato], { EXTRACT_MAX_FILE_BYTES: 'lots' })
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/EXTRACT_MAX_FILE_BYTES/) })
  }, 60_000)

  it('refuses a file over EXTRACT_MAX_FILE_BYTES with the route\'s 413 body', async () => {
    const run = await razao(['extract', extrato], { EXTRACT_MAX_FILE_BYTES: '1024' })
    expect(run.code).toBe(1)
    expect(objects(run.stdout)[0]).toMatchObject({ success: false, errors: [{ code: 'REQUEST_TOO_LARGE' }] })
  }, 60_000)
})
