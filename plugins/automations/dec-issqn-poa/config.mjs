/**
 * The portal configuration: one JSON file (`portal.config.json` beside this module, or the
 * file named by DEC_PORTAL_CONFIG) holding the portal's address and every path and selector
 * the script uses, so that pointing the package at another build of the portal is an edit
 * of that file. Environment overrides: DEC_PORTAL_URL (base address; the tests point it at
 * the loopback portal), DEC_CHROMIUM_PATH (browser executable), DEC_ACTION_TIMEOUT_MS.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * @typedef {{ selector: string, kind: 'select' | 'input', value: string }} FieldConfig
 * @typedef {object} PortalConfig
 * @property {string} baseUrl
 * @property {{ executablePath: string, args: string[] }} browser
 * @property {{ actionMs: number }} timeouts each page load and each wait for an element
 * @property {{ login: string, logout: string }} paths
 * @property {string} errorMessage the box where the portal shows an error (wrong password, refused step)
 * @property {{ cnpj: string, password: string, submit: string }} login
 * @property {{ ready: string, row: string, competenciaCell: string, competenciaText: string, statusCell: string, sentStatus: string, openStatus: string, resume: string, print: string, create: { month: FieldConfig, year: FieldConfig, submit: string } }} periods
 * @property {{ ready: string, send: string }} declaration
 * @property {{ ready: string, confirm: string }} confirmation
 * @property {{ ready: string, format: string }} print
 */

/** Paths of the string settings every configuration must hold. */
const REQUIRED_STRINGS = [
  'baseUrl', 'browser.executablePath', 'paths.login', 'paths.logout',
  'errorMessage', 'login.cnpj', 'login.password', 'login.submit',
  'periods.ready', 'periods.row', 'periods.competenciaCell', 'periods.competenciaText', 'periods.statusCell',
  'periods.sentStatus', 'periods.openStatus', 'periods.resume', 'periods.print',
  'periods.create.month.selector', 'periods.create.month.kind', 'periods.create.month.value',
  'periods.create.year.selector', 'periods.create.year.kind', 'periods.create.year.value', 'periods.create.submit',
  'declaration.ready', 'declaration.send', 'confirmation.ready', 'confirmation.confirm', 'print.ready', 'print.format'
]

/** The configuration cannot be used. */
export class ConfigError extends Error {
  /** @param {string} message */
  constructor (message) {
    super(message)
    this.name = 'ConfigError'
  }
}

/**
 * @param {unknown} root
 * @param {string} path
 * @returns {unknown}
 */
function at (root, path) {
  /** @type {unknown} */
  let v = root
  for (const part of path.split('.')) v = v !== null && typeof v === 'object' ? /** @type {Record<string, unknown>} */ (v)[part] : undefined
  return v
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @returns {PortalConfig}
 */
export function loadConfig (env = process.env) {
  const file = env.DEC_PORTAL_CONFIG !== undefined && env.DEC_PORTAL_CONFIG !== ''
    ? env.DEC_PORTAL_CONFIG
    : fileURLToPath(new URL('./portal.config.json', import.meta.url))
  /** @type {unknown} */
  let raw
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch (e) {
    throw new ConfigError(`The portal configuration ${file} cannot be read as JSON: ${e instanceof Error ? e.message : String(e)}`)
  }
  const missing = REQUIRED_STRINGS.filter((p) => typeof at(raw, p) !== 'string' || at(raw, p) === '')
  if (missing.length > 0) throw new ConfigError(`The portal configuration ${file} lacks: ${missing.join(', ')}.`)
  const config = /** @type {PortalConfig} */ (raw)
  if (!Array.isArray(config.browser.args) || !config.browser.args.every((a) => typeof a === 'string')) throw new ConfigError('browser.args must be an array of strings.')
  if (typeof config.timeouts?.actionMs !== 'number' || !(config.timeouts.actionMs > 0)) throw new ConfigError('timeouts.actionMs must be a positive number.')
  for (const p of ['periods.sentStatus', 'periods.openStatus']) {
    try { RegExp(String(at(raw, p))) } catch { throw new ConfigError(`${p} is not a valid regular expression.`) }
  }

  if (env.DEC_PORTAL_URL !== undefined && env.DEC_PORTAL_URL !== '') config.baseUrl = env.DEC_PORTAL_URL
  if (env.DEC_CHROMIUM_PATH !== undefined && env.DEC_CHROMIUM_PATH !== '') config.browser.executablePath = env.DEC_CHROMIUM_PATH
  if (env.DEC_ACTION_TIMEOUT_MS !== undefined && env.DEC_ACTION_TIMEOUT_MS !== '') {
    const ms = Number(env.DEC_ACTION_TIMEOUT_MS)
    if (!Number.isInteger(ms) || ms <= 0) throw new ConfigError('DEC_ACTION_TIMEOUT_MS must be a positive whole number of milliseconds.')
    config.timeouts.actionMs = ms
  }
  try {
    const url = new URL(config.baseUrl)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http')
  } catch {
    throw new ConfigError('The portal base URL must be an http or https address.')
  }
  return config
}

/**
 * A template with `{MM}` (two-digit month), `{M}` and `{YYYY}` filled in.
 * @param {string} template
 * @param {{ ano: number, mes: number }} period
 */
export function fillPeriod (template, period) {
  return template.replaceAll('{MM}', String(period.mes).padStart(2, '0')).replaceAll('{M}', String(period.mes)).replaceAll('{YYYY}', String(period.ano))
}
