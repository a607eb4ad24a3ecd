/**
 * `razao extract FILE|FOLDER... [--evidence] [--csv]`: each PDF through the same pool task
 * and limits as the service (server/extract/run.ts).
 *
 * What it prints:
 * - one file named alone: exactly the body /api/v1/pdf/extract answers, indented;
 * - several files, or a folder: NDJSON, one line per file in the order given (a folder's
 *   PDFs in path order), each the batch route's result (`fileName`, `status`, then the
 *   body) with `path`, the file as given or found. Lines come out as soon as every file
 *   before them is done, so a long folder can be piped into `jq` or a loader;
 * - `--csv`: one row per file, the data flattened into a column per field (cli-csv.ts).
 * Exit 1 when any file was not extracted (`success: false`), its line printed all the
 * same; wrong usage (no file, a missing file, a folder without a PDF) is the caller's
 * `usage` error (exit 2).
 */
import { randomUUID } from 'node:crypto'
import { readdir, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { EngineError } from '../../core/errors.js'
import { createPool } from '../../workers/pool.js'
import type { Config } from '../config.js'
import { CsvTable } from './cli-csv.js'
import { loadExtractConfig } from './config.js'
import { extractStoredFile } from './run.js'
import { errorBody, toResponse } from './wire.js'

/** One file's answer: the HTTP status the route would give, and the body. */
interface Answer { status: number, body: Record<string, unknown> }

/** A folder's PDFs: by name, `.pdf` in any case. */
const PDF_NAME = /\.pdf$/i

/**
 * The PDFs under `folder`, every level down, in path order. Hidden entries (a dot first)
 * are left out, and links are not followed (a link to `/` would read the whole disk).
 */
async function pdfsUnder (folder: string): Promise<string[]> {
  const found: string[] = []
  const entries = await readdir(folder, { withFileTypes: true })
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue
    const path = join(folder, entry.name)
    if (entry.isDirectory()) found.push(...await pdfsUnder(path))
    else if (entry.isFile() && PDF_NAME.test(entry.name)) found.push(path)
  }
  return found
}

/** The files the arguments name: a file as given, whatever its name; a folder's PDFs. */
export async function filesOf (args: readonly string[], usage: (message: string) => Error): Promise<{ paths: string[], folder: boolean }> {
  const paths: string[] = []
  let folder = false
  for (const arg of args) {
    const facts = await stat(arg).catch(() => undefined)
    if (facts?.isDirectory() === true) {
      folder = true
      const pdfs = await pdfsUnder(arg).catch(() => { throw usage(`cannot read the folder ${arg}`) })
      if (pdfs.length === 0) throw usage(`no PDF in the folder ${arg} (files whose names end in .pdf, in it or below)`)
      paths.push(...pdfs)
    } else if (facts?.isFile() === true) {
      paths.push(arg)
    } else {
      throw usage(`cannot read ${arg}: not a file or a folder`)
    }
  }
  return { paths, folder }
}

/** `names`: what a path is called in the output when it is not its own name (standard input's copy is `stdin`). */
export async function extractCommand (args: readonly string[], options: { evidence: boolean, csv: boolean }, config: Config, usage: (message: string) => Error, names: ReadonlyMap<string, string> = new Map()): Promise<void> {
  if (args.length === 0) throw usage('missing FILE; see razao --help')
  const extract = loadExtractConfig(process.env)
  const { paths, folder } = await filesOf(args, usage)
  const requestId = `cli-${randomUUID()}`
  const threads = Math.min(paths.length, config.shared.poolSize)
  const pool = createPool({ maxThreads: threads })

  const one = async (path: string): Promise<Answer> => {
    try {
      if ((await stat(path)).size > extract.maxFileBytes) throw new EngineError('REQUEST_TOO_LARGE', `The file is larger than this service accepts (EXTRACT_MAX_FILE_BYTES, ${extract.maxFileBytes} bytes).`)
      return { status: 200, body: toResponse(await extractStoredFile(pool, path, extract), requestId, options.evidence) }
    } catch (err) {
      const answer = errorBody(err, requestId)
      if (answer.internal) process.stderr.write(`razao: ${path}: ${err instanceof Error ? err.message : String(err)}\n`)
      return answer
    }
  }

  const single = paths.length === 1 && !folder
  const csv = options.csv ? new CsvTable() : undefined
  let failed = false
  const print = async (i: number, { status, body }: Answer): Promise<void> => {
    if (body.success !== true) failed = true
    const path = paths[i]!
    const shown = names.get(path)
    if (csv !== undefined) csv.add(shown ?? path, status, body)
    else await write(single ? `${JSON.stringify(body, null, 2)}\n` : `${JSON.stringify({ fileName: shown ?? basename(path), path: shown ?? path, status, ...body })}\n`)
  }
  try {
    await inOrder(paths, one, print, 2 * threads)
    if (csv !== undefined) await write(csv.toString())
    if (failed) process.exitCode = 1
  } finally {
    await pool.destroy()
  }
}

/**
 * Runs `work` over `items`, at most `parallel` at once (so that a folder of thousands
 * never waits past EXTRACT_QUEUE_TIMEOUT_MS for a thread), and hands each answer to
 * `done` in the items' order, as soon as the ones before it are done.
 */
async function inOrder<T, A> (items: readonly T[], work: (item: T) => Promise<A>, done: (index: number, answer: A) => Promise<void>, parallel: number): Promise<void> {
  const ready = new Map<number, A>()
  let next = 0
  let printed = 0
  let flushing = Promise.resolve()
  const flush = async (): Promise<void> => {
    while (ready.has(printed)) {
      const answer = ready.get(printed)!
      ready.delete(printed)
      await done(printed++, answer)
    }
  }
  const runner = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      ready.set(i, await work(items[i]!))
      flushing = flushing.then(flush)
      await flushing
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, runner))
  await flushing
}

/** Writes to stdout, waiting when the reader is slower (a pipe). */
async function write (text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once('drain', resolve))
}
