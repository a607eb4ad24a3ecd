/**
 * The contract between a suite (the parent, under tsx) and the child processes
 * that measure (plain node, built code only). A job goes in as one JSON argument;
 * the report comes back as one stdout line after REPORT_PREFIX, so stray output
 * from a peer library cannot be mistaken for it.
 */

export const REPORT_PREFIX = 'BENCH_REPORT '
/** On stderr, after the stack: the one line the parent prints when a child fails. */
export const FAILURE_PREFIX = 'BENCH_FAILED '

/** What a failing child writes to stderr: the stack for people, then the line for the parent. */
export function failureText (err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const stack = err instanceof Error ? err.stack ?? message : message
  return `${stack}\n${FAILURE_PREFIX}${message.split('\n')[0] ?? ''}\n`
}

/** Things one child process can measure; each id is one row of a table. */
export type ContenderId =
  | 'inflate' | 'yauzl' | 'reader' | 'sheetjs' | 'exceljs' | 'sax' | 'saxes'
  | 'inflate-stream' | 'reader-stream'
  | 'analyze' | 'http'

export interface RepeatOptions {
  /** Wall time the measured runs may take together; slow contenders still get minIterations. */
  budgetMs: number
  minIterations: number
  maxIterations: number
}

export interface PassOptions extends RepeatOptions {
  /**
   * Force a full collection before each pass (outside the timed window). Only for
   * contenders that build the whole workbook: their leftover garbage is a second
   * workbook, which would double their peak RSS and bill the next pass for its GC.
   * Streaming readers run without it: in trials a forced full GC made their
   * next pass 10-40 % slower (V8 resizes the heap after a full collection).
   */
  collectBetweenPasses: boolean
}

/** The file to read and the built code to read it with. */
export interface SheetTarget {
  file: string
  sheetPart: string
  /** Absolute path of a copy of dist/, imported by URL so the child never goes through tsx. */
  distDir: string
}

export interface MeasureJob extends PassOptions, SheetTarget {
  contender: ContenderId
  /** Scratch folder (upload temp files of the HTTP case). */
  scratchDir: string
}

/**
 * What one pass saw, checked against the ledger so a contender cannot skip work.
 * Inflate-only passes see bytes, parsers see rows and cells (0 when not counted).
 */
export interface PassCounts {
  rows: number
  cells: number
  xmlBytes: number
  /** CPU another process spent on this pass (the HTTP client), ms; counted in Timing.cpuMedianMs. */
  helperCpuMs?: number
}

/** One timed pass over the file. */
export type Pass = () => Promise<PassCounts>

export interface Timing {
  /** Measured runs in ms (tinybench hands them back sorted). */
  samplesMs: number[]
  medianMs: number
  minMs: number
  /** Runs discarded as warm-up (JIT, page cache, lazy module loading). */
  warmupRuns: number
  /**
   * CPU time (user + system, every thread of the measuring process, plus a helper
   * process's share: PassCounts.helperCpuMs) of a measured run, median, ms. Beside
   * the wall time it tells how many cores a run kept busy.
   */
  cpuMedianMs?: number
  /**
   * The process benchmark: CPU time of the PostgreSQL server's processes during a run,
   * median, ms (when the server runs on this machine; Linux /proc). With cpuMedianMs it
   * gives a run's CPU floor: (ours + database) / cores.
   */
  databaseCpuMedianMs?: number
}

export interface MeasureReport {
  contender: ContenderId
  counts: PassCounts
  timing: Timing
  /** process.resourceUsage().maxRSS: the peak of the whole child, in KiB. */
  maxRssKb: number
  /** RSS before anything was imported: what a bare node costs. */
  startRssKb: number
}

export interface PairJob extends SheetTarget {
  warmupRounds: number
  rounds: number
}

export interface PairReport {
  /** Inflate-only through our ZipArchive (core/xlsx/inflate.ts, as the reader inflates). */
  inflate: Timing
  /** Inflate-only through yauzl's standard read stream (16 KiB pieces). */
  streamInflate: Timing
  reader: Timing
  counts: PassCounts
  maxRssKb: number
}

/** Rows of the /v1/process benchmark (bench/child/process-child.ts). */
export type ProcessCase = 'raw-copy' | 'binary-copy' | 'psql-copy' | 'analyze' | 'process-stream' | 'process-progress' | 'process-per-batch' |
  'process-http' | 'imports-http' | 'csv-http'

export interface ProcessJob {
  file: string
  /** Data rows of the ledger (without the header): what every case must load or count. */
  dataRows: number
  distDir: string
  /** A database URL on the suite's PostgreSQL whose role may create databases. */
  adminUrl: string
  scratchDir: string
  batchSize: number
  cases: ProcessCase[]
  warmupRounds: number
  rounds: number
  /** The same ledger as CSV (the csv-http case), with the same data rows. */
  csvFile?: string | undefined
}

export interface ProcessReport {
  timings: Partial<Record<ProcessCase, Timing>>
  /** Peak RSS of the whole child (server, pool threads, in-process cases; the HTTP client is a process of its own), KiB. */
  maxRssKb: number
}
