/**
 * The package's input (spec 3, part C, "Packaged automation"): `empresas`, `headless`,
 * `slowMo`. A malformed run (not an object, no companies) is refused as a whole; a malformed
 * company becomes that company's failed item and the others still run.
 */

/**
 * @typedef {object} Company
 * @property {string} razaoSocial
 * @property {string} cnpj 14 characters, upper case, no punctuation
 * @property {string} senha
 * @property {string} inscricaoMunicipal
 * @property {number} ano
 * @property {number} mes 1 to 12
 * @property {string} competencia `MM/YYYY`
 */

/**
 * @typedef {{ ok: true, company: Company } | { ok: false, cnpj: string, competencia: string, error: string }} CompanyCheck
 */

/**
 * @typedef {object} RunInput
 * @property {boolean} headless
 * @property {number} slowMo delay between browser actions, ms
 * @property {CompanyCheck[]} companies in input order
 * @property {string[]} secrets every password of the input, valid company or not
 */

export const MAX_COMPANIES = 500
export const MAX_SLOW_MO_MS = 5_000

/** The whole input cannot be run. */
export class InputError extends Error {
  /** @param {string} message */
  constructor (message) {
    super(message)
    this.name = 'InputError'
  }
}

/**
 * Value of a CNPJ character in the check-digit sums: its code minus 48, which gives digits
 * their value and letters 17 and up (the alphanumeric CNPJ of Receita Federal's IN 2.229/2024).
 * @param {string} c
 */
const charValue = (c) => c.charCodeAt(0) - 48

/**
 * Modulo-11 check digit of the first characters with weights 2..9 from the right.
 * @param {string} body
 */
function checkDigit (body) {
  let sum = 0
  let weight = 2
  for (let i = body.length - 1; i >= 0; i--) {
    sum += charValue(body[i] ?? '0') * weight
    weight = weight === 9 ? 2 : weight + 1
  }
  const r = sum % 11
  return r < 2 ? 0 : 11 - r
}

/**
 * The CNPJ's 14 characters (punctuation `.`, `/`, `-` and spaces removed, letters upper-cased)
 * or null when it is not a valid numeric or alphanumeric CNPJ.
 * @param {string} text
 * @returns {string | null}
 */
export function normalizeCnpj (text) {
  const c = text.replace(/[\s./-]/g, '').toUpperCase()
  if (!/^[0-9A-Z]{12}[0-9]{2}$/.test(c)) return null
  if (/^(\d)\1{13}$/.test(c)) return null
  const d1 = checkDigit(c.slice(0, 12))
  const d2 = checkDigit(c.slice(0, 12) + String(d1))
  return c.endsWith(`${d1}${d2}`) ? c : null
}

/**
 * A whole number from a string of digits or a number, else null.
 * @param {unknown} value
 */
function wholeNumber (value) {
  if (typeof value === 'number' && Number.isInteger(value)) return value
  if (typeof value === 'string' && /^\s*\d{1,4}\s*$/.test(value)) return Number(value)
  return null
}

/**
 * @param {unknown} raw
 * @param {number} index
 * @returns {CompanyCheck}
 */
function checkCompany (raw, index) {
  const where = `empresas[${index}]`
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, cnpj: '', competencia: '', error: `${where} is not an object.` }
  const o = /** @type {Record<string, unknown>} */ (raw)
  const cnpjText = typeof o.cnpj === 'string' ? o.cnpj.slice(0, 32) : ''
  const ano = wholeNumber(o.competenciaAno)
  const mes = wholeNumber(o.competenciaMes)
  const validYear = ano !== null && /^\s*\d{4}\s*$/.test(String(o.competenciaAno)) && ano >= 2000
  const validMonth = mes !== null && mes >= 1 && mes <= 12
  const competencia = validYear && validMonth ? `${String(mes).padStart(2, '0')}/${ano}` : ''
  /** @param {string} error @returns {CompanyCheck} */
  const fail = (error) => ({ ok: false, cnpj: cnpjText, competencia, error: `${where}: ${error}` })

  if (typeof o.cnpj !== 'string') return fail('cnpj is required (14 characters).')
  const cnpj = normalizeCnpj(o.cnpj)
  if (cnpj === null) return fail('cnpj is not a valid CNPJ (14 characters with matching check digits).')
  if (typeof o.senha !== 'string' || o.senha === '') return fail('senha is required.')
  if (!validYear) return fail('competenciaAno must be a 4-digit year (2000 or later).')
  if (!validMonth) return fail('competenciaMes must be a month from 1 to 12.')
  if (o.razaoSocial !== undefined && typeof o.razaoSocial !== 'string') return fail('razaoSocial must be a string.')
  if (o.inscricaoMunicipal !== undefined && typeof o.inscricaoMunicipal !== 'string') return fail('inscricaoMunicipal must be a string.')
  return {
    ok: true,
    company: {
      razaoSocial: typeof o.razaoSocial === 'string' ? o.razaoSocial : '',
      cnpj,
      senha: o.senha,
      inscricaoMunicipal: typeof o.inscricaoMunicipal === 'string' ? o.inscricaoMunicipal : '',
      ano: /** @type {number} */ (ano),
      mes: /** @type {number} */ (mes),
      competencia
    }
  }
}

/**
 * Reads the job's input.
 * @param {unknown} input
 * @returns {RunInput}
 * @throws {InputError} when the input as a whole cannot be run
 */
export function readInput (input) {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new InputError('The input must be a JSON object with an "empresas" array.')
  const o = /** @type {Record<string, unknown>} */ (input)
  const secrets = Array.isArray(o.empresas)
    ? o.empresas.flatMap((e) => e !== null && typeof e === 'object' && typeof e.senha === 'string' && e.senha !== '' ? [e.senha] : [])
    : []
  if (!Array.isArray(o.empresas) || o.empresas.length === 0) throw new InputError('"empresas" must be a non-empty array of companies.')
  if (o.empresas.length > MAX_COMPANIES) throw new InputError(`"empresas" holds ${o.empresas.length} companies; at most ${MAX_COMPANIES} a run.`)
  if (o.headless !== undefined && typeof o.headless !== 'boolean') throw new InputError('"headless" must be a boolean.')
  if (o.slowMo !== undefined && (typeof o.slowMo !== 'number' || !Number.isFinite(o.slowMo) || o.slowMo < 0 || o.slowMo > MAX_SLOW_MO_MS)) throw new InputError(`"slowMo" must be a number of milliseconds from 0 to ${MAX_SLOW_MO_MS}.`)
  return {
    headless: o.headless ?? true,
    slowMo: typeof o.slowMo === 'number' ? o.slowMo : 0,
    companies: o.empresas.map(checkCompany),
    secrets
  }
}
