/**
 * `razao samples DIR`: files to try every main job on, made by the generators the tests
 * use (seeded, so every run writes the same content): ledgers for the import service,
 * one PDF of each document type the extraction service knows, a PDF to sign. Nothing
 * in them is real: the companies, CNPJs and amounts are invented, with valid check digits.
 *
 * The one server module that reaches fixtures/ and the plugins' fixture generators (the
 * lint rule allows it here alone): they are compiled into dist/ with it, and loaded only
 * when this command runs.
 */
import { randomBytes } from 'node:crypto'
import { lstat, mkdir, mkdtemp, open, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateLedger } from '../fixtures/ledger/generate.js'
import type { LedgerOptions } from '../fixtures/ledger/generate.js'
import { makeTextPdf } from '../fixtures/pdf/samples.js'
import { generateDarf } from '../plugins/darf/fixtures/generate.js'
import { generateDas } from '../plugins/das/fixtures/generate.js'
import { generateDasMei } from '../plugins/das-mei/fixtures/generate.js'
import { generateDec } from '../plugins/dec-issqn-poa/fixtures/generate.js'
import { generateDanfse } from '../plugins/nfse-danfse/fixtures/generate.js'
import { generateDeclaracao } from '../plugins/pgdas-declaracao/fixtures/generate.js'
import { generateExtrato } from '../plugins/pgdas-extrato/fixtures/generate.js'
import { generateRecibo } from '../plugins/pgdas-recibo/fixtures/generate.js'
import { generateRelatorio } from '../plugins/relatorio-simples/fixtures/generate.js'

export interface Sample {
  file: string
  /** What to try it on, for the listing the command prints. */
  use: string
}

/** The seed of every generator: the same files on every run. */
const SEED = 2024

/** One PDF per document type, by the type's name as /api/v1/pdf/extract answers it. */
const DOCUMENTS: ReadonlyArray<readonly [documentType: string, make: () => Promise<{ pdf: Uint8Array }>]> = [
  ['DARF', () => generateDarf({ seed: SEED })],
  ['DAS', () => generateDas({ seed: SEED })],
  ['DAS_MEI', () => generateDasMei({ seed: SEED })],
  ['DEC_ISSQN_POA', () => generateDec({ seed: SEED })],
  ['NFSE_DANFSE', () => generateDanfse({ seed: SEED })],
  ['PGDAS_DECLARACAO', () => generateDeclaracao({ seed: SEED })],
  ['PGDAS_EXTRATO', () => generateExtrato({ seed: SEED })],
  ['PGDAS_RECIBO', () => generateRecibo({ seed: SEED })],
  ['RELATORIO_SIMPLES', () => generateRelatorio({ seed: SEED })]
]

export const SAMPLE_DOCUMENT_TYPES: readonly string[] = DOCUMENTS.map(([type]) => type)

/** The file name of the sample of a document type: `PGDAS_EXTRATO` → `PGDAS-EXTRATO.pdf`. */
export const documentSampleName = (documentType: string): string => `${documentType.replaceAll('_', '-')}.pdf`

export const LEDGER_SAMPLES = {
  balanced: { file: 'razao-2024-03.xlsx', rows: 10_000 },
  unbalanced: { file: 'razao-2024-03-desbalanceado.xlsx', rows: 2_000, unbalancedGroups: 4 },
  legacy: { file: 'razao-2024-03.xls', rows: 2_000 }
} as const

export const SIGN_SAMPLE = 'contrato.pdf'

/** A sample that was not written, and why. */
export interface NotWritten {
  file: string
  /** `exists`: a file of that name is there (replaced only with `force`); `link`: a symbolic link, never followed or replaced; `not-a-file`: a folder, FIFO or device. */
  reason: 'exists' | 'link' | 'not-a-file'
}

export interface SamplesResult {
  written: Sample[]
  notWritten: NotWritten[]
}

/**
 * Writes every sample into `dir` (made if missing). Each file is created exclusively, so a
 * name already taken is never written through: a symbolic link planted there is refused,
 * wherever it points, and an existing file is left as it is unless `force` is given, when it
 * is replaced by renaming a complete new file over it (a link still is not). The other
 * samples are written all the same; the result says which were not.
 */
export async function writeSamples (dir: string, options: { force?: boolean } = {}): Promise<SamplesResult> {
  await mkdir(dir, { recursive: true })
  const { balanced, unbalanced, legacy } = LEDGER_SAMPLES
  // The ledger generator writes to a path: a private folder of ours, never `dir` itself.
  const staging = await mkdtemp(join(tmpdir(), 'razao-samples-'))
  const ledger = (file: string, opts: Omit<LedgerOptions, 'path'>) => async (): Promise<Uint8Array> => {
    const path = join(staging, file)
    await generateLedger({ ...opts, path })
    return await readFile(path)
  }
  const plan: Array<Sample & { make: () => Promise<Uint8Array> }> = [
    { file: balanced.file, use: `a balanced ledger of ${balanced.rows} rows: POST /v1/analyze, /v1/process; razao analyze, razao import`, make: ledger(balanced.file, { format: 'xlsx', rows: balanced.rows, seed: SEED }) },
    { file: unbalanced.file, use: `a ledger with ${unbalanced.unbalancedGroups} unbalanced groups: POST /v1/diagnose-unbalanced; razao diagnose`, make: ledger(unbalanced.file, { format: 'xlsx', rows: unbalanced.rows, seed: SEED + 1, unbalancedGroups: unbalanced.unbalancedGroups }) },
    { file: legacy.file, use: 'the same kind of ledger as a legacy Excel 97-2003 file: POST /v1/analyze', make: ledger(legacy.file, { format: 'xls', rows: legacy.rows, seed: SEED + 2 }) },
    ...DOCUMENTS.map(([documentType, make]) => ({ file: documentSampleName(documentType), use: `a ${documentType}: POST /api/v1/pdf/extract; razao extract`, make: async () => (await make()).pdf })),
    { file: SIGN_SAMPLE, use: 'a two-page PDF to sign: POST /api/v1/sign (Base64 in pdfBase64)', make: async () => await makeTextPdf(2) }
  ]
  const result: SamplesResult = { written: [], notWritten: [] }
  try {
    for (const { file, use, make } of plan) {
      const refused = await placeFile(dir, file, await make(), options.force === true)
      if (refused === undefined) result.written.push({ file, use })
      else result.notWritten.push({ file, reason: refused })
    }
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
  return result
}

/** Writes `bytes` as `dir/file` without following or replacing a link; undefined when written, else why not. */
async function placeFile (dir: string, file: string, bytes: Uint8Array, force: boolean): Promise<NotWritten['reason'] | undefined> {
  const target = join(dir, file)
  if (!force) {
    let handle: FileHandle
    try {
      // O_CREAT | O_EXCL: fails on any existing name, a symbolic link included (never followed).
      handle = await open(target, 'wx', 0o644)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      return await whyTaken(target) ?? 'exists'
    }
    try {
      await handle.writeFile(bytes)
      await handle.close()
    } catch (err) {
      await handle.close().catch(() => undefined)
      await unlink(target).catch(() => undefined)
      throw err
    }
    return undefined
  }
  const taken = await whyTaken(target)
  if (taken !== undefined && taken !== 'exists') return taken
  // A complete file of our own, renamed over the old one: rename replaces the name itself,
  // so even a link planted after the check above is replaced, not followed.
  const temporary = join(dir, `.${file}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    await writeFile(temporary, bytes, { flag: 'wx', mode: 0o644 })
    await rename(temporary, target)
  } catch (err) {
    await unlink(temporary).catch(() => undefined)
    throw err
  }
  return undefined
}

/** What stands at `path`: undefined for nothing, `exists` for a regular file. */
async function whyTaken (path: string): Promise<NotWritten['reason'] | undefined> {
  const facts = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined
    throw err
  })
  if (facts === undefined) return undefined
  if (facts.isSymbolicLink()) return 'link'
  return facts.isFile() ? 'exists' : 'not-a-file'
}
