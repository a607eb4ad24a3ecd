/** Markdown tables and the number formats the suites print. */

export function markdownTable (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`
  return [line(header), rule, ...rows.map(line)].join('\n')
}

export const DASH = '—'

export function seconds (ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 3 : 1)
}

export function integer (n: number): string {
  return Math.round(n).toLocaleString('en-US')
}

/** MB = 10^6 bytes throughout, so MB/s and peak RSS use the same unit. */
export function megabytes (bytes: number, digits = 0): string {
  return (bytes / 1e6).toFixed(digits)
}

export function ratio (r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : DASH
}

export function sizeLabel (rows: number): string {
  return rows >= 1_000_000 && rows % 1_000_000 === 0 ? `${rows / 1_000_000}M` : rows % 1000 === 0 ? `${rows / 1000}k` : String(rows)
}
