/**
 * One keep-alive `https.Agent` per client certificate, so that consecutive queries with
 * the same A1 certificate reuse an open TLS connection instead of paying a new mutual-TLS
 * handshake (an RSA signature on our side, a chain check on the authority's) every call.
 *
 * The PKCS#12 is opened once per certificate (node-forge, through core/sign's loader, so
 * the legacy RC2 files OpenSSL 3 refuses still open) into one
 * `SecureContext` (key, leaf and intermediates, trusted roots) that every connection of
 * the agent shares. Giving `pfx`/`passphrase` to the agent instead would decrypt the
 * PKCS#12 again for every new socket, and would make OpenSSL trust every CA certificate
 * the company's file happens to carry for the servers' certificates too. The decrypted
 * key lives on only inside that OpenSSL context, in memory.
 *
 * Trusted roots for the servers: Node's bundled set plus the PEM of `GATEWAY_CA_FILE`
 * (the ICP-Brasil chain the authorities' hosts use, which Node does not ship:
 * docs/gateway-queries.md), nothing else. Verification is never switched off.
 *
 * TLS 1.2 exactly: what the NF-e web services speak and what the mature clients pin
 * (the MOC; the ADN takes 1.2 or newer). Under TLS 1.3 the server checks the
 * client certificate only after our side has finished the handshake, so a refused
 * certificate arrives as a bare connection reset, which cannot be told from a dropped
 * connection; under 1.2 it is a handshake alert the gateway can name (422).
 */
import { X509Certificate, createHash } from 'node:crypto'
import { Agent } from 'node:https'
import { createSecureContext, rootCertificates } from 'node:tls'
import type { KeyObject } from 'node:crypto'
import type { SecureContext } from 'node:tls'
import type { OpenPkcs12 } from '../sign/index.js'
import { openInThread } from './certificate.js'
import { certificateIncompatible } from './errors.js'

/**
 * What an XML signature needs of the certificate (the manifestação's events): its private
 * key, kept in memory beside the TLS context for as long as the agent is, and its DER.
 */
export interface XmlSigner {
  key: KeyObject
  /** The end-entity certificate, DER. */
  certDer: Buffer
}

/** What the agent needs of a resolved certificate. */
export interface ClientCertificate {
  pfx: Buffer
  password: string
  /** SHA-256 of the certificate (the store's fingerprint): the cache key. */
  fingerprint: string
}

export interface TlsAgentCacheOptions {
  /** Extra trusted roots (PEM text, one or many certificates), added to Node's own. */
  extraCaPem?: string
  /**
   * An idle connection is closed after this long. Shorter than the servers' own idle
   * limit, so we never send a query into a socket the server is closing (that would
   * surface as a dropped connection, and a query is never sent twice).
   */
  idleTimeoutMs?: number
  /** Connections one certificate may hold open at once (a head office's branches share it). */
  maxSockets?: number
  /**
   * An agent unused this long is dropped with its decrypted key (the next query opens the
   * PKCS#12 again): the key stays in memory while a company is being queried, not for ever.
   */
  agentIdleMs?: number
  now?: () => number
  /** How the PKCS#12 is opened; the service passes a worker thread's opener. Default: in this thread. */
  openPkcs12?: OpenPkcs12
}

const DEFAULT_IDLE_MS = 15_000
const DEFAULT_AGENT_IDLE_MS = 15 * 60_000

export class TlsAgentCache {
  private readonly agents = new Map<string, { agent: Agent, signer: XmlSigner, lastUsed: number }>()
  /** Contexts being made: concurrent first queries with one certificate open it once. */
  private readonly opening = new Map<string, Promise<{ secureContext: SecureContext, signer: XmlSigner }>>()
  /** Who last used which fingerprint: a company whose certificate changes frees the old agent. */
  private readonly owners = new Map<string, string>()
  private readonly ca: string[]
  private readonly caId: string
  private readonly idleTimeoutMs: number
  private readonly maxSockets: number
  private readonly agentIdleMs: number
  private readonly now: () => number
  private readonly openPkcs12: OpenPkcs12

  constructor (options: TlsAgentCacheOptions = {}) {
    const extra = splitPem(options.extraCaPem ?? '')
    this.ca = [...rootCertificates, ...extra]
    this.caId = createHash('sha256').update(extra.join('\n')).digest('hex').slice(0, 16)
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_MS
    this.maxSockets = options.maxSockets ?? 16
    this.agentIdleMs = options.agentIdleMs ?? DEFAULT_AGENT_IDLE_MS
    this.now = options.now ?? Date.now
    this.openPkcs12 = options.openPkcs12 ?? openInThread
  }

  /**
   * The agent for this certificate, made on first use. `owner` (the company whose
   * certificate it is) lets the cache notice a replaced certificate: the previous
   * fingerprint's agent is closed once no owner uses it any more.
   */
  async agentFor (cert: ClientCertificate, owner?: string): Promise<Agent> {
    return (await this.entryFor(cert, owner)).agent
  }

  /** The agent and the signing key of this certificate, opened once for both. */
  async agentAndSignerFor (cert: ClientCertificate, owner?: string): Promise<{ agent: Agent, signer: XmlSigner }> {
    const { agent, signer } = await this.entryFor(cert, owner)
    return { agent, signer }
  }

  private async entryFor (cert: ClientCertificate, owner?: string): Promise<{ agent: Agent, signer: XmlSigner }> {
    if (owner !== undefined) {
      const previous = this.owners.get(owner)
      this.owners.set(owner, cert.fingerprint)
      if (previous !== undefined && previous !== cert.fingerprint && ![...this.owners.values()].includes(previous)) this.evict(previous)
    }
    const t = this.now()
    for (const [k, entry] of this.agents) {
      if (t - entry.lastUsed > this.agentIdleMs) {
        entry.agent.destroy()
        this.agents.delete(k)
      }
    }
    const key = `${cert.fingerprint}|${this.caId}`
    const existing = this.agents.get(key)
    if (existing !== undefined) {
      existing.lastUsed = t
      return existing
    }
    let opening = this.opening.get(key)
    if (opening === undefined) {
      opening = this.contextFor(cert).finally(() => this.opening.delete(key))
      this.opening.set(key, opening)
    }
    const { secureContext, signer } = await opening
    const raced = this.agents.get(key)
    if (raced !== undefined) return raced
    const agent = new Agent({
      keepAlive: true,
      maxSockets: this.maxSockets,
      maxFreeSockets: this.maxSockets,
      scheduling: 'lifo',
      timeout: this.idleTimeoutMs,
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.2',
      secureContext
    })
    const entry = { agent, signer, lastUsed: t }
    this.agents.set(key, entry)
    return entry
  }

  /** Closes the agents of a certificate (replaced or removed by the store). */
  evict (fingerprint: string): void {
    for (const [key, { agent }] of this.agents) {
      if (key.startsWith(`${fingerprint}|`)) {
        agent.destroy()
        this.agents.delete(key)
      }
    }
    for (const [owner, fp] of this.owners) if (fp === fingerprint) this.owners.delete(owner)
  }

  get size (): number {
    return this.agents.size
  }

  close (): void {
    for (const { agent } of this.agents.values()) agent.destroy()
    this.agents.clear()
    this.owners.clear()
  }

  private async contextFor (cert: ClientCertificate): Promise<{ secureContext: SecureContext, signer: XmlSigner }> {
    let key: string
    let chain: string[]
    let signer: XmlSigner
    try {
      const material = await this.openPkcs12(cert.pfx, cert.password)
      key = material.key.export({ type: 'pkcs8', format: 'pem' }).toString()
      signer = { key: material.key, certDer: Buffer.from(material.chain[0]!) }
      // The leaf and its intermediates travel in the handshake; a root never needs to.
      chain = material.chain.map((der) => new X509Certificate(der)).filter((c, i) => i === 0 || c.issuer !== c.subject).map((c) => c.toString())
    } catch (e) {
      const text = e instanceof Error ? e.message : ''
      throw certificateIncompatible(/wrong password/i.test(text)
        ? 'its password does not open the PKCS#12 file.'
        : 'its PKCS#12 file cannot be read (no private key, or no certificate matching it).')
    }
    return { secureContext: createSecureContext({ key, cert: chain.join('\n'), ca: this.ca, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' }), signer }
  }
}

/** The certificates of a PEM bundle, each with its BEGIN/END lines. */
export function splitPem (pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
}
