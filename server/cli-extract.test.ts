/**
 * `razao extract` as a user runs it: a child process on the TypeScript sources, PDFs
 * written by the fixture generators, the real pool and pdf.js, real exit codes.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeTextPdf } from '../fixtures/extraction/pdf-writer.js'
import { generateExtrato } from '../plugins/pgdas-extrato/fixtures/generate.js'
import { generateDarf } from '../plugins/darf/fixtures/generate.js'
import type { Darf } from '../plugins/darf/index.js'
import type { PgdasExtrato } from '../plugins/pgdas-extrato/index.js'
import { runRazao } from '../fixtures/razao-cli.js'
import type { RazaoRun } from '../fixtures/razao-cli.js'

let dir: string
let extrato: string
let truth: PgdasExtrato
let unknown: string
let notPdf: string
/** A folder: a DARF and the extract (one level down), a hidden PDF, a note and an unknown PDF. */
let folder: string
let darf: Darf

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
  folder = join(dir, 'março')
  await mkdir(join(folder, 'simples'), { recursive: true })
  const darfFixture = await generateDarf({ seed: 2, layout: 'SENDA' })
  darf = darfFixture.truth
  await writeFile(join(folder, 'b-darf.PDF'), darfFixture.pdf)
  await writeFile(join(folder, 'simples', 'extrato.pdf'), fixture.pdf)
  await writeFile(join(folder, 'a-contrato.pdf'), await writeTextPdf([[{ text: 'Contrato de locação comercial', x: 40, y: 780 }]], { seed: 4 }))
  await writeFile(join(folder, '.oculto.pdf'), fixture.pdf)
  await writeFile(join(folder, 'leia-me.txt'), 'not a PDF by its name: left out')
  await mkdir(join(dir, 'vazia'))
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

  it('prints one JSON line per file in order (NDJSON), with name, path and status, and exits 1 when any file fails (- reads one from stdin)', async () => {
    const run = await razao(['extract', unknown, '-', notPdf], {}, await readFile(extrato))
    expect(run.code).toBe(1)
    const lines = run.stdout.split('\n')
    expect(lines.pop()).toBe('')
    const answers = lines.map((l) => JSON.parse(l) as Record<string, any>)
    expect(answers.map((o) => [o.fileName, o.path, o.status, o.success, o.documentType, o.errors[0]?.code])).toEqual([
      ['contrato.pdf', unknown, 200, false, 'UNKNOWN', 'PLUGIN_NO_MATCH'],
      ['stdin', 'stdin', 200, true, 'PGDAS_EXTRATO', undefined],
      ['planilha.pdf', notPdf, 415, false, null, 'PDF_NOT_PDF']
    ])
    // Each line is the single answer's shape, with the file's name, path and status first.
    expect(Object.keys(answers[1]!)).toEqual(['fileName', 'path', 'status', 'success', 'documentType', 'pages', 'data', 'warnings', 'errors', 'requestId', 'engine'])
    expect(answers[1]!.data).toEqual(truth)
    expect(run.stderr).toBe('')
  }, 60_000)

  it('reads a folder\'s PDFs, every level down, in path order, as NDJSON; hidden files and other names are left out', async () => {
    const run = await razao(['extract', folder])
    expect(run.code).toBe(1)
    const answers = run.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, any>)
    expect(answers.map((o) => [o.path, o.documentType])).toEqual([
      [join(folder, 'a-contrato.pdf'), 'UNKNOWN'],
      [join(folder, 'b-darf.PDF'), 'DARF'],
      [join(folder, 'simples', 'extrato.pdf'), 'PGDAS_EXTRATO']
    ])
    expect(answers[1]!.data).toEqual(darf)
  }, 60_000)

  it('writes one CSV row per document with --csv: columns per type, decimal commas, for Excel set up for Brazil', async () => {
    const run = await razao(['extract', '--csv', folder, notPdf])
    expect(run.code).toBe(1)
    expect(run.stdout.startsWith('\uFEFF')).toBe(true)
    const rows = run.stdout.slice(1).split('\r\n')
    expect(rows.pop()).toBe('')
    // Fields are quoted when they hold ; or quotes (an error's sentence lists the document types).
    const fields = (line: string): string[] => {
      const out: string[] = []
      let field = ''
      let quoted = false
      for (let i = 0; i < line.length; i++) {
        const ch = line[i]!
        if (quoted && ch === '"' && line[i + 1] === '"') { field += '"'; i++ } else if (ch === '"') quoted = !quoted
        else if (ch === ';' && !quoted) { out.push(field); field = '' } else field += ch
      }
      out.push(field)
      return out
    }
    const header = fields(rows[0]!)
    expect(header.slice(0, 9)).toEqual(['path', 'fileName', 'status', 'success', 'documentType', 'confidence', 'confidenceLevel', 'errors', 'warnings'])
    expect(rows).toHaveLength(5)
    const cells = (i: number): Record<string, string> => Object.fromEntries(header.map((h, j) => [h, fields(rows[i]!)[j]!]))
    const [contrato, darfRow, extratoRow, planilha] = [1, 2, 3, 4].map(cells)
    expect(contrato).toMatchObject({ fileName: 'a-contrato.pdf', status: '200', success: 'false', documentType: 'UNKNOWN', errors: expect.stringMatching(/^PLUGIN_NO_MATCH: /), cnpjCpf: '' })
    // A DARF's own columns, a list's items by index, money with a decimal comma.
    expect(darfRow).toMatchObject({ documentType: 'DARF', success: 'true', cnpjCpf: darf.cnpjCpf, valorTotal: String(darf.valorTotal).replace('.', ','), 'tributos.0.codigoReceita': darf.tributos[0]!.codigoReceita })
    expect(extratoRow).toMatchObject({ documentType: 'PGDAS_EXTRATO', cnpjBasico: truth.cnpjBasico, cnpjCpf: '' })
    expect(planilha).toMatchObject({ fileName: 'planilha.pdf', status: '415', documentType: '', errors: expect.stringMatching(/^PDF_NOT_PDF: /) })
    // Every data field of the DARF has its column.
    expect(header).toEqual(expect.arrayContaining(['layout', 'razaoSocial', 'dataVencimento', 'linhaDigitavel', 'canhoto.valor']))
  }, 60_000)

  it('exits 2 without a file, with a missing file, or with a bad limit, naming the problem', async () => {
    const none = await razao(['extract'])
    expect(none).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/missing FILE/) })
    const missing = await razao(['extract', join(dir, 'nope.pdf')])
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot read .*nope\.pdf/) })
    const empty = await razao(['extract', join(dir, 'vazia')])
    expect(empty).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/no PDF in the folder .*vazia/) })
    const bad = await razao(['extract', extrato], { EXTRACT_MAX_FILE_BYTES: 'lots' })
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/EXTRACT_MAX_FILE_BYTES/) })
  }, 60_000)

  it('refuses a file over EXTRACT_MAX_FILE_BYTES with the route\'s 413 body', async () => {
    const run = await razao(['extract', extrato], { EXTRACT_MAX_FILE_BYTES: '1024' })
    expect(run.code).toBe(1)
    expect(objects(run.stdout)[0]).toMatchObject({ success: false, errors: [{ code: 'REQUEST_TOO_LARGE' }] })
  }, 60_000)
})
