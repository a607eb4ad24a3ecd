/**
 * What an agent killed mid-job (SIGKILL, a crash) leaves behind, cleared when the next one
 * starts on the same runtime folder: the running jobs' input files, which hold the portal
 * passwords in clear, and the jobs' processes, which run on with nobody to read them or stop
 * them at their time limit. Jobs live in memory, so at start every job of the folder is gone;
 * runtime-lock.ts makes sure no live agent shares the folder. The processes are found by the
 * job folder in their environment (process-tree.ts) and get SIGKILL at once: their job cannot
 * finish any more (its output went with the old agent), so a grace period would save nothing.
 */
import { appendFileSync } from 'node:fs'
import { readdir, realpath, rm, rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { AgentLogger } from './log.js'
import { describeProcesses, findLeftoverProcesses, signalProcesses } from './process-tree.js'
import type { JobProcess } from './process-tree.js'

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export interface LeftoverFolders {
  /** RUNTIME_DIR/jobs */
  jobsRoot: string
  /** RUNTIME_DIR/inputs */
  inputsDir: string
  /** LOG_DIR/jobs: each job's stderr log gets a line. */
  logRoot: string
}

/** Ends the leftover processes and removes the leftover inputs; returns the ids of the jobs that had any. */
export async function clearLeftovers (folders: LeftoverFolders, log: AgentLogger): Promise<string[]> {
  const roots = [...new Set([folders.jobsRoot, await realpath(folders.jobsRoot).catch(() => folders.jobsRoot)])]
  const processes = findLeftoverProcesses(roots)
  signalProcesses(processes, 'SIGKILL')
  const inputs = new Set<string>()
  for (const name of await readdir(folders.inputsDir).catch(() => [] as string[])) {
    await rm(join(folders.inputsDir, name), { force: true }).catch(() => undefined)
    if (name.endsWith('.json')) inputs.add(name.slice(0, -'.json'.length))
  }
  const jobIds = [...new Set([...inputs, ...processes.map((p) => p.jobId)])].filter((id) => JOB_ID.test(id))
  for (const jobId of jobIds) {
    // Its folder, when the job had written nothing there.
    await rmdir(join(folders.jobsRoot, jobId)).catch(() => undefined)
    const mine = processes.filter((p) => p.jobId === jobId)
    const text = describe(inputs.has(jobId), mine)
    log.warn({ jobId, pids: mine.map((p) => p.pid) }, text)
    try {
      appendFileSync(join(folders.logRoot, `${jobId}.stderr.log`), `\n[agent] ${text}\n`, { mode: 0o600 })
    } catch { /* no log folder: the agent's log has it */ }
  }
  return jobIds
}

function describe (hadInput: boolean, processes: JobProcess[]): string {
  const what = [
    ...(hadInput ? ['its input file was removed'] : []),
    ...(processes.length > 0 ? [`SIGKILL sent to ${processes.length} process(es) it left running: ${describeProcesses(processes)}`] : [])
  ]
  return `the agent process that ran this job ended without finishing it (found when the agent started again): ${what.join('; ')}`
}
