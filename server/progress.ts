/**
 * A one-line progress bar on stderr, drawn only when stderr is a terminal so that
 * redirected output and CI logs stay clean. Redraws at most ten times a second.
 */
export interface Progress {
  /** Bytes read of the file's total, and the rows read so far. */
  update: (done: number, total: number, rows?: number) => void
  finish: () => void
}

const WIDTH = 30

/** `rows read, N rows/s, about T s left`: rate and time left from the first figures, on this process's clock. */
function figures (rows: number, done: number, total: number | null, elapsedS: number): string {
  const rate = elapsedS > 0 ? Math.round(rows / elapsedS) : 0
  const left = total !== null && total > 0 && done > 0 && elapsedS > 0
    ? Math.max(0, (total - done) / (done / elapsedS))
    : undefined
  return `${rows} rows read, ${rate} rows/s${left === undefined ? '' : `, about ${Math.ceil(left)} s left`}`
}

/** `razao analyze` and `diagnose`: a bar with the rows read, the rate and the time left, on a terminal only. */
export function progressBar (label: string, stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): Progress {
  if (stream.isTTY !== true) return { update: () => {}, finish: () => {} }
  let started: number | undefined
  let last = 0
  let drawn = false
  return {
    update (done, total, rows = 0) {
      const t = now()
      started ??= t
      if (t - last < 100 && done < total) return
      last = t
      const ratio = total > 0 ? Math.min(1, done / total) : 0
      const filled = Math.round(ratio * WIDTH)
      stream.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${figures(rows, done, total, (t - started) / 1000)}\x1b[K`)
      drawn = true
    },
    finish () {
      if (drawn) stream.write('\r\x1b[K')
    }
  }
}

/** What `razao import` shows of a load: its phase, rows, rate and time left. */
export interface LoadFigures {
  importacaoId: string | null
  phase: string | null
  rowsRead: number
  bytesRead: number
  bytesTotal: number | null
}

/** A plain line on a stream that is not a terminal, at most this often (and at each new phase), ms. */
export const PLAIN_LINE_MS = 2000

/**
 * `razao import --follow`: on a terminal, one line redrawn at most ten times a second;
 * otherwise (a log, a pipe) a plain line at each new phase and every PLAIN_LINE_MS. Rate
 * and time left count from the first figures, on this process's clock.
 */
export function loadProgressLine (label: string, stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): Progress & { show: (f: LoadFigures) => void } {
  const tty = stream.isTTY === true
  let started: number | undefined
  let last = 0
  let lastPhase: string | null = null
  let drawn = false
  const describe = (f: LoadFigures): string => {
    const elapsedS = started === undefined ? 0 : (now() - started) / 1000
    const id = f.importacaoId === null ? '' : ` ${f.importacaoId}`
    return `${label}${id}: ${f.phase ?? 'starting'}, ${figures(f.rowsRead, f.bytesRead, f.bytesTotal, elapsedS)}`
  }
  return {
    show (f) {
      started ??= now()
      const t = now()
      const newPhase = f.phase !== lastPhase
      lastPhase = f.phase
      if (tty) {
        if (t - last < 100 && !newPhase) return
        last = t
        stream.write(`\r${describe(f)}\x1b[K`)
        drawn = true
        return
      }
      if (t - last < PLAIN_LINE_MS && !newPhase) return
      last = t
      stream.write(`razao: ${describe(f)}\n`)
    },
    update () {},
    finish () {
      if (drawn) stream.write('\r\x1b[K')
    }
  }
}
