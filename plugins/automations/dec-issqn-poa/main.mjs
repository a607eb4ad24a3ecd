/**
 * The DEC package's program, run by the agent as `node main.mjs` in the package folder
 * (plugins/automations/README.md: input on stdin and in $AGENT_JOB_INPUT, outputs in
 * $AGENT_JOB_DIR, `AGENT_FILE_JSON=` per file, an intermediate `AGENT_RESULT_JSON=` line after
 * each company but the last, and the final one at the end).
 *
 * Companies run one after another in one browser, each in a fresh browser context (its own
 * cookies). A company's failure becomes its item and the next company runs. Exit code 0 when
 * the run went through its companies (whatever each one's outcome: the result says), 1 when
 * the run could not start (input or configuration unusable, browser not launched), 143 when
 * stopped by SIGTERM (the items so far are still printed).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, loadConfig } from './config.mjs'
import { InputError, readInput } from './input.mjs'
import { declareCompany } from './portal.mjs'
import { Output } from './output.mjs'

/** @typedef {import('./output.mjs').Item} Item */

const out = new Output(process.stdout, process.stderr)

// A stop (the agent's SIGTERM on shutdown) prints a result whenever it comes: before the run
// has its companies, an empty one; later, `main` puts its own handler here.
let onStop = () => finish([], 143, 'The run was stopped by a signal.')
process.once('SIGTERM', () => onStop())
process.once('SIGINT', () => onStop())

// Playwright's debug logging (DEBUG=pw:api, PWDEBUG) writes each action to stderr itself, the
// text typed into the password field included, past output.mjs. It reads these variables when
// loaded, so they go before the import.
for (const name of ['DEBUG', 'DEBUG_FILE', 'PWDEBUG']) delete process.env[name]
const { chromium } = await import('playwright-core')

/** @returns {unknown} */
function readJobInput () {
  const file = process.env.AGENT_JOB_INPUT
  if (file !== undefined && file !== '') {
    // The same JSON also arrives on stdin; drain it, so an agent writing a large input there
    // is never left waiting on a full pipe.
    process.stdin.on('error', () => undefined).resume()
    return parseInput(readFileSync(file, 'utf8'))
  }
  return parseInput(readFileSync(0, 'utf8'))
}

/**
 * @param {string} text
 * @returns {unknown}
 */
function parseInput (text) {
  try {
    return JSON.parse(text)
  } catch {
    throw new InputError('The input is not valid JSON.')
  }
}

/**
 * Prints the result and exits once the output has drained.
 * @param {Item[]} items
 * @param {number} code
 * @param {string} [error]
 */
function finish (items, code, error) {
  out.result(items, error)
  out.exit(code)
}

/**
 * Failed items for companies that were not processed.
 * @param {import('./input.mjs').CompanyCheck[]} checks
 * @param {string} error
 * @returns {Item[]}
 */
function notProcessed (checks, error) {
  return checks.map((c) => ({ success: false, cnpj: c.ok ? c.company.cnpj : c.cnpj, competencia: c.ok ? c.company.competencia : c.competencia, download: null, mode: null, error }))
}

/** The companies' items so far (an unexpected failure still prints them). */
/** @type {Item[]} */
const items = []

async function main () {
  let run
  let config
  try {
    run = readInput(readJobInput())
    out.addSecrets(run.secrets)
    config = loadConfig()
  } catch (e) {
    if (e instanceof InputError || e instanceof ConfigError) return finish(items, 1, e.message)
    throw e
  }
  const jobDir = process.env.AGENT_JOB_DIR
  if (jobDir === undefined || jobDir === '') return finish(items, 1, 'AGENT_JOB_DIR is not set: the package runs through the agent.')
  const companies = run.companies

  /** @type {import('playwright-core').Browser | undefined} */
  let browser
  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    items.push(...notProcessed(companies.slice(items.length), 'The run was stopped before this company was finished.'))
    out.result(items, 'The run was stopped by a signal.')
    void (browser?.close() ?? Promise.resolve()).catch(() => undefined).finally(() => out.exit(143))
  }
  onStop = stop

  // After each company but the last (the final line follows it at once), the items so far.
  const progress = () => { if (!stopping && items.length < companies.length) out.progress(items, companies.length) }
  for (const [index, check] of companies.entries()) {
    if (stopping) return
    const tag = `[${index + 1}/${companies.length}]`
    if (!check.ok) {
      out.log(`${tag} skipped: ${check.error}`)
      items.push({ success: false, cnpj: check.cnpj, competencia: check.competencia, download: null, mode: null, error: check.error })
      progress()
      continue
    }
    const company = check.company
    if (browser === undefined) {
      try {
        browser = await chromium.launch({ executablePath: config.browser.executablePath, args: config.browser.args, headless: run.headless, slowMo: run.slowMo })
      } catch (e) {
        const reason = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? ''
        out.log(`the browser could not start: ${reason}`)
        items.push(...notProcessed(companies.slice(index), `The browser could not start: ${reason}`))
        return finish(items, 1, `The browser could not start (${config.browser.executablePath}).`)
      }
      if (stopping) return void browser.close().catch(() => undefined)
    }
    const fileName = `dec-${company.cnpj}-${company.ano}-${String(company.mes).padStart(2, '0')}.pdf`
    const path = join(jobDir, fileName)
    try {
      const mode = await declareCompany(browser, config, company, path, (m) => out.log(`${tag} ${company.competencia} ${m}`))
      if (stopping) return
      out.file({ path, fileName, mimeType: 'application/pdf' })
      items.push({ success: true, cnpj: company.cnpj, competencia: company.competencia, download: path, mode })
      out.log(`${tag} ${company.competencia} done: ${mode}`)
    } catch (e) {
      if (stopping) return
      const message = e instanceof Error ? e.message : String(e)
      out.log(`${tag} ${company.competencia} failed: ${message}`)
      items.push({ success: false, cnpj: company.cnpj, competencia: company.competencia, download: null, mode: null, error: message })
    }
    progress()
  }
  await browser?.close().catch(() => undefined)
  finish(items, 0)
}

main().catch((e) => {
  out.log(`unexpected failure: ${e instanceof Error ? e.message : String(e)}`)
  finish(items, 1, 'The package failed unexpectedly; see its log.')
})
