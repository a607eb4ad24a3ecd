/**
 * The gateway's view of the one company registry (`empresas`, migration 0002): companies
 * found by their generated `empresa_codigo`, head offices and branches, and the
 * certificate facts the admin screen shows. The razão social is the `nome` column the
 * import service and the CLI already use.
 *
 * Rules kept here (a CHECK cannot see other rows): a branch's head office is itself a
 * head office (one level), shares the branch's CNPJ root (the first 8 characters, the
 * same legal entity), and a company with branches cannot become a branch.
 *
 * Checked rules hold under concurrent edits because every change that could break them
 * locks, inside its transaction and before it reads, both rows the rule joins: the
 * company edited and the head office it is given. Two edits touching a common row run
 * one after the other, and the second checks what the first committed (PATCH A→B and
 * PATCH B→C at once: one of them is refused with 400). The locks are taken in id order,
 * so two edits locking the same two rows (A→B and B→A at once) wait instead of deadlocking.
 */
import type { ClientBase, Pool } from 'pg'
import { cnpjRoot, normalizeCnpj } from '../cnpj.js'
import { EngineError } from '../errors.js'
import { isUniqueViolation } from '../db/pg-errors.js'
import { inTransaction } from '../db/transaction.js'
import { ONE_ACTIVE_COMPANY_PER_CNPJ, cnpjTakenMeanwhile, refuseTakenCnpj } from '../db/companies.js'

export interface CertificateSummary {
  subject: string
  cnpj: string
  validFrom: Date
  validUntil: Date
  fingerprint: string
}

export interface GatewayCompany {
  id: string
  empresaCodigo: string
  /** The `nome` column. */
  razaoSocial: string
  cnpj: string | null
  codigoDominio: string | null
  matrizId: string | null
  matrizEmpresaCodigo: string | null
  herdaCertificadoMatriz: boolean
  ativo: boolean
  criadoEm: Date
  atualizadoEm: Date
  /** The company's own certificate (an inheriting branch uses its head office's instead). */
  certificate: CertificateSummary | null
}

export interface NewGatewayCompany {
  razaoSocial: string
  cnpj: string
  codigoDominio?: string | undefined
  matrizEmpresaCodigo?: string | undefined
  herdaCertificadoMatriz?: boolean | undefined
}

/** Fields a PATCH may change; `null` clears the optional ones. */
export interface CompanyChanges {
  razaoSocial?: string
  cnpj?: string
  codigoDominio?: string | null
  matrizEmpresaCodigo?: string | null
  herdaCertificadoMatriz?: boolean
  ativo?: boolean
}

type Db = Pool | ClientBase

/** The company columns with its own certificate's facts (module-private to core/gateway). */
export const COMPANY_SELECT = `SELECT e.id, e.empresa_codigo, e.nome, e.cnpj, e.codigo_dominio, e.matriz_id,
  m.empresa_codigo AS matriz_empresa_codigo, e.herda_certificado_matriz, e.ativo, e.criado_em, e.atualizado_em,
  c.subject, c.cnpj AS cert_cnpj, c.valid_from, c.valid_until, c.fingerprint
  FROM empresas e LEFT JOIN empresas m ON m.id = e.matriz_id LEFT JOIN certificados c ON c.empresa_id = e.id`

export interface CompanyRow {
  id: string, empresa_codigo: string, nome: string, cnpj: string | null, codigo_dominio: string | null, matriz_id: string | null
  matriz_empresa_codigo: string | null, herda_certificado_matriz: boolean, ativo: boolean, criado_em: Date, atualizado_em: Date
  subject: string | null, cert_cnpj: string | null, valid_from: Date | null, valid_until: Date | null, fingerprint: string | null
}

export function toCompany (r: CompanyRow): GatewayCompany {
  return {
    id: r.id,
    empresaCodigo: r.empresa_codigo,
    razaoSocial: r.nome,
    cnpj: r.cnpj,
    codigoDominio: r.codigo_dominio,
    matrizId: r.matriz_id,
    matrizEmpresaCodigo: r.matriz_empresa_codigo,
    herdaCertificadoMatriz: r.herda_certificado_matriz,
    ativo: r.ativo,
    criadoEm: r.criado_em,
    atualizadoEm: r.atualizado_em,
    certificate: r.subject === null
      ? null
      : { subject: r.subject, cnpj: r.cert_cnpj!, validFrom: r.valid_from!, validUntil: r.valid_until!, fingerprint: r.fingerprint! }
  }
}

export function companyNotFound (empresaCodigo: string): EngineError {
  const shown = empresaCodigo.length > 64 ? `${empresaCodigo.slice(0, 64)}…` : empresaCodigo
  return new EngineError('GATEWAY_COMPANY_NOT_FOUND', `No company is registered with empresa_codigo "${shown}".`)
}

/** Every company, by razão social. */
export async function listGatewayCompanies (db: Db): Promise<GatewayCompany[]> {
  const { rows } = await db.query<CompanyRow>(`${COMPANY_SELECT} ORDER BY e.nome, e.empresa_codigo`)
  return rows.map(toCompany)
}

export async function findGatewayCompany (db: Db, empresaCodigo: string): Promise<GatewayCompany | undefined> {
  const { rows } = await db.query<CompanyRow>(`${COMPANY_SELECT} WHERE e.empresa_codigo = $1`, [empresaCodigo])
  return rows[0] === undefined ? undefined : toCompany(rows[0])
}

export async function getGatewayCompany (db: Db, empresaCodigo: string): Promise<GatewayCompany> {
  const company = await findGatewayCompany(db, empresaCodigo)
  if (company === undefined) throw companyNotFound(empresaCodigo)
  return company
}

function invalid (message: string): EngineError {
  return new EngineError('REQUEST_INVALID', message)
}

function cleanName (text: string): string {
  const name = text.trim()
  if (name === '' || name.length > 200) throw invalid('razao_social must be 1 to 200 characters.')
  return name
}

function cleanCnpj (text: string): string {
  const cnpj = normalizeCnpj(text)
  if (cnpj === null) throw invalid(`cnpj "${text.slice(0, 40)}" is not a valid CNPJ (14 characters, numeric or alphanumeric, with matching check digits).`)
  return cnpj
}

function cleanCodigoDominio (text: string | null | undefined): string | null {
  if (text === undefined || text === null) return null
  const code = text.trim()
  if (code === '') return null
  if (code.length > 64) throw invalid('codigo_dominio must be at most 64 characters.')
  return code
}

/** The state a company would have, checked against its head office, its branches and its own certificate. */
async function checkStructure (db: Db, state: { id: string | null, cnpj: string | null, matrizEmpresaCodigo: string | null, herda: boolean, certificateCnpj: string | null }): Promise<string | null> {
  if (state.herda && state.matrizEmpresaCodigo === null) throw invalid('herda_certificado_matriz needs matriz_empresa_codigo: only a branch inherits its head office\'s certificate.')
  let matrizId: string | null = null
  if (state.matrizEmpresaCodigo !== null) {
    const matriz = await findGatewayCompany(db, state.matrizEmpresaCodigo)
    if (matriz === undefined) throw invalid(`matriz_empresa_codigo "${state.matrizEmpresaCodigo}" names no registered company.`)
    if (matriz.id === state.id) throw invalid('matriz_empresa_codigo names the company itself.')
    if (matriz.matrizId !== null) throw invalid(`matriz_empresa_codigo "${state.matrizEmpresaCodigo}" is itself a branch; a branch's head office must be a head office.`)
    if (matriz.cnpj === null || state.cnpj === null || cnpjRoot(matriz.cnpj) !== cnpjRoot(state.cnpj)) {
      throw invalid(`A branch shares its head office's CNPJ root (first 8 characters); "${state.matrizEmpresaCodigo}" has another.`)
    }
    matrizId = matriz.id
  }
  if (state.id !== null) {
    const { rows } = await db.query<{ cnpj: string | null }>('SELECT cnpj FROM empresas WHERE matriz_id = $1', [state.id])
    if (rows.length > 0 && matrizId !== null) throw invalid('This company has branches of its own, so it cannot become a branch.')
    if (rows.some((b) => b.cnpj !== null && (state.cnpj === null || cnpjRoot(b.cnpj) !== cnpjRoot(state.cnpj)))) {
      throw invalid('The new CNPJ has another root than this head office\'s branches.')
    }
  }
  if (state.certificateCnpj !== null && (state.cnpj === null || cnpjRoot(state.cnpj) !== cnpjRoot(state.certificateCnpj))) {
    throw new EngineError('GATEWAY_CERT_CNPJ_MISMATCH', 'The new CNPJ has another root than the company\'s stored certificate; remove the certificate first.')
  }
  return matrizId
}

function duplicate (err: unknown, codigoDominio: string | null, cnpj: string | null): unknown {
  if (isUniqueViolation(err, ONE_ACTIVE_COMPANY_PER_CNPJ)) return cnpjTakenMeanwhile(cnpj)
  if (isUniqueViolation(err)) return new EngineError('COMPANY_EXISTS', `A company with codigo_dominio "${codigoDominio ?? ''}" is already registered.`)
  return err
}

export async function createGatewayCompany (pool: Pool, input: NewGatewayCompany): Promise<GatewayCompany> {
  const razaoSocial = cleanName(input.razaoSocial)
  const cnpj = cleanCnpj(input.cnpj)
  const codigoDominio = cleanCodigoDominio(input.codigoDominio)
  const matrizCodigo = input.matrizEmpresaCodigo === undefined || input.matrizEmpresaCodigo.trim() === '' ? null : input.matrizEmpresaCodigo.trim()
  const herda = input.herdaCertificadoMatriz === true
  return await inTransaction(pool, async (client) => {
    if (matrizCodigo !== null) await lockCompanies(client, [], [matrizCodigo])
    const matrizId = await checkStructure(client, { id: null, cnpj, matrizEmpresaCodigo: matrizCodigo, herda, certificateCnpj: null })
    await refuseTakenCnpj(client, cnpj, null)
    try {
      const { rows } = await client.query<{ empresa_codigo: string }>(
        `INSERT INTO empresas (nome, cnpj, codigo_dominio, matriz_id, herda_certificado_matriz)
         VALUES ($1, $2, $3, $4, $5) RETURNING empresa_codigo`,
        [razaoSocial, cnpj, codigoDominio, matrizId, herda])
      return await getGatewayCompany(client, rows[0]!.empresa_codigo)
    } catch (err) {
      throw duplicate(err, codigoDominio, cnpj)
    }
  })
}

export async function updateGatewayCompany (pool: Pool, empresaCodigo: string, changes: CompanyChanges): Promise<GatewayCompany> {
  const newMatriz = changes.matrizEmpresaCodigo === undefined || changes.matrizEmpresaCodigo === null ? '' : changes.matrizEmpresaCodigo.trim()
  return await inTransaction(pool, async (client) => {
    const locked = await lockCompanies(client, [empresaCodigo], newMatriz === '' ? [] : [newMatriz])
    if (!locked.includes(empresaCodigo)) throw companyNotFound(empresaCodigo)
    const current = await getGatewayCompany(client, empresaCodigo)
    const cnpj = changes.cnpj === undefined ? current.cnpj : cleanCnpj(changes.cnpj)
    const razaoSocial = changes.razaoSocial === undefined ? current.razaoSocial : cleanName(changes.razaoSocial)
    const codigoDominio = changes.codigoDominio === undefined ? current.codigoDominio : cleanCodigoDominio(changes.codigoDominio)
    const matrizCodigo = changes.matrizEmpresaCodigo === undefined
      ? current.matrizEmpresaCodigo
      : (changes.matrizEmpresaCodigo === null || changes.matrizEmpresaCodigo.trim() === '' ? null : changes.matrizEmpresaCodigo.trim())
    // Leaving the head office ends the inheritance unless the request sets it again.
    const herda = changes.herdaCertificadoMatriz ?? (matrizCodigo === null ? false : current.herdaCertificadoMatriz)
    const matrizId = await checkStructure(client, { id: current.id, cnpj, matrizEmpresaCodigo: matrizCodigo, herda, certificateCnpj: current.certificate?.cnpj ?? null })
    const ativo = changes.ativo ?? current.ativo
    if (ativo && cnpj !== null) await refuseTakenCnpj(client, cnpj, current.id)
    try {
      await client.query(
        `UPDATE empresas SET nome = $2, cnpj = $3, codigo_dominio = $4, matriz_id = $5, herda_certificado_matriz = $6,
           ativo = $7, atualizado_em = now() WHERE id = $1`,
        [current.id, razaoSocial, cnpj, codigoDominio, matrizId, herda, ativo])
    } catch (err) {
      throw duplicate(err, codigoDominio, cnpj)
    }
    return await getGatewayCompany(client, empresaCodigo)
  })
}

/** DELETE deactivates: the row stays (imports and certificates refer to it). */
export async function deactivateGatewayCompany (pool: Pool, empresaCodigo: string): Promise<GatewayCompany> {
  const { rowCount } = await pool.query('UPDATE empresas SET ativo = false, atualizado_em = now() WHERE empresa_codigo = $1', [empresaCodigo])
  if (rowCount === 0) throw companyNotFound(empresaCodigo)
  return await getGatewayCompany(pool, empresaCodigo)
}

/**
 * Locks the rows of the given companies (those that exist) for the rest of the
 * transaction, in id order; returns the codes found. Ids and codes never change, so
 * finding them before the lock is safe; whatever else is read after it is current.
 */
async function lockCompanies (client: ClientBase, edited: string[], headOffices: string[]): Promise<string[]> {
  const { rows } = await client.query<{ empresa_codigo: string }>(
    `SELECT empresa_codigo FROM empresas WHERE empresa_codigo = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE`,
    [[...edited, ...headOffices]])
  return rows.map((r) => r.empresa_codigo)
}

