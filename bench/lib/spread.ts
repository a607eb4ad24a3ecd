/**
 * How far the samples behind one figure are spread: what a later run's change has to
 * exceed before it says more than the noise of this machine (bench/lib/compare.ts).
 * No imports, so that every suite and the JSON writer can use it without a cycle.
 */

export interface Spread {
  min: number
  max: number
  median: number
  /** Median absolute deviation from the median, in the figure's unit. */
  mad: number
  /** mad / median: the relative spread compare uses (0 when the median is 0). */
  rel: number
}

export function medianOf (values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The spread of two or more finite samples; undefined for fewer (one measurement has none). */
export function spreadOf (samples: readonly number[]): Spread | undefined {
  const finite = samples.filter(Number.isFinite)
  if (finite.length < 2) return undefined
  const median = medianOf(finite)
  const mad = medianOf(finite.map((x) => Math.abs(x - median)))
  return { min: Math.min(...finite), max: Math.max(...finite), median, mad, rel: median === 0 ? 0 : Math.abs(mad / median) }
}

/**
 * The spread of a sum of two measured quantities (analyze + raw COPY): the ends and the
 * deviations add up, which bounds the sum's spread from above.
 */
export function sumSpread (a: Spread | undefined, b: Spread | undefined): Spread | undefined {
  if (a === undefined || b === undefined) return undefined
  const median = a.median + b.median
  const mad = a.mad + b.mad
  return { min: a.min + b.min, max: a.max + b.max, median, mad, rel: median === 0 ? 0 : Math.abs(mad / median) }
}

/**
 * Relative spread of a ratio of two figures: to first order, the relative spreads of its
 * two sides add up (a side without samples counts as exact).
 */
export function ratioRel (a: Spread | undefined, b: Spread | undefined): number {
  return (a?.rel ?? 0) + (b?.rel ?? 0)
}
