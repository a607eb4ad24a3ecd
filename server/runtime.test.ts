/**
 * The supported Node lines are said in four places: server/runtime.ts (what the health
 * endpoints report), package.json's `engines`, .ci/run (the lines the suite runs on) and
 * the native-handle list of core/xlsx/inflate.ts. These tests keep them saying the same.
 */
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { NATIVE_HANDLE_NODE_MAJORS } from '../core/xlsx/inflate.js'
import { SUPPORTED_NODE_LINES, TESTED_PAST_END_OF_LIFE, runtimeReport, unsupportedLineWarning } from './runtime.js'

const root = new URL('..', import.meta.url)
const line = Number(process.versions.node.split('.')[0])

/** The majors a `^20.10.0 || ^22.0.0 ...` range names, in order. */
function majorsOf (range: string): number[] {
  return range.split('||').map((part) => {
    const m = /^\s*\^(\d+)\.\d+\.\d+\s*$/.exec(part)
    if (m === null) throw new Error(`engines.node part "${part}" is not a caret range of one major`)
    return Number(m[1])
  })
}

describe('the supported Node lines', () => {
  it('are the lines package.json\'s engines allows', async () => {
    const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { engines: { node: string } }
    expect(majorsOf(pkg.engines.node)).toEqual(SUPPORTED_NODE_LINES)
  })

  it('are each run by .ci/run: the machine\'s line and every other one through .ci/node-line', async () => {
    const script = await readFile(new URL('.ci/run', root), 'utf8')
    const listed = /^NODE_LINES="([\d ]+)"$/m.exec(script)
    expect(listed, '.ci/run names its lines in NODE_LINES="..."').not.toBeNull()
    expect(listed![1]!.trim().split(/\s+/).map(Number)).toEqual(SUPPORTED_NODE_LINES)
  })

  it('include the line these tests run on when CI runs them', () => {
    if (process.env.CI === 'true') expect([...SUPPORTED_NODE_LINES, ...TESTED_PAST_END_OF_LIFE.keys()]).toContain(line)
    expect(unsupportedLineWarning() === undefined).toBe(SUPPORTED_NODE_LINES.includes(line))
    if (TESTED_PAST_END_OF_LIFE.has(line)) expect(unsupportedLineWarning()).toMatch(/reached its end of life on \d{4}-\d{2}-\d{2} and is not supported/)
  })

  it('each have the zlib native handle checked (inflate.test.ts runs there), and the report says which engine this line uses', async () => {
    expect([...NATIVE_HANDLE_NODE_MAJORS].every((m) => SUPPORTED_NODE_LINES.includes(m) || TESTED_PAST_END_OF_LIFE.has(m))).toBe(true)
    const report = await runtimeReport()
    expect(report).toEqual({
      name: 'Node.js',
      version: process.versions.node,
      line,
      supported: SUPPORTED_NODE_LINES.includes(line),
      xlsxInflate: NATIVE_HANDLE_NODE_MAJORS.has(line) ? 'native-handle' : 'stream'
    })
  })
})
