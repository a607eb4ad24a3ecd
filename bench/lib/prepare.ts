/**
 * Gets the code under test ready: dist/ rebuilt when a source is newer than its
 * output, and the child scripts transpiled to plain JavaScript so children start
 * on bare node. tsx's loader in a child would sit in the module graph being
 * measured; benchmarks time the JavaScript production runs, nothing else.
 */
import { spawnSync } from 'node:child_process'
import { cp, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { CHILD_JS_DIR, CHILD_SRC_DIR, DIST_DIR, OUT_DIR, REPO_ROOT } from './paths.js'

/** The folders tsconfig.build.json compiles. */
const BUILT_FOLDERS = ['core', 'plugins', 'server', 'workers']

export async function ensureDist (): Promise<void> {
  if (process.env.BENCH_SKIP_BUILD === '1') {
    process.stderr.write('BENCH_SKIP_BUILD=1: measuring dist/ as it is.\n')
    return
  }
  const stale = await firstStaleSource()
  if (stale === undefined) return
  process.stderr.write(`dist/ is missing or older than ${stale}: running npm run build\n`)
  // Build output goes to stderr so stdout carries only the tables.
  const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', 2, 2] })
  if (build.status !== 0) {
    throw new Error('npm run build failed; fix the build, or set BENCH_SKIP_BUILD=1 to measure dist/ as it is')
  }
}

async function firstStaleSource (): Promise<string | undefined> {
  for (const folder of BUILT_FOLDERS) {
    for (const source of await listTs(join(REPO_ROOT, folder))) {
      if (source.endsWith('.test.ts') || source.endsWith('.bench.ts') || source.endsWith('.d.ts')) continue
      const rel = relative(REPO_ROOT, source)
      const built = join(DIST_DIR, rel.replace(/\.ts$/, '.js'))
      const [sourceStat, builtStat] = await Promise.all([stat(source), stat(built).catch(() => undefined)])
      if (builtStat === undefined || builtStat.mtimeMs < sourceStat.mtimeMs) return rel
    }
  }
  return undefined
}

async function listTs (dir: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...await listTs(path))
    else if (entry.name.endsWith('.ts')) found.push(path)
  }
  return found
}

/**
 * Copies dist/ aside for the children to import. A full run takes minutes, and a
 * rebuild of dist/ in the middle of it (someone working on the scanner) would
 * otherwise mix two versions of the code in one table. Modules inside still
 * resolve packages from the repository's node_modules, one level further up.
 */
export async function snapshotDist (): Promise<{ dir: string, remove: () => Promise<void> }> {
  await removeOrphanSnapshots()
  const dir = join(OUT_DIR, `dist-${process.pid}`)
  await rm(dir, { recursive: true, force: true })
  await cp(DIST_DIR, dir, { recursive: true, filter: (source) => !source.endsWith('.map') })
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

/** Snapshots are per process (runs may overlap); one whose process is gone was left by an interrupted run. */
async function removeOrphanSnapshots (): Promise<void> {
  const names = await readdir(OUT_DIR).catch(() => [])
  for (const name of names) {
    const pid = /^dist-(\d+)$/.exec(name)?.[1]
    if (pid !== undefined && !isAlive(Number(pid))) await rm(join(OUT_DIR, name), { recursive: true, force: true })
  }
}

function isAlive (pid: number): boolean {
  try {
    // Signal 0 delivers nothing; it only asks whether the process exists.
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Transpiles bench/child/*.ts into bench/out/child/*.js, file by file: the child
 * scripts import only node, node_modules and (by URL) dist/, so no bundling and
 * no type information is needed; `tsc --noEmit` checks them with the rest.
 */
export async function transpileChildScripts (): Promise<void> {
  await mkdir(CHILD_JS_DIR, { recursive: true })
  const names = (await readdir(CHILD_SRC_DIR)).filter((n) => n.endsWith('.ts'))
  await Promise.all(names.map(async (name) => {
    const source = await readFile(join(CHILD_SRC_DIR, name), 'utf8')
    const { outputText } = ts.transpileModule(source, {
      fileName: name,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true }
    })
    const target = join(CHILD_JS_DIR, name.replace(/\.ts$/, '.js'))
    const current = await readFile(target, 'utf8').catch(() => undefined)
    if (current !== outputText) await writeFile(target, outputText)
  }))
}

const git = (...args: string[]): string => spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).stdout?.trim() ?? ''

/** The commit measured, in full, and whether the built folders differ from it; null outside a git checkout. */
export function gitState (): { commit: string, dirty: boolean } | null {
  const commit = git('rev-parse', 'HEAD')
  return commit === '' ? null : { commit, dirty: git('status', '--porcelain', '--', ...BUILT_FOLDERS) !== '' }
}

/** The commit the measured code was built from, flagged when sources have uncommitted changes. */
export function sourceVersion (): string {
  const commit = git('rev-parse', '--short', 'HEAD')
  if (commit === '') return 'unknown commit'
  const version = git('status', '--porcelain', '--', ...BUILT_FOLDERS) === '' ? commit : `${commit} + uncommitted changes`
  return process.env.BENCH_SKIP_BUILD === '1' ? `${version} (BENCH_SKIP_BUILD: not checked against dist/)` : version
}

export function childScript (name: string): string {
  return join(CHILD_JS_DIR, `${name}.js`)
}
