/**
 * The encrypted certificate store and the resolver the query routes call. A certificate
 * is checked on upload (opens with its password, is current, names the company's CNPJ
 * root), then its PKCS#12 bytes and password are sealed (seal.ts) with additional data
 * naming the company's id; nothing decrypts them except resolveCertificate, when a
 * query needs them.
 *
 * Inheritance: a branch with `herda_certificado_matriz` queries with its head office's
 * certificate (and its own CNPJ in the query); the flag decides, whatever certificate
 * the branch may have of its own.
 */
import type { Pool } from 'pg'
import { cnpjRoot } from '../cnpj.js'
import { EngineError } from '../errors.js'
import { assertCurrent, inspectCertificate, openInThread } from './certificate.js'
import type { CertificateFacts } from './certificate.js'
import { COMPANY_SELECT, getGatewayCompany, companyNotFound, toCompany } from './companies.js'
import { inTransaction } from '../db/transaction.js'
import type { CompanyRow } from './companies.js'
import type { GatewayCompany } from './companies.js'
import { openSealed, sealValue } from './seal.js'
import { resealWebhookSecrets } from './webhooks.js'
import type { MasterKey } from './master-key.js'
import type { OpenPkcs12 } from '../sign/index.js'

/** What the query routes receive for one company: decrypted in memory, for this call. */
export interface ResolvedCertificate {
  /** The company queried for: its CNPJ goes in the query. */
  empresa: GatewayCompany
  /** Whose certificate it is: the company itself, or the head office a branch inherits from. */
  certificateCompany: GatewayCompany
  /** The PKCS#12 file as uploaded. */
  pfx: Buffer
  password: string
  /** SHA-256 of the certificate (upper-case hex): a stable key for reusing a TLS agent. */
  fingerprint: string
  validUntil: Date
}

export type ResolveCertificate = (empresaCodigo: string) => Promise<ResolvedCertificate>

function aad (companyId: string, field: 'pfx' | 'senha'): string {
  return `razao-gateway/certificados/${companyId}/${field}`
}

/** The company, and its head office when it inherits, each with its sealed certificate. */
const RESOLVE_SQL = `WITH alvo AS (SELECT id, matriz_id, herda_certificado_matriz FROM empresas WHERE empresa_codigo = $1)
  ${COMPANY_SELECT.replace('c.fingerprint', 'c.fingerprint, c.pfx_cifrado, c.senha_cifrada, c.chave_id')}
  WHERE e.id = (SELECT id FROM alvo) OR (e.id = (SELECT matriz_id FROM alvo) AND (SELECT herda_certificado_matriz FROM alvo))`

export interface CertificateStoreOptions {
  pool: Pool
  masterKey: MasterKey
  /** The clock for expiry checks (tests move it). */
  now?: () => Date
  /** How an uploaded file is opened; the service passes a worker thread's opener. Default: in this thread. */
  openPkcs12?: OpenPkcs12
}

export class CertificateStore {
  private readonly pool: Pool
  private readonly masterKey: MasterKey
  private readonly now: () => Date
  private readonly openPkcs12: OpenPkcs12

  constructor (options: CertificateStoreOptions) {
    this.pool = options.pool
    this.masterKey = options.masterKey
    this.now = options.now ?? (() => new Date())
    this.openPkcs12 = options.openPkcs12 ?? openInThread
  }

  /** Validates and stores (or replaces) a company's certificate; returns its facts, never the secrets. */
  async putCertificate (empresaCodigo: string, pfx: Buffer, password: string): Promise<CertificateFacts> {
    const company = await getGatewayCompany(this.pool, empresaCodigo)
    const facts = await inspectCertificate(pfx, password, this.now(), this.openPkcs12)
    if (company.cnpj === null) {
      throw new EngineError('GATEWAY_CERT_CNPJ_MISMATCH', 'The company has no CNPJ to match the certificate against; set its cnpj first.')
    }
    if (cnpjRoot(facts.cnpj) !== cnpjRoot(company.cnpj)) {
      throw new EngineError('GATEWAY_CERT_CNPJ_MISMATCH', `The certificate is for CNPJ root ${cnpjRoot(facts.cnpj)}, the company's root is ${cnpjRoot(company.cnpj)}.`)
    }
    await this.pool.query(
      `INSERT INTO certificados (empresa_id, pfx_cifrado, senha_cifrada, chave_id, subject, cnpj, valid_from, valid_until, fingerprint)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (empresa_id) DO UPDATE SET pfx_cifrado = EXCLUDED.pfx_cifrado, senha_cifrada = EXCLUDED.senha_cifrada,
         chave_id = EXCLUDED.chave_id, subject = EXCLUDED.subject, cnpj = EXCLUDED.cnpj, valid_from = EXCLUDED.valid_from,
         valid_until = EXCLUDED.valid_until, fingerprint = EXCLUDED.fingerprint, atualizado_em = now()`,
      [company.id, sealValue(this.masterKey, pfx, aad(company.id, 'pfx')), sealValue(this.masterKey, Buffer.from(password, 'utf8'), aad(company.id, 'senha')),
        this.masterKey.id, facts.subject, facts.cnpj, facts.validFrom, facts.validUntil, facts.fingerprint])
    return facts
  }

  /** Removes a company's certificate; GATEWAY_CERT_MISSING when it has none. */
  async removeCertificate (empresaCodigo: string): Promise<void> {
    const company = await getGatewayCompany(this.pool, empresaCodigo)
    const { rowCount } = await this.pool.query('DELETE FROM certificados WHERE empresa_id = $1', [company.id])
    if (rowCount === 0) throw new EngineError('GATEWAY_CERT_MISSING', `The company "${empresaCodigo}" has no certificate to remove.`)
  }

  /**
   * The certificate a query for `empresaCodigo` would use, decrypted; typed errors
   * otherwise (see the catalog). One round trip: the company, and its head office when
   * it inherits, each with its sealed certificate (only the one used is opened).
   */
  async resolveCertificate (empresaCodigo: string): Promise<ResolvedCertificate> {
    // A named statement: every query call runs it, and PostgreSQL then plans it once per connection.
    const { rows } = await this.pool.query<CompanyRow & { pfx_cifrado: Buffer | null, senha_cifrada: Buffer | null, chave_id: string | null }>({
      name: 'gateway-resolve-certificate',
      text: RESOLVE_SQL,
      values: [empresaCodigo]
    })
    const targetRow = rows.find((r) => r.empresa_codigo === empresaCodigo)
    if (targetRow === undefined) throw companyNotFound(empresaCodigo)
    const empresa = toCompany(targetRow)
    if (!empresa.ativo) throw new EngineError('GATEWAY_COMPANY_INACTIVE', `The company "${empresaCodigo}" is deactivated; the gateway does not query for it.`)
    let row = targetRow
    let certificateCompany = empresa
    if (empresa.herdaCertificadoMatriz && empresa.matrizId !== null) {
      row = rows.find((r) => r.id === empresa.matrizId)!
      certificateCompany = toCompany(row)
      if (!certificateCompany.ativo) {
        throw new EngineError('GATEWAY_CERT_MISSING', `The company "${empresaCodigo}" inherits the certificate of its head office "${certificateCompany.empresaCodigo}", which is deactivated.`)
      }
    }
    const whose = certificateCompany === empresa ? `The company "${empresaCodigo}"` : `The head office "${certificateCompany.empresaCodigo}" whose certificate "${empresaCodigo}" inherits`
    const certificate = certificateCompany.certificate
    if (certificate === null || row.pfx_cifrado === null || row.senha_cifrada === null) {
      throw new EngineError('GATEWAY_CERT_MISSING', `${whose} has no certificate; upload one (POST /admin/certificados).`)
    }
    try {
      assertCurrent(certificate, this.now())
    } catch (err) {
      throw new EngineError('GATEWAY_CERT_EXPIRED', `${whose}: ${(err as Error).message}`)
    }
    if (empresa.cnpj === null || cnpjRoot(empresa.cnpj) !== cnpjRoot(certificate.cnpj)) {
      throw new EngineError('GATEWAY_CERT_CNPJ_MISMATCH', `The certificate's CNPJ root ${cnpjRoot(certificate.cnpj)} is not the root of the company "${empresaCodigo}".`)
    }
    if (row.chave_id !== this.masterKey.id) {
      throw new EngineError('GATEWAY_STORE_KEY_MISMATCH', 'The stored certificate was encrypted under another master key: GATEWAY_MASTER_KEY (or the key file in the data folder) changed. Restore the key, or upload the certificate again.')
    }
    return {
      empresa,
      certificateCompany,
      pfx: openSealed(this.masterKey, row.pfx_cifrado, aad(certificateCompany.id, 'pfx')),
      password: openSealed(this.masterKey, row.senha_cifrada, aad(certificateCompany.id, 'senha')).toString('utf8'),
      fingerprint: certificate.fingerprint,
      validUntil: certificate.validUntil
    }
  }
}

/**
 * `razao gateway rekey`: every stored certificate and password opened with `oldKey` and
 * sealed again with `newKey`, in one transaction that holds the table against uploads
 * and removals meanwhile. When any value does not open with the old key, nothing is
 * changed and GATEWAY_STORE_KEY_MISMATCH names the companies concerned. Returns how many
 * certificates were re-sealed.
 */
export async function rekeyCertificates (pool: Pool, oldKey: MasterKey, newKey: MasterKey): Promise<number> {
  if (oldKey.id === newKey.id) throw new EngineError('REQUEST_INVALID', 'The new master key is the old one; nothing to do.')
  return await inTransaction(pool, async (client) => {
    await client.query('LOCK TABLE certificados IN EXCLUSIVE MODE')
    const { rows } = await client.query<{ empresa_id: string, empresa_codigo: string, pfx_cifrado: Buffer, senha_cifrada: Buffer }>(
      `SELECT c.empresa_id, e.empresa_codigo, c.pfx_cifrado, c.senha_cifrada
       FROM certificados c JOIN empresas e ON e.id = c.empresa_id ORDER BY e.empresa_codigo`)
    const resealed: Array<{ empresaId: string, pfx: Buffer, senha: Buffer }> = []
    const refused: string[] = []
    for (const row of rows) {
      try {
        const pfx = openSealed(oldKey, row.pfx_cifrado, aad(row.empresa_id, 'pfx'))
        const senha = openSealed(oldKey, row.senha_cifrada, aad(row.empresa_id, 'senha'))
        resealed.push({ empresaId: row.empresa_id, pfx: sealValue(newKey, pfx, aad(row.empresa_id, 'pfx')), senha: sealValue(newKey, senha, aad(row.empresa_id, 'senha')) })
        pfx.fill(0)
        senha.fill(0)
      } catch {
        refused.push(row.empresa_codigo)
      }
    }
    if (refused.length > 0) {
      throw new EngineError('GATEWAY_STORE_KEY_MISMATCH', `${refused.length} of ${rows.length} stored certificate(s) do not open with the old master key (empresa_codigo ${refused.join(', ')}); nothing was changed. Check the old key, or remove those certificates and upload them again.`)
    }
    for (const r of resealed) {
      await client.query('UPDATE certificados SET pfx_cifrado = $2, senha_cifrada = $3, chave_id = $4 WHERE empresa_id = $1', [r.empresaId, r.pfx, r.senha, newKey.id])
    }
    // The webhook endpoints' secrets are sealed with the same key (migration 0009).
    await resealWebhookSecrets(client, oldKey, newKey)
    return rows.length
  })
}
