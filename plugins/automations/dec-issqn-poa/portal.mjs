/**
 * One company's visit to the DEC portal: log in, find the period in the list, decide the mode
 * (sent: reprint; open: resume and send; absent: create and send), print the declaration,
 * guide and receipt page to one PDF. Each page load and each wait for an element inside a step
 * lasts at most `timeouts.actionMs`; a step that fails throws a StepError naming the step,
 * with the portal's own message when it shows one.
 * Every selector and path comes from the configuration (config.mjs).
 */
import { rename, rm, stat } from 'node:fs/promises'
import { fillPeriod } from './config.mjs'

/** @typedef {import('playwright-core').Browser} Browser */
/** @typedef {import('playwright-core').Page} Page */
/** @typedef {import('playwright-core').Response} Response */
/** @typedef {import('playwright-core').Locator} Locator */
/** @typedef {import('./config.mjs').PortalConfig} PortalConfig */
/** @typedef {import('./input.mjs').Company} Company */
/** @typedef {'REPRINT' | 'RESUMED_AND_SENT' | 'CREATED_AND_SENT'} Mode */

/** A step of the visit failed; the message is meant for the job's result. */
export class StepError extends Error {
  /**
   * @param {string} step
   * @param {string} message
   */
  constructor (step, message) {
    super(`${step}: ${message}`)
    this.name = 'StepError'
    this.step = step
  }
}

/**
 * A readable reason out of whatever a step threw: Playwright's errors carry a call log after
 * the first line, and its timeout errors are recognised by name.
 * @param {unknown} e
 * @param {number} timeoutMs
 */
function reasonOf (e, timeoutMs) {
  if (e instanceof Error && e.name === 'TimeoutError') {
    // A page that loaded without the awaited element is a selector to check, not a slow portal.
    const plain = e.message.replaceAll(String.fromCharCode(27), '').replace(/\[\d+m/g, '')
    const awaited = /waiting for (locator\(.*?\))(?: to be \w+)?$/m.exec(plain)?.[1]
    return awaited === undefined
      ? `the portal did not answer within ${timeoutMs} ms`
      : `the page did not show ${awaited} within ${timeoutMs} ms (check that selector in the portal configuration)`
  }
  const first = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? ''
  return first.replace(/^[\w.]+: /, '')
}

/**
 * Runs one step, turning its failures into a StepError.
 * @template T
 * @param {string} step
 * @param {number} timeoutMs
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function step (step, timeoutMs, fn) {
  try {
    return await fn()
  } catch (e) {
    if (e instanceof StepError) throw e
    throw new StepError(step, reasonOf(e, timeoutMs))
  }
}

/**
 * Clicks and waits for the main frame's next final (non-redirect) document response; refuses
 * an HTTP error page (the portal's 500 page has none of the selectors a step waits for).
 * @param {Page} page
 * @param {string | Locator} target a selector or a locator
 * @param {string} stepName
 * @returns {Promise<Response>}
 */
async function clickAndLoad (page, target, stepName) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().frame() === page.mainFrame() && (r.status() < 300 || r.status() >= 400)),
    typeof target === 'string' ? page.click(target) : target.click()
  ])
  await page.waitForLoadState('domcontentloaded')
  await assertPage(page, response, stepName)
  return response
}

/**
 * @param {Page} page
 * @param {Response | null} response
 * @param {string} stepName
 */
async function assertPage (page, response, stepName) {
  if (response === null) throw new StepError(stepName, 'the portal returned no page')
  if (response.status() >= 400) {
    const title = (await page.title().catch(() => '')).trim()
    throw new StepError(stepName, `the portal answered HTTP ${response.status()}${title === '' ? '' : ` (${title})`}`)
  }
}

/**
 * Text of the portal's error message on the page, if one is shown.
 * @param {Page} page
 * @param {string} selector
 */
async function portalMessage (page, selector) {
  const box = page.locator(selector)
  if (await box.count() === 0) return null
  const text = (await box.first().innerText()).replace(/\s+/g, ' ').trim()
  return text === '' ? null : text
}

/**
 * @param {Page} page
 * @param {import('./config.mjs').FieldConfig} field
 * @param {Company} company
 */
async function setField (page, field, company) {
  const value = fillPeriod(field.value, company)
  if (field.kind === 'select') await page.selectOption(field.selector, value)
  else await page.fill(field.selector, value)
}

/**
 * Declares (or reprints) one company's period and writes the print to `pdfPath`.
 * @param {Browser} browser
 * @param {PortalConfig} config
 * @param {Company} company
 * @param {string} pdfPath
 * @param {(message: string) => void} log
 * @returns {Promise<Mode>}
 */
export async function declareCompany (browser, config, company, pdfPath, log) {
  const timeoutMs = config.timeouts.actionMs
  const url = (/** @type {string} */ path) => new URL(path, config.baseUrl).href
  const context = await browser.newContext({ acceptDownloads: false, locale: 'pt-BR', timezoneId: 'America/Sao_Paulo' })
  context.setDefaultTimeout(timeoutMs)
  context.setDefaultNavigationTimeout(timeoutMs)
  const page = await context.newPage()
  const part = `${pdfPath}.part`
  try {
    await step('login', timeoutMs, async () => {
      log('login')
      await assertPage(page, await page.goto(url(config.paths.login)), 'login')
      await page.fill(config.login.cnpj, company.cnpj)
      await page.fill(config.login.password, company.senha)
      await clickAndLoad(page, config.login.submit, 'login')
      const refused = await portalMessage(page, config.errorMessage)
      if (refused !== null) throw new StepError('login', `the portal refused the login: ${refused}`)
      await page.waitForSelector(config.periods.ready)
    })

    const p = config.periods
    const mode = await step('periods', timeoutMs, async () => {
      log('periods')
      const row = periodRow(page, p, company)
      const rows = await row.count()
      if (rows === 0) return /** @type {Mode} */ ('CREATED_AND_SENT')
      const status = (await row.first().locator(p.statusCell).innerText()).trim()
      if (new RegExp(p.sentStatus).test(status)) return /** @type {Mode} */ ('REPRINT')
      if (new RegExp(p.openStatus).test(status)) return /** @type {Mode} */ ('RESUMED_AND_SENT')
      throw new StepError('periods', `period ${company.competencia} has a status the package does not know: "${status}"`)
    })
    log(`mode ${mode}`)

    if (mode === 'REPRINT') {
      await step('print', timeoutMs, async () => {
        const row = periodRow(page, p, company)
        // The print link may open a new tab on the portal; following its address keeps one page.
        const href = await row.first().locator(p.print).getAttribute('href')
        if (href === null) throw new StepError('print', 'the sent period has no print link')
        await assertPage(page, await page.goto(new URL(href, page.url()).href), 'print')
      })
    } else {
      if (mode === 'CREATED_AND_SENT') {
        await step('create', timeoutMs, async () => {
          log('create')
          await setField(page, p.create.month, company)
          await setField(page, p.create.year, company)
          await clickAndLoad(page, p.create.submit, 'create')
          const refused = await portalMessage(page, config.errorMessage)
          if (refused !== null) throw new StepError('create', `the portal refused to create the period: ${refused}`)
        })
      } else {
        await step('resume', timeoutMs, async () => {
          log('resume')
          await clickAndLoad(page, periodRow(page, p, company).first().locator(p.resume), 'resume')
        })
      }
      await step('send', timeoutMs, async () => {
        log('send')
        await page.waitForSelector(config.declaration.ready)
        await clickAndLoad(page, config.declaration.send, 'send')
        await page.waitForSelector(config.confirmation.ready)
        await clickAndLoad(page, config.confirmation.confirm, 'send')
        const refused = await portalMessage(page, config.errorMessage)
        if (refused !== null) throw new StepError('send', `the portal refused the declaration: ${refused}`)
      })
    }

    await step('print', timeoutMs, async () => {
      log('print')
      await page.waitForSelector(config.print.ready)
      await page.emulateMedia({ media: 'print' })
      await page.pdf({ path: part, format: config.print.format, printBackground: true })
      if ((await stat(part)).size === 0) throw new StepError('print', 'the browser wrote an empty PDF')
      await rename(part, pdfPath)
    })

    // Leaving the session is a courtesy to the portal; its failure changes nothing.
    await page.goto(url(config.paths.logout), { timeout: Math.min(timeoutMs, 5_000) }).catch(() => undefined)
    return mode
  } catch (e) {
    await rm(part, { force: true })
    await rm(pdfPath, { force: true })
    throw e
  } finally {
    await context.close().catch(() => undefined)
  }
}

/**
 * The list's row of the company's period: the row whose period cell reads exactly the
 * configured text (`07/2026`), so `07/2026` never matches `107/2026` or a note beside it.
 * @param {Page} page
 * @param {PortalConfig['periods']} p
 * @param {Company} company
 * @returns {Locator}
 */
function periodRow (page, p, company) {
  const wanted = fillPeriod(p.competenciaText, company).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  return page.locator(p.row).filter({ has: page.locator(p.competenciaCell, { hasText: new RegExp(`^\\s*${wanted}\\s*$`) }) })
}
