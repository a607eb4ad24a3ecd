/**
 * The Node.js line this process runs on, as the health endpoints report it.
 *
 * SUPPORTED_NODE_LINES is what .ci/run tests (the whole suite and the throughput gate on
 * each line, through .ci/node-line) and what package.json's `engines` allows; a test keeps
 * the two equal. Another line still starts, with a warning in the log and in the health
 * report, because nothing refuses to run there: it is only untested.
 */
import { defaultInflateEngine } from '../core/xlsx/index.js'
import type { InflateEngine } from '../core/xlsx/index.js'

export const SUPPORTED_NODE_LINES: readonly number[] = [20, 22, 24, 26]

export interface RuntimeReport {
  name: 'Node.js'
  version: string
  /** The major version: the release line. */
  line: number
  /** True on a line the suite runs on. */
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

/** A sentence for logs and health warnings when this line is not one the suite runs on. */
export function unsupportedLineWarning (): string | undefined {
  if (SUPPORTED_NODE_LINES.includes(line)) return undefined
  return `Node.js ${process.versions.node} is not a tested line (tested: ${SUPPORTED_NODE_LINES.join(', ')}); run the suite on it before relying on it.`
}
