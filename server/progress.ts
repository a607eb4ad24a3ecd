/**
 * A one-line progress bar on stderr, drawn only when stderr is a terminal so that
 * redirected output and CI logs stay clean. Redraws at most ten times a second.
 */
export interface Progress {
  update: (done: number, total: number) => void
  finish: () => void
}

const WIDTH = 30

export function progressBar (label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (stream.isTTY !== true) return { update: () => {}, finish: () => {} }
  let last = 0
  let drawn = false
  return {
    update (done, total) {
      const now = Date.now()
      if (now - last < 100 && done < total) return
      last = now
      const ratio = total > 0 ? Math.min(1, done / total) : 0
      const filled = Math.round(ratio * WIDTH)
      stream.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}%`)
      drawn = true
    },
    finish () {
      if (drawn) stream.write('\r\x1b[K')
    }
  }
}
