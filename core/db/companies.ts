/**
 * The one registry of companies (`empresas`), shared by the import service, the
 * CLI and the gateway's admin API (core/gateway/companies.ts). Here a company is found
 * by its accounting system code, `codigo_dominio`; the gateway finds it by its
 * generated `empresa_codigo`.
 */
import type { ClientBase, Pool } from 'pg'
import { normalizeCnpj } from '../cnpj.js'
import { EngineError } from '../errors.js'
import { isUniqueViolation } from './pg-errors.js'

export interface Company {
  id: string
  /** The gateway's generated code (migration 0002). */
  empresaCodigo: string
  /** Null for a company the gateway registered without an accounting system code. */
  codigoDominio: string | null
  nome: string
  cnpj: string | null
  ativo: boolean
  criadoEm: string
  atualizadoEm: string
}

export interface NewCompany { codigoDominio: string, nome: string, cnpj?: string | undefined }

type Db = Pool | ClientBase

const COLUMNS = `id, empresa_codigo, codigo_dominio, nome, cnpj, ativo,
  to_char(criado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS criado_em,
  to_char(atualizado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS atualizado_em`

interface CompanyRow { id: string, empresa_codigo: string, codigo_dominio: string | null, nome: string, cnpj: string | null, ativo: boolean, criado_em: string, atualizado_em: string }

function toCompany (row: CompanyRow): Company {
  return { id: row.id, empresaCodigo: row.empresa_codigo, codigoDominio: row.codigo_dominio, nome: row.nome, cnpj: row.cnpj, ativo: row.ativo, criadoEm: row.criado_em, atualizadoEm: row.atualizado_em }
}

/** Validates and normalizes a new company; a CNPJ may come formatted (`12.345.678/0001-95`, `12.abc.345/01de-35`). */
export function normalizeCompany (input: NewCompany): { codigoDominio: string, nome: string, cnpj: string | null } {
  const codigoDominio = input.codigoDominio.trim()
  const nome = input.nome.trim()
  if (codigoDominio === '' || codigoDominio.length > 64) throw new EngineError('REQUEST_INVALID', 'codigo_dominio must be 1 to 64 characters.')
  if (nome === '' || nome.length > 200) throw new EngineError('REQUEST_INVALID', 'The company name must be 1 to 200 characters.')
  let cnpj: string | null = null
  if (input.cnpj !== undefined && input.cnpj.trim() !== '') {
    cnpj = normalizeCnpj(input.cnpj)
    if (cnpj === null) {
      throw new EngineError('REQUEST_INVALID', `"${input.cnpj}" is not a valid CNPJ (14 characters, numeric or alphanumeric, with matching check digits).`)
    }
  }
  return { codigoDominio, nome, cnpj }
}

export async function addCompany (db: Db, input: NewCompany): Promise<Company> {
  const c = normalizeCompany(input)
  if (c.cnpj !== null) await refuseTakenCnpj(db, c.cnpj, null)
  try {
    const { rows } = await db.query<CompanyRow>(
      `INSERT INTO empresas (codigo_dominio, nome, cnpj) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
      [c.codigoDominio, c.nome, c.cnpj])
    return toCompany(rows[0]!)
  } catch (err) {
    if (isUniqueViolation(err, ONE_ACTIVE_COMPANY_PER_CNPJ)) throw cnpjTakenMeanwhile(c.cnpj)
    if (isUniqueViolation(err)) throw new EngineError('COMPANY_EXISTS', `A company with codigo_dominio "${c.codigoDominio}" is already registered.`)
    throw err
  }
}

/** The partial unique index of migration 0004: at most one active company per CNPJ. */
export const ONE_ACTIVE_COMPANY_PER_CNPJ = 'empresas_um_cnpj_ativo'

/**
 * Refuses a CNPJ that another active company (not `exceptId`) holds, naming that company,
 * so the person registering it can use it instead. The unique index decides a race between
 * two registrations; this check only gives the common case a useful answer.
 */
export async function refuseTakenCnpj (db: Db, cnpj: string, exceptId: string | null): Promise<void> {
  const { rows } = await db.query<{ empresa_codigo: string, codigo_dominio: string | null, nome: string }>(
    `SELECT empresa_codigo, codigo_dominio, nome FROM empresas
      WHERE cnpj = $1 AND ativo AND ($2::uuid IS NULL OR id <> $2::uuid) LIMIT 1`,
    [cnpj, exceptId])
  const holder = rows[0]
  if (holder === undefined) return
  const codes = holder.codigo_dominio === null
    ? `empresa_codigo "${holder.empresa_codigo}"`
    : `codigo_dominio "${holder.codigo_dominio}", empresa_codigo "${holder.empresa_codigo}"`
  throw new EngineError('COMPANY_CNPJ_EXISTS',
    `CNPJ ${formatCnpj(cnpj)} already belongs to the active company "${holder.nome}" (${codes}). Use that company, or deactivate it first.`,
    { empresa_codigo: holder.empresa_codigo, codigo_dominio: holder.codigo_dominio })
}

export function cnpjTakenMeanwhile (cnpj: string | null): EngineError {
  return new EngineError('COMPANY_CNPJ_EXISTS', `CNPJ ${cnpj === null ? '' : formatCnpj(cnpj)} was registered to another active company at the same moment; list the companies to find it.`)
}

/** 12.345.678/0001-95, the way people write a CNPJ. */
function formatCnpj (c: string): string {
  return `${c.slice(0, 2)}.${c.slice(2, 5)}.${c.slice(5, 8)}/${c.slice(8, 12)}-${c.slice(12)}`
}

export async function listCompanies (db: Db): Promise<Company[]> {
  const { rows } = await db.query<CompanyRow>(`SELECT ${COLUMNS} FROM empresas ORDER BY codigo_dominio NULLS LAST, empresa_codigo`)
  return rows.map(toCompany)
}

export async function findCompany (db: Db, codigoDominio: string): Promise<Company | undefined> {
  const { rows } = await db.query<CompanyRow>(`SELECT ${COLUMNS} FROM empresas WHERE codigo_dominio = $1`, [codigoDominio.trim()])
  return rows[0] === undefined ? undefined : toCompany(rows[0])
}

/** Activates or deactivates a company; unknown codes are COMPANY_NOT_FOUND. */
export async function setCompanyActive (db: Db, codigoDominio: string, ativo: boolean): Promise<Company> {
  if (ativo) {
    const current = await findCompany(db, codigoDominio)
    if (current !== undefined && !current.ativo && current.cnpj !== null) await refuseTakenCnpj(db, current.cnpj, current.id)
  }
  let rows: CompanyRow[]
  try {
    ({ rows } = await db.query<CompanyRow>(
      `UPDATE empresas SET ativo = $2, atualizado_em = now() WHERE codigo_dominio = $1 RETURNING ${COLUMNS}`,
      [codigoDominio.trim(), ativo]))
  } catch (err) {
    if (isUniqueViolation(err, ONE_ACTIVE_COMPANY_PER_CNPJ)) throw cnpjTakenMeanwhile(null)
    throw err
  }
  if (rows[0] === undefined) throw companyNotFound(codigoDominio)
  return toCompany(rows[0])
}

export function companyNotFound (codigoDominio: string): EngineError {
  return new EngineError('COMPANY_NOT_FOUND', `No company is registered with codigo_dominio "${codigoDominio}". Register it first (razao companies add).`)
}

export function companyInactive (codigoDominio: string): EngineError {
  return new EngineError('COMPANY_INACTIVE', `The company with codigo_dominio "${codigoDominio}" is inactive; activate it before importing.`)
}
