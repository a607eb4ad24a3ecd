/**
 * The repository's own contracts: the README stays a short front door whose links resolve,
 * its table of document types is the plugin registry's, and no tracked file sends a reader
 * outside the repository (the team's shared notes are not part of a clone).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { plugins } from '../plugins/index.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

function trackedFiles (): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean)
}

describe('README', () => {
  it('is a front door of under 250 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(250)
  })

  it('links only to files that exist', () => {
    const targets = [...readme.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1] as string).filter((t) => !/^[a-z]+:/.test(t))
    expect(targets.length).toBeGreaterThan(5)
    expect(targets.filter((t) => !existsSync(join(root, t)))).toEqual([])
  })

  it('lists exactly the registered document types, with their family and folder', () => {
    const section = readme.slice(readme.indexOf('## Document types the extraction reads'))
    const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| `([A-Z_]+)` \| [^|]+ \| `plugins\/([a-z0-9-]+)\/` \|$/gm)]
      .map((m) => ({ documentType: m[1], family: m[2], folder: m[3] }))
    const registered = plugins.map((p) => ({ documentType: p.documentType, family: p.family }))
    expect(rows.map(({ documentType, family }) => ({ documentType, family }))).toEqual(registered)
    for (const row of rows) expect(existsSync(join(root, 'plugins', row.folder as string, 'index.ts'))).toBe(true)
  })
})

describe('tracked files', () => {
  it('never refer to the team notes outside the repository', () => {
    const outside = /\.\.\/shared\/|\/work\/shared|tax-protocols\.md|STYLE\.md|reference\/documents\.md/
    const offenders = trackedFiles()
      .filter((f) => /\.(md|ts|js|json|sql|sh|txt)$/.test(f) || f.startsWith('.ci/'))
      .filter((f) => f !== 'server/repository.test.ts' && outside.test(readFileSync(join(root, f), 'utf8')))
    expect(offenders).toEqual([])
  })
})
