/**
 * The JSON a benchmark run leaves behind (`npm run bench -- --json FILE`, and
 * `npm run bench:quick` in bench/out/quick.json): schema `razao-bench/1`, described in
 * bench/README.md ("Results as JSON"). One file is one run: the machine it ran on, when,
 * on which commit, with which options, and per suite the figures its tables printed,
 * each with its unit, its samples' spread and its ratios to the baselines, floors and
 * peers measured in the same run. Figure ids are stable, so that two runs can be
 * matched figure by figure (bench/lib/compare.ts) and charted over time
 * (bench/lib/report.ts).
 *
 * Nothing here measures: the suites hand over the results their tables are made from
 * (bench/lib/figures.ts turns them into figures).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { arch, availableParallelism, cpus, loadavg, platform, release, totalmem } from 'node:os'
import { dirname, resolve } from 'node:path'
import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import { ratioRel, type Spread } from './spread.js'

export const SCHEMA_ID = 'razao-bench/1'

/** Which way is good: a time or a memory figure is better lower, a throughput higher. */
export type Better = 'lower' | 'higher'

/**
 * Whose figure it is. Only the ratios of `ours` figures can fail bench:compare; a
 * baseline's, floor's or peer's ratios are there to read.
 */
export type Role = 'ours' | 'baseline' | 'floor' | 'peer'

/** This figure's value over another figure's of the same run and suite. */
export interface Ratio {
  /** Id of the other figure (a baseline, floor, peer, or another row of ours). */
  to: string
  /** this.value / to.value; better the same way as this figure. */
  value: number
  /** Relative spread of the ratio: the two figures' `spread.rel` added (0 for a side without spread). */
  rel: number
}

export interface Figure {
  /** Stable: `<suite>/<scope…>/<subject>/<metric>`, e.g. `reader/100k/reader/median`. */
  id: string
  /** As the table says it, for people. */
  label: string
  value: number
  /** s, ms, MB (10^6 bytes), rows/s, MB/s, docs/s, calls/s, /s, %, ×, count… */
  unit: string
  better: Better
  role: Role
  /** How many measurements the value comes from (passes, tasks, calls, rounds, documents). */
  samples: number
  /** Of the samples, in `unit`; absent when the value is one measurement (a rate over a whole run, say). */
  spread?: Spread
  ratios?: Ratio[]
}

/** A line of a targets table: what it asks, what was measured, the verdict (null: not measured). */
export interface Check {
  target: string
  measured: string
  pass: boolean | null
}

export interface SuiteResults {
  /** reader, http, process, sign, extract, ocr, gateway, agent (bench), quick (bench:quick). */
  suite: string
  figures: Figure[]
  checks: Check[]
  /** What the table's notes say beside the figures: failures of a contender, context. */
  notes: string[]
}

export interface Machine {
  /** os.availableParallelism(): what the suites size their pools by. */
  cores: number
  cpuModel: string
  node: string
  platform: string
  arch: string
  memoryBytes: number
  /** 1, 5 and 15-minute load averages when the run started and when it ended. */
  load: { start: number[], end: number[] }
}

export interface BenchResults {
  schema: typeof SCHEMA_ID
  tool: 'bench' | 'bench:quick'
  /** ISO 8601, UTC. */
  startedAt: string
  finishedAt: string
  machine: Machine
  /** The commit measured; dirty when core/, plugins/, server/ or workers/ had uncommitted changes. Null outside a git checkout. */
  git: { commit: string, dirty: boolean } | null
  /** The command line as given, and the options it resolved to. */
  options: { argv: string[], resolved: Record<string, unknown> }
  suites: SuiteResults[]
  /** Set when the run stopped on an error: the suites before it are still here. */
  error?: string
}

const spreadSchema = {
  type: 'object',
  required: ['min', 'max', 'median', 'mad', 'rel'],
  properties: { min: { type: 'number' }, max: { type: 'number' }, median: { type: 'number' }, mad: { type: 'number', minimum: 0 }, rel: { type: 'number', minimum: 0 } }
}

/** The schema as JSON Schema (draft-07): what bench:compare and bench:report accept. */
export const RESULTS_JSON_SCHEMA = {
  $id: 'https://razao.invalid/bench/razao-bench-1.json',
  type: 'object',
  required: ['schema', 'tool', 'startedAt', 'finishedAt', 'machine', 'git', 'options', 'suites'],
  properties: {
    schema: { const: SCHEMA_ID },
    tool: { enum: ['bench', 'bench:quick'] },
    startedAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: 'string', format: 'date-time' },
    machine: {
      type: 'object',
      required: ['cores', 'cpuModel', 'node', 'platform', 'arch', 'memoryBytes', 'load'],
      properties: {
        cores: { type: 'integer', minimum: 1 },
        cpuModel: { type: 'string' },
        node: { type: 'string' },
        platform: { type: 'string' },
        arch: { type: 'string' },
        memoryBytes: { type: 'number' },
        load: {
          type: 'object',
          required: ['start', 'end'],
          properties: { start: { type: 'array', items: { type: 'number' } }, end: { type: 'array', items: { type: 'number' } } }
        }
      }
    },
    git: {
      oneOf: [
        { type: 'null' },
        { type: 'object', required: ['commit', 'dirty'], properties: { commit: { type: 'string' }, dirty: { type: 'boolean' } } }
      ]
    },
    options: { type: 'object', required: ['argv', 'resolved'], properties: { argv: { type: 'array', items: { type: 'string' } }, resolved: { type: 'object' } } },
    suites: {
      type: 'array',
      items: {
        type: 'object',
        required: ['suite', 'figures', 'checks', 'notes'],
        properties: {
          suite: { type: 'string', minLength: 1 },
          figures: {
            type: 'array',
            items: {
              type: 'object',
              required: ['id', 'label', 'value', 'unit', 'better', 'role', 'samples'],
              properties: {
                id: { type: 'string', minLength: 1 },
                label: { type: 'string' },
                value: { type: 'number' },
                unit: { type: 'string' },
                better: { enum: ['lower', 'higher'] },
                role: { enum: ['ours', 'baseline', 'floor', 'peer'] },
                samples: { type: 'integer', minimum: 1 },
                spread: spreadSchema,
                ratios: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['to', 'value', 'rel'],
                    properties: { to: { type: 'string' }, value: { type: 'number' }, rel: { type: 'number', minimum: 0 } }
                  }
                }
              }
            }
          },
          checks: {
            type: 'array',
            items: {
              type: 'object',
              required: ['target', 'measured', 'pass'],
              properties: { target: { type: 'string' }, measured: { type: 'string' }, pass: { type: ['boolean', 'null'] } }
            }
          },
          notes: { type: 'array', items: { type: 'string' } }
        }
      }
    },
    error: { type: 'string' }
  }
} as const

let validator: ValidateFunction | undefined

/** The schema's complaints about `doc` (empty when it conforms), plus what a schema cannot say: ids unique, ratios to figures that exist. */
export function problemsOf (doc: unknown): string[] {
  // Formats (date-time) are checked by hand below: ajv-formats is not a dependency.
  validator ??= new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(RESULTS_JSON_SCHEMA)
  if (!validator(doc)) return (validator.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
  const results = doc as BenchResults
  const problems: string[] = []
  for (const key of ['startedAt', 'finishedAt'] as const) {
    if (Number.isNaN(Date.parse(results[key]))) problems.push(`/${key} is not a date: ${results[key]}`)
  }
  for (const suite of results.suites) {
    const ids = new Set<string>()
    for (const figure of suite.figures) {
      if (ids.has(figure.id)) problems.push(`${suite.suite}: figure id ${figure.id} twice`)
      ids.add(figure.id)
    }
    for (const figure of suite.figures) {
      for (const r of figure.ratios ?? []) {
        if (!ids.has(r.to)) problems.push(`${figure.id}: ratio to ${r.to}, which is not a figure of suite ${suite.suite}`)
      }
    }
  }
  return problems
}

/** What a suite's figures are made from (bench/lib/figures.ts). */
export type FigureInput = Pick<Figure, 'label' | 'value' | 'unit' | 'better' | 'role'> & {
  /** Below the suite: `100k/reader/median` becomes `reader/100k/reader/median`. */
  id: string
  /** Default 1. */
  samples?: number
  spread?: Spread | undefined
}

/** The figures, checks and notes of one suite, as a suite's converter adds them. */
export class SuiteBuilder {
  readonly suite: string
  readonly figures: Figure[] = []
  readonly checks: Check[] = []
  readonly notes: string[] = []

  constructor (suite: string) {
    this.suite = suite
  }

  /** Adds a figure; one that was not measured (NaN, Infinity) is left out. Returns its full id. */
  add (input: FigureInput): string | undefined {
    if (!Number.isFinite(input.value)) return undefined
    const id = `${this.suite}/${input.id}`
    if (this.figures.some((f) => f.id === id)) throw new Error(`bench JSON: figure id ${id} twice`)
    const figure: Figure = {
      id,
      label: input.label,
      value: input.value,
      unit: input.unit,
      better: input.better,
      role: input.role,
      samples: Math.max(1, Math.round(input.samples ?? 1))
    }
    if (input.spread !== undefined) figure.spread = input.spread
    this.figures.push(figure)
    return id
  }

  get (id: string): Figure | undefined {
    return this.figures.find((f) => f.id === `${this.suite}/${id}` || f.id === id)
  }

  /**
   * `of` / `to` (ids below the suite, or full), on `of`; nothing when either was not measured.
   * `rel`, when the two were measured in pairs (bench:quick's rounds), is the spread of the
   * pairs' own ratios; otherwise the two sides' spreads are added.
   */
  ratio (of: string, to: string, rel?: number): void {
    const a = this.get(of)
    const b = this.get(to)
    if (a === undefined || b === undefined || b.value === 0) return
    const value = a.value / b.value
    if (!Number.isFinite(value)) return
    a.ratios ??= []
    a.ratios.push({ to: b.id, value, rel: rel ?? ratioRel(a.spread, b.spread) })
  }

  check (target: string, measured: string, pass: boolean | undefined): void {
    this.checks.push({ target, measured, pass: pass ?? null })
  }

  toJSON (): SuiteResults {
    return { suite: this.suite, figures: this.figures, checks: this.checks, notes: this.notes }
  }
}

/** One run's results, gathered suite by suite while the run goes. */
export class ResultsRecorder {
  private readonly startedAt = new Date()
  private readonly loadStart = loadavg()
  private readonly suites: SuiteBuilder[] = []

  constructor (
    private readonly tool: BenchResults['tool'],
    private readonly options: BenchResults['options'],
    private readonly git: BenchResults['git']
  ) {}

  suite (name: string): SuiteBuilder {
    let builder = this.suites.find((s) => s.suite === name)
    if (builder === undefined) {
      builder = new SuiteBuilder(name)
      this.suites.push(builder)
    }
    return builder
  }

  finish (error?: unknown): BenchResults {
    const results: BenchResults = {
      schema: SCHEMA_ID,
      tool: this.tool,
      startedAt: this.startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine: machineInfo(this.loadStart),
      git: this.git,
      options: this.options,
      suites: this.suites.map((s) => s.toJSON())
    }
    if (error !== undefined) results.error = error instanceof Error ? error.message : String(error)
    return results
  }
}

export function machineInfo (loadStart: number[] = loadavg()): Machine {
  const cpu = cpus()
  return {
    cores: availableParallelism(),
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${platform()} ${release()}`,
    arch: arch(),
    memoryBytes: totalmem(),
    load: { start: loadStart.map(round2), end: loadavg().map(round2) }
  }
}

const round2 = (x: number): number => Math.round(x * 100) / 100

/** Six significant digits: the samples' own precision is far coarser, and the file stays readable. */
function compact (_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isInteger(value) && Number.isFinite(value) ? Number(value.toPrecision(6)) : value
}

/** A file name as the user typed it: relative to where `npm run` was called (INIT_CWD), not to the package. */
export function userPath (file: string): string {
  return resolve(process.env.INIT_CWD ?? process.cwd(), file)
}

/** Writes `results` to `file` (folders created); refuses a document the schema would not accept. */
export async function writeResults (file: string, results: BenchResults): Promise<void> {
  const text = `${JSON.stringify(results, compact, 2)}\n`
  const problems = problemsOf(JSON.parse(text))
  if (problems.length > 0) throw new Error(`bench JSON not written, it does not conform to ${SCHEMA_ID}: ${problems.slice(0, 5).join('; ')}`)
  await mkdir(dirname(file), { recursive: true })
  await writeFile(file, text)
}

/** Reads and checks one results file; the error says which file and what is wrong. */
export async function readResults (file: string): Promise<BenchResults> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
  }
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw new Error(`${file} is not JSON: ${err instanceof Error ? err.message : String(err)}`)
  }
  const schema = (doc as { schema?: unknown } | null)?.schema
  if (schema !== SCHEMA_ID) throw new Error(`${file} is not a benchmark result of schema ${SCHEMA_ID} (its schema: ${JSON.stringify(schema ?? null)})`)
  const problems = problemsOf(doc)
  if (problems.length > 0) throw new Error(`${file} does not conform to ${SCHEMA_ID}: ${problems.slice(0, 5).join('; ')}`)
  return doc as BenchResults
}
