/**
 * The Node.js line this process runs on, as the health endpoints report it.
 *
 * SUPPORTED_NODE_LINES is what package.json's `engines` allows and what .ci/run tests (the
 * whole suite on the machine's line, the runtime subset and the throughput gate on every other,
 * through .ci/node-line); a test keeps the two equal. TESTED_PAST_END_OF_LIFE names the lines
 * past their end of life that CI still runs the whole suite on because they are the build
 * machines' own Node: they work today, but they are not supported (the services say so at
 * start and in their health reports). Another line still starts, with a warning, because
 * nothing refuses to run there: it is only untested.
 */
import { defaultInflateEngine } from '../core/xlsx/index.js'
import type { InflateEngine } from '../core/xlsx/index.js'

export const SUPPORTED_NODE_LINES: readonly number[] = [22, 24, 26]

/** Lines past their end of life that CI still tests (as the machines' own), with the date support ended. */
export const TESTED_PAST_END_OF_LIFE: ReadonlyMap<number, string> = new Map([[20, '2026-04-30']])

export interface RuntimeReport {
  name: 'Node.js'
  version: string
  /** The major version: the release line. */
  line: number
  /** True on a supported line (SUPPORTED_NODE_LINES). */
  supported: boolean
  /** How the XLSX reader inflates on this line (core/xlsx/inflate.ts). */
  xlsxInflate: InflateEngine
}

const line = Number(process.versions.node.split('.')[0])

export async function runtimeReport (): Promise<RuntimeReport> {
  return {
    name: 'Node.js',
    version: process.versions.node,
    line,
    supported: SUPPORTED_NODE_LINES.includes(line),
    xlsxInflate: await defaultInflateEngine()
  }
}

/** A sentence for logs and health warnings when this line is not a supported one. */
export function unsupportedLineWarning (): string | undefined {
  if (SUPPORTED_NODE_LINES.includes(line)) return undefined
  const ended = TESTED_PAST_END_OF_LIFE.get(line)
  if (ended !== undefined) {
    return `Node.js ${process.versions.node} reached its end of life on ${ended} and is not supported (supported: ${SUPPORTED_NODE_LINES.join(', ')}); the tests still pass on it, but it gets no security fixes and some dependencies already require Node 22.`
  }
  return `Node.js ${process.versions.node} is not a tested line (supported: ${SUPPORTED_NODE_LINES.join(', ')}); run the suite on it before relying on it.`
}
