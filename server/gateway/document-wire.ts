/**
 * The fields of GET /v1/documents and `razao documents list`, checked one by one (a 400
 * names the field): cnpj (punctuation accepted, check digits verified), desde/ate
 * (YYYY-MM-DD, inclusive), tipo, situacao, limite (1 to 500, default 50) and apos (the
 * previous page's `proximo`).
 */
import { cnpjChars, isValidCnpj } from '../../core/cnpj.js'
import { DOCUMENT_KINDS, DOCUMENT_STATUSES, GatewayError } from '../../core/gateway/index.js'
import type { DocumentFilter } from '../../core/gateway/index.js'
import { DEFAULT_PAGE, MAX_PAGE } from './document-page.js'

export { DEFAULT_PAGE, MAX_PAGE } from './document-page.js'

const invalid = (detail: string): GatewayError => new GatewayError(400, 'GATEWAY_INVALID_REQUEST', detail)

function single (query: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = query[name]
  if (Array.isArray(v)) throw invalid(`${name} is given more than once.`)
  return v === '' ? undefined : v
}

function date (query: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = single(query, name)
  if (v === undefined) return undefined
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v)
  const ok = m !== null && (() => {
    const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
    return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])
  })()
  if (!ok) throw invalid(`${name} must be a date as YYYY-MM-DD (e.g. 2026-11-20).`)
  return v
}

export function readDocumentFilter (query: Record<string, string | string[] | undefined>): DocumentFilter {
  for (const name of Object.keys(query)) {
    if (!['cnpj', 'desde', 'ate', 'tipo', 'situacao', 'limite', 'apos'].includes(name)) {
      throw invalid(`Unknown parameter "${name.slice(0, 40)}": the filters are cnpj, desde, ate, tipo, situacao, limite and apos.`)
    }
  }
  const cnpjText = single(query, 'cnpj')
  let cnpj: string | undefined
  if (cnpjText !== undefined) {
    const c = cnpjChars(cnpjText)
    if (c === null || !isValidCnpj(c)) throw invalid('cnpj must be a CNPJ of 14 characters with valid check digits (punctuation is allowed).')
    cnpj = c
  }
  const desde = date(query, 'desde')
  const ate = date(query, 'ate')
  if (desde !== undefined && ate !== undefined && desde > ate) throw invalid('desde is after ate.')
  const tipo = single(query, 'tipo')
  if (tipo !== undefined && !(DOCUMENT_KINDS as readonly string[]).includes(tipo)) throw invalid(`tipo must be one of ${DOCUMENT_KINDS.join(', ')}.`)
  const situacao = single(query, 'situacao')
  if (situacao !== undefined && !(DOCUMENT_STATUSES as readonly string[]).includes(situacao)) throw invalid(`situacao must be one of ${DOCUMENT_STATUSES.join(', ')}.`)
  const limiteText = single(query, 'limite')
  if (limiteText !== undefined && !/^\d{1,4}$/.test(limiteText)) throw invalid(`limite must be a whole number from 1 to ${MAX_PAGE}.`)
  const limite = limiteText === undefined ? DEFAULT_PAGE : Number(limiteText)
  if (limite < 1 || limite > MAX_PAGE) throw invalid(`limite must be a whole number from 1 to ${MAX_PAGE}.`)
  const apos = single(query, 'apos')
  if (apos !== undefined && !/^[1-9]\d{0,17}$/.test(apos)) throw invalid('apos must be the proximo of a previous page.')
  return { cnpj, desde, ate, tipo, situacao, antesDe: apos, limite }
}

/** An NF-e key has 44 digits, an NFS-e key 50. */
export function readChave (chave: string): string {
  if (!/^(?:\d{44}|\d{50})$/.test(chave)) throw invalid('The access key must have 44 digits (NF-e) or 50 digits (NFS-e).')
  return chave
}
