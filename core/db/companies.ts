/**
 * The one registry of companies (`empresas`), shared by the import service, the
 * CLI and, later, the gateway's admin API. A company is found by its accounting
 * system code, `codigo_dominio`.
 */
import type { ClientBase, Pool } from 'pg'
import { EngineError } from '../errors.js'
import { isUniqueViolation } from './pg-errors.js'

export interface Company {
  id: string
  codigoDominio: string
  nome: string
  cnpj: string | null
  ativo: boolean
  criadoEm: string
  atualizadoEm: string
}

export interface NewCompany { codigoDominio: string, nome: string, cnpj?: string | undefined }

type Db = Pool | ClientBase

const COLUMNS = `id, codigo_dominio, nome, cnpj, ativo,
  to_char(criado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS criado_em,
  to_char(atualizado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS atualizado_em`

interface CompanyRow { id: string, codigo_dominio: string, nome: string, cnpj: string | null, ativo: boolean, criado_em: string, atualizado_em: string }

function toCompany (row: CompanyRow): Company {
  return { id: row.id, codigoDominio: row.codigo_dominio, nome: row.nome, cnpj: row.cnpj, ativo: row.ativo, criadoEm: row.criado_em, atualizadoEm: row.atualizado_em }
}

/** Validates and normalizes a new company; a CNPJ may come formatted (`12.345.678/0001-95`). */
export function normalizeCompany (input: NewCompany): { codigoDominio: string, nome: string, cnpj: string | null } {
  const codigoDominio = input.codigoDominio.trim()
  const nome = input.nome.trim()
  if (codigoDominio === '' || codigoDominio.length > 64) throw new EngineError('REQUEST_INVALID', 'codigo_dominio must be 1 to 64 characters.')
  if (nome === '' || nome.length > 200) throw new EngineError('REQUEST_INVALID', 'The company name must be 1 to 200 characters.')
  let cnpj: string | null = null
  if (input.cnpj !== undefined && input.cnpj.trim() !== '') {
    cnpj = input.cnpj.replace(/[.\-/\s]/g, '')
    if (!/^\d{14}$/.test(cnpj) || !cnpjCheckDigitsOk(cnpj)) {
      throw new EngineError('REQUEST_INVALID', `"${input.cnpj}" is not a valid CNPJ (14 digits with matching check digits).`)
    }
  }
  return { codigoDominio, nome, cnpj }
}

/** The two modulo-11 check digits of a CNPJ. */
export function cnpjCheckDigitsOk (digits: string): boolean {
  if (/^(\d)\1{13}$/.test(digits)) return false
  const check = (length: number): number => {
    let sum = 0
    let weight = length - 7
    for (let i = 0; i < length; i++) {
      sum += Number(digits[i]) * weight
      weight = weight === 2 ? 9 : weight - 1
    }
    const rest = sum % 11
    return rest < 2 ? 0 : 11 - rest
  }
  return check(12) === Number(digits[12]) && check(13) === Number(digits[13])
}

export async function addCompany (db: Db, input: NewCompany): Promise<Company> {
  const c = normalizeCompany(input)
  try {
    const { rows } = await db.query<CompanyRow>(
      `INSERT INTO empresas (codigo_dominio, nome, cnpj) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
      [c.codigoDominio, c.nome, c.cnpj])
    return toCompany(rows[0]!)
  } catch (err) {
    if (isUniqueViolation(err)) throw new EngineError('COMPANY_EXISTS', `A company with codigo_dominio "${c.codigoDominio}" is already registered.`)
    throw err
  }
}

export async function listCompanies (db: Db): Promise<Company[]> {
  const { rows } = await db.query<CompanyRow>(`SELECT ${COLUMNS} FROM empresas ORDER BY codigo_dominio`)
  return rows.map(toCompany)
}

export async function findCompany (db: Db, codigoDominio: string): Promise<Company | undefined> {
  const { rows } = await db.query<CompanyRow>(`SELECT ${COLUMNS} FROM empresas WHERE codigo_dominio = $1`, [codigoDominio.trim()])
  return rows[0] === undefined ? undefined : toCompany(rows[0])
}

/** Activates or deactivates a company; unknown codes are COMPANY_NOT_FOUND. */
export async function setCompanyActive (db: Db, codigoDominio: string, ativo: boolean): Promise<Company> {
  const { rows } = await db.query<CompanyRow>(
    `UPDATE empresas SET ativo = $2, atualizado_em = now() WHERE codigo_dominio = $1 RETURNING ${COLUMNS}`,
    [codigoDominio.trim(), ativo])
  if (rows[0] === undefined) throw companyNotFound(codigoDominio)
  return toCompany(rows[0])
}

export function companyNotFound (codigoDominio: string): EngineError {
  return new EngineError('COMPANY_NOT_FOUND', `No company is registered with codigo_dominio "${codigoDominio}". Register it first (razao companies add).`)
}

export function companyInactive (codigoDominio: string): EngineError {
  return new EngineError('COMPANY_INACTIVE', `The company with codigo_dominio "${codigoDominio}" is inactive; activate it before importing.`)
}
