/**
 * Everything the package prints goes through here: the agent's protocol lines on stdout
 * (`AGENT_FILE_JSON=`, one `AGENT_RESULT_JSON=`), progress on stderr. Every password of the
 * input is replaced by `***` in the log lines and in the result's error texts, so a portal or
 * browser message that happened to quote one cannot carry it into the job's log or result.
 */

/**
 * @typedef {object} Item
 * @property {boolean} success
 * @property {string} cnpj
 * @property {string} competencia `MM/YYYY` ('' when the input's period is unreadable)
 * @property {string | null} download absolute path of the PDF, null on failure
 * @property {'REPRINT' | 'RESUMED_AND_SENT' | 'CREATED_AND_SENT' | null} mode null on failure
 * @property {string} [error] why the company failed
 */

export class Output {
  /**
   * @param {NodeJS.WritableStream} stdout
   * @param {NodeJS.WritableStream} stderr
   */
  constructor (stdout, stderr) {
    this.stdout = stdout
    this.stderr = stderr
    /** @type {string[]} */
    this.secrets = []
    this.resultPrinted = false
  }

  /** @param {string[]} secrets */
  addSecrets (secrets) {
    // Longest first, so a password that contains another is masked whole.
    this.secrets = [...new Set([...this.secrets, ...secrets])].sort((a, b) => b.length - a.length)
  }

  /** @param {string} text */
  redact (text) {
    let out = text
    for (const s of this.secrets) out = out.split(s).join('***')
    return out
  }

  /**
   * JSON with every `error` text redacted before it is escaped (a password holding a quote
   * would otherwise survive in its escaped form). Only error texts carry words from outside
   * (the portal's and the browser's messages); the CNPJ, period and path are the package's own
   * and stay intact even when a password happens to equal the CNPJ.
   * @param {unknown} value
   */
  json (value) {
    return JSON.stringify(value, (key, v) => key === 'error' && typeof v === 'string' ? this.redact(v) : v)
  }

  /** @param {string} message */
  log (message) {
    this.stderr.write(`[dec-issqn-poa] ${this.redact(message).replace(/[\r\n]+/g, ' ')}\n`)
  }

  /** @param {{ path: string, fileName?: string, mimeType?: string }} file */
  file (file) {
    this.stdout.write(`AGENT_FILE_JSON=${this.json(file)}\n`)
  }

  /**
   * Prints an intermediate result, the companies done so far: the agent shows it as the job's
   * result while the job runs. `success` is false (the run is not over), `total` counts every
   * company of the run and `pending` those still to come. Nothing after the final line.
   * @param {Item[]} items
   * @param {number} total
   */
  progress (items, total) {
    if (this.resultPrinted) return
    const succeeded = items.filter((i) => i.success).length
    const result = { success: false, total, succeeded, failed: items.length - succeeded, pending: total - items.length, items }
    this.stdout.write(`AGENT_RESULT_JSON=${this.json(result)}\n`)
  }

  /**
   * Prints the final line once: `success` is true when there was at least one company and
   * every company succeeded.
   * @param {Item[]} items
   * @param {string} [error] why the run as a whole stopped
   */
  result (items, error) {
    if (this.resultPrinted) return
    this.resultPrinted = true
    const succeeded = items.filter((i) => i.success).length
    const result = {
      success: items.length > 0 && succeeded === items.length && error === undefined,
      total: items.length,
      succeeded,
      failed: items.length - succeeded,
      items,
      ...(error === undefined ? {} : { error })
    }
    this.stdout.write(`AGENT_RESULT_JSON=${this.json(result)}\n`)
  }

  /**
   * Exits once both streams have handed their data over (a pipe may be asynchronous).
   * @param {number} code
   */
  exit (code) {
    this.stdout.write('', () => this.stderr.write('', () => process.exit(code)))
  }
}
