/**
 * Agent queue overhead (issue 16): N trivial jobs (a package that prints its
 * AGENT_RESULT_JSON line and exits) submitted at once over HTTP (16 keep-alive connections) to a real agent process
 * (`razao serve agent`, MAX_CONCURRENT_JOBS=1), against spawning the same program N times
 * directly, one after another, from a bare node process (the same concurrency: one at a time).
 * The difference over N is what the agent adds per job: HTTP submission, queueing,
 * the input file and job folder, the stdout/stderr logs, the result parse, the job record.
 *
 * The package is a shell script by default (`/bin/sh run.sh`, a spawn of about 1-2 ms)
 * so the agent's own cost is not lost in the program's start-up; `--program node` runs a
 * node script instead (about 40 ms per start on this machine). The agent's RSS is read from
 * /proc after a warm-up and after each round: flat when it does not grow round over round.
 * The clock stops when the last job submitted (the newest in GET /api/v1/jobs?limit=1) is
 * done, polled every 20 ms; every job is checked SUCCEEDED afterwards, outside the clock.
 * On a shared machine wall time carries other processes' load, so the table also gives
 * CPU time per job: the agent process's own (from /proc, its children not included)
 * against the spawning node's own for the direct spawns.
 *
 *   node --import tsx bench/agent.bench.ts [--jobs 1000] [--rounds 2] [--program sh|node] [--dist]
 *
 * `benchAgent` and `agentTable` are exported for bench/run.ts.
 */
import { spawn } from 'node:child_process'
import { Agent as HttpAgent, request } from 'node:http'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { installPackage, TRIVIAL_SH } from '../fixtures/agent/packages.js'
import { markdownTable, ratio } from './lib/table.js'

export interface AgentBenchOptions {
  jobs: number
  rounds: number
  program: 'sh' | 'node'
  /** A dist/ snapshot to run the agent from (bench/run.ts); unset: the sources through tsx. */
  distDir?: string | undefined
}

export interface AgentBenchRound {
  round: number
  directMs: number
  agentMs: number
  /** From the first POST to the last 202. */
  submitMs: number
  succeeded: number
  rssAfterBytes: number
  /** CPU time of this process per direct spawn, and of the agent process per job. */
  directCpuMs: number
  agentCpuMs: number
  /** The same N direct spawns from a node process holding as much memory as the agent: fork's floor at that size. */
  floorMs: number
}

export interface AgentBenchResult {
  options: AgentBenchOptions
  rssBeforeBytes: number
  rounds: AgentBenchRound[]
}

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const KEY = 'bench-agent-key-0123456789abcdef'
const TRIVIAL_NODE = 'process.stdout.write(\'AGENT_RESULT_JSON={"ok":true}\\n\')\n'
const WARMUP = 20
/** The client's connections: the N requests go out at once and queue on these. */
const CLIENT_SOCKETS = 16
const CLIENT = new HttpAgent({ keepAlive: true, maxSockets: CLIENT_SOCKETS })

export async function benchAgent (options: AgentBenchOptions, log: (line: string) => void = () => {}): Promise<AgentBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'razao-agent-bench-'))
  try {
    const root = join(dir, 'automations')
    const pkgDir = options.program === 'sh'
      ? await installPackage(root, { id: 'trivial', command: ['/bin/sh', 'run.sh'] })
      : await installPackage(root, { id: 'trivial', script: TRIVIAL_NODE })
    if (options.program === 'sh') await writeFile(join(pkgDir, 'run.sh'), TRIVIAL_SH)
    const command = options.program === 'sh' ? ['/bin/sh', 'run.sh'] : [process.execPath, 'main.mjs']
    const agent = await startAgent(dir, options.distDir)
    try {
      log(`agent pid ${agent.pid} on ${agent.url}; warm-up`)
      await spawnRound(command, pkgDir, WARMUP, 0)
      await agentRound(agent.url, WARMUP)
      const rssBeforeBytes = (await procStats(agent.pid)).rssBytes
      const rounds: AgentBenchRound[] = []
      for (let round = 1; round <= options.rounds; round++) {
        log(`round ${round}: ${options.jobs} direct spawns, then ${options.jobs} jobs through the agent`)
        const direct = await spawnRound(command, pkgDir, options.jobs, 0)
        const floor = await spawnRound(command, pkgDir, options.jobs, (await procStats(agent.pid)).rssBytes)
        const before = await procStats(agent.pid)
        const measured = await agentRound(agent.url, options.jobs)
        const after = await procStats(agent.pid)
        rounds.push({
          round, directMs: direct.ms, floorMs: floor.ms, ...measured, rssAfterBytes: after.rssBytes,
          directCpuMs: direct.cpuMs / options.jobs,
          agentCpuMs: (after.cpuMs - before.cpuMs) / options.jobs
        })
      }
      return { options, rssBeforeBytes, rounds }
    } finally {
      await agent.stop()
      CLIENT.destroy()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * The direct spawns, one after another, in a fresh node process (so the figure does not
 * depend on how much this bench process has loaded). fork() copies the parent's page
 * tables, so a spawn costs more from a bigger process (here about +10 ms a spawn per
 * +100 MB under load): with `rssBytes`, the process first fills itself up to that size,
 * giving the cost of spawning from a process the agent's size with no agent work (the floor).
 */
async function spawnRound (command: string[], cwd: string, n: number, rssBytes: number): Promise<{ ms: number, cpuMs: number }> {
  const script = `
    const { spawn } = require('node:child_process')
    const [rss, n, cmd] = [Number(process.argv[1]), Number(process.argv[2]), JSON.parse(process.argv[3])]
    const hold = []
    while (process.memoryUsage().rss < rss) hold.push(Buffer.alloc(4 << 20, 1))
    ;(async () => {
      const started = performance.now()
      const cpu = process.cpuUsage()
      for (let i = 0; i < n; i++) {
        await new Promise((resolve) => {
          const c = spawn(cmd[0], cmd.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] })
          c.stdout.resume(); c.stderr.resume(); c.stdin.on('error', () => {}); c.stdin.end('{}'); c.on('close', resolve)
        })
      }
      const used = process.cpuUsage(cpu)
      process.stdout.write(String(performance.now() - started) + ' ' + String((used.user + used.system) / 1000) + ' ' + hold.length)
    })()`
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, String(rssBytes), String(n), JSON.stringify(command)], { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    child.stdout.on('data', (c: Buffer) => { text += c.toString() })
    child.on('error', reject)
    child.on('close', () => resolve(text))
  })
  const [ms, cpuMs] = out.split(' ').map(Number)
  if (ms === undefined || cpuMs === undefined || !Number.isFinite(ms)) throw new Error('the spawning process reported nothing')
  return { ms, cpuMs }
}

/** A JSON request over a keep-alive pool of CLIENT_SOCKETS connections, as a real client would hold. */
async function call (url: string, method: 'GET' | 'POST', path: string, body?: object): Promise<{ status: number, json: Record<string, unknown> }> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return await new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, {
      method,
      agent: CLIENT,
      headers: { 'x-agent-api-key': KEY, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) }
    }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { text += c })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }))
    })
    req.on('error', reject)
    req.end(payload)
  })
}

async function agentRound (url: string, n: number): Promise<{ agentMs: number, submitMs: number, succeeded: number }> {
  const started = performance.now()
  const jobs = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const res = await call(url, 'POST', '/api/v1/automations/trivial/run', { input: { i } })
    if (res.status !== 202) throw new Error(`run answered ${res.status}`)
    return res.json as unknown as { id: string }
  }))
  const submitMs = performance.now() - started
  // One job at a time in arrival order: the newest job (the list's first) ends last.
  const last = ((await call(url, 'GET', '/api/v1/jobs?limit=1')).json as unknown as { items: Array<{ id: string }> }).items[0]!.id
  for (;;) {
    const { status } = (await call(url, 'GET', `/api/v1/jobs/${last}`)).json
    if (status !== 'QUEUED' && status !== 'RUNNING') break
    await new Promise((r) => setTimeout(r, 20))
  }
  const agentMs = performance.now() - started
  let succeeded = 0
  for (const job of jobs) {
    if ((await call(url, 'GET', `/api/v1/jobs/${job.id}`)).json.status === 'SUCCEEDED') succeeded++
  }
  return { agentMs, submitMs, succeeded }
}

async function startAgent (dir: string, distDir: string | undefined): Promise<{ pid: number, url: string, stop: () => Promise<void> }> {
  const args = distDir === undefined ? ['--import', 'tsx', join(ROOT, 'server', 'cli.ts'), 'serve', 'agent'] : [join(distDir, 'server', 'cli.js'), 'serve', 'agent']
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env, RAZAO_DATA_DIR: join(dir, '.data'), PORT: '0', AGENT_API_KEY: KEY, AUTOMATIONS_ROOT: join(dir, 'automations'),
      RUNTIME_DIR: join(dir, 'runtime'), LOG_DIR: join(dir, 'logs'), FILE_STORAGE_ROOT: join(dir, 'files'), MAX_CONCURRENT_JOBS: '1', AGENT_MAX_QUEUED_JOBS: '100000', LOG_LEVEL: 'info', NODE_ENV: 'production'
    },
    // The JSON log (three lines a job at info) is written, as in service, and dropped.
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
      const found = /agent service listening on (http:\/\/\S+)/.exec(stderr)?.[1]
      if (found !== undefined) resolve(found)
    })
    void exited.then(() => reject(new Error(`the agent exited: ${stderr}`)))
  })
  return { pid: child.pid!, url, stop: async () => { child.kill('SIGTERM'); await exited } }
}

/** RSS and CPU time (user + system, this process only) of a process, from /proc. */
async function procStats (pid: number): Promise<{ rssBytes: number, cpuMs: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1]
  // Fields 14 and 15 of stat, after the parenthesised command name; in clock ticks (100 a second on Linux).
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ')
  return { rssBytes: kb === undefined ? NaN : Number(kb) * 1024, cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 }
}

export function agentTable (result: AgentBenchResult): string {
  const { jobs, program } = result.options
  const mb = (b: number): string => (b / 1e6).toFixed(1)
  const rows = result.rounds.flatMap((r) => {
    const overhead = (r.agentMs - r.directMs) / jobs
    return [
      [`round ${r.round}: direct spawn ×${jobs} from a bare node`, (r.directMs / 1000).toFixed(2), (r.directMs / jobs).toFixed(2), '—', '1.00×', r.directCpuMs.toFixed(2), '—', '—'],
      [`round ${r.round}: direct spawn ×${jobs} from a process of the agent's RSS (floor)`, (r.floorMs / 1000).toFixed(2), (r.floorMs / jobs).toFixed(2), ((r.floorMs - r.directMs) / jobs).toFixed(2), ratio(r.floorMs / r.directMs), '—', '—', '—'],
      [`round ${r.round}: agent ×${jobs} (${r.succeeded} SUCCEEDED)`, (r.agentMs / 1000).toFixed(2), (r.agentMs / jobs).toFixed(2), overhead.toFixed(2), ratio(r.agentMs / r.directMs), r.agentCpuMs.toFixed(2), (r.submitMs / 1000).toFixed(2), mb(r.rssAfterBytes)]
    ]
  })
  const worst = Math.max(...result.rounds.map((r) => (r.agentMs - r.directMs) / jobs))
  const floor = Math.max(...result.rounds.map((r) => (r.floorMs - r.directMs) / jobs))
  const beyond = Math.max(...result.rounds.map((r) => (r.agentMs - Math.max(r.floorMs, r.directMs)) / jobs))
  const growth = result.rounds.length === 0 ? 0 : result.rounds[result.rounds.length - 1]!.rssAfterBytes - result.rssBeforeBytes
  return [
    `### Agent: ${jobs} trivial jobs (${program === 'sh' ? '/bin/sh script' : 'node script'}) at once, MAX_CONCURRENT_JOBS=1`,
    '',
    markdownTable(['run', 'total s', 'ms per job', 'overhead ms per job', 'ratio vs direct', 'CPU ms per job', 'submit s', 'agent RSS MB after'], rows),
    '',
    `Load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')} on ${availableParallelism()} cores. CPU ms per job: the spawning process's own CPU (the agent's, or the bare node's), the children's not included.`,
    '',
    `Agent RSS after warm-up ${mb(result.rssBeforeBytes)} MB, after the last round ${mb(result.rounds.at(-1)?.rssAfterBytes ?? NaN)} MB (${growth >= 0 ? '+' : ''}${mb(growth)} MB).`,
    '',
    '| target | measured | verdict |',
    '|---|---|---|',
    `| agent overhead under 5 ms per job | worst round ${worst.toFixed(2)} ms | ${worst < 5 ? 'PASS' : 'FAIL'} |`,
    `| (floor: what forking from a process of the agent's size adds, with no agent work) | worst round ${floor.toFixed(2)} ms | — |`,
    `| agent overhead beyond that floor | worst round ${beyond.toFixed(2)} ms | ${beyond < 5 ? 'PASS' : 'FAIL'} |`
  ].join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { jobs: { type: 'string' }, rounds: { type: 'string' }, program: { type: 'string' }, dist: { type: 'boolean' } }, strict: true })
  const program = values.program ?? 'sh'
  if (program !== 'sh' && program !== 'node') throw new Error('--program is sh or node')
  // --dist: the agent from the built dist/ (npm run build first), as bench/run.ts measures it.
  const distDir = values.dist === true ? join(ROOT, 'dist') : undefined
  const result = await benchAgent({ jobs: Number(values.jobs ?? 1000), rounds: Number(values.rounds ?? 2), program, distDir }, (line) => process.stderr.write(`${line}\n`))
  process.stdout.write(`${agentTable(result)}\n`)
}
