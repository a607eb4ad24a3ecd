/**
 * Discovery: every directory directly under the automations root that holds an
 * `automation.json`. A directory without one is not a package (a shared helper folder,
 * a test portal) and is passed over quietly; a broken descriptor or a second package
 * with an id already taken is reported and skipped.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { DESCRIPTOR_FILE, readDescriptor } from './descriptor.js'
import type { AutomationPackage } from './descriptor.js'
import type { AgentLogger } from './log.js'

export interface DiscoveryProblem {
  dir: string
  problems: string[]
}

export interface Discovery {
  packages: AutomationPackage[]
  problems: DiscoveryProblem[]
}

export async function discoverPackages (root: string): Promise<Discovery> {
  let entries: Array<{ name: string, isDirectory: () => boolean }>
  try {
    entries = await readdir(root, { withFileTypes: true })
  } catch (err) {
    return { packages: [], problems: [{ dir: root, problems: [`the automations root cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`] }] }
  }
  const packages: AutomationPackage[] = []
  const problems: DiscoveryProblem[] = []
  const seen = new Map<string, string>()
  // Sorted, so which of two packages claiming one id wins does not depend on the file system.
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = join(root, entry.name)
    const outcome = await readDescriptor(dir)
    if (!outcome.ok) {
      if (outcome.problems.length === 1 && outcome.problems[0] === `${DESCRIPTOR_FILE} cannot be read (ENOENT)`) continue
      problems.push({ dir, problems: outcome.problems })
      continue
    }
    const taken = seen.get(outcome.pkg.id)
    if (taken !== undefined) {
      problems.push({ dir, problems: [`id "${outcome.pkg.id}" is already used by ${taken}`] })
      continue
    }
    seen.set(outcome.pkg.id, dir)
    packages.push(outcome.pkg)
  }
  return { packages, problems }
}

/** The packages the agent knows; replaced whole on reload. */
export class Registry {
  private packages = new Map<string, AutomationPackage>()

  constructor (private readonly root: string, private readonly log: AgentLogger) {}

  async reload (): Promise<AutomationPackage[]> {
    const { packages, problems } = await discoverPackages(this.root)
    for (const p of problems) {
      const what = p.dir === this.root ? 'no automation packages loaded' : 'automation package skipped'
      this.log.warn({ dir: p.dir, problems: p.problems }, `${what}: ${p.problems.join('; ')}`)
    }
    this.packages = new Map(packages.map((p) => [p.id, p]))
    this.log.info({ root: this.root, count: packages.length, ids: packages.map((p) => p.id) }, 'automation packages loaded')
    return this.list()
  }

  list (): AutomationPackage[] {
    return [...this.packages.values()]
  }

  get (id: string): AutomationPackage | undefined {
    return this.packages.get(id)
  }

  get size (): number {
    return this.packages.size
  }
}
