/**
 * What every call to the authority checks of the company's certificate before it goes out
 * (the queries, the managed feed, fetching a key, the manifestação), and the one cache of
 * mutual-TLS agents the app's routes and its scheduler share.
 */
import { readFile } from 'node:fs/promises'
import { GatewayError, TlsAgentCache, certificateIncompatible } from '../../core/gateway/index.js'
import { openPkcs12Isolated } from '../../workers/pkcs12-isolate.js'
import type { QueryRouteConfig, ResolvedCertificate } from './query-types.js'

/** The TLS agents, opening certificates in a thread of their own, trusting GATEWAY_CA_FILE as well when set. */
export async function createAgentCache (config: Pick<QueryRouteConfig, 'caFile'>): Promise<TlsAgentCache> {
  return new TlsAgentCache({ openPkcs12: openPkcs12Isolated, ...(config.caFile === undefined ? {} : { extraCaPem: await readCaFile(config.caFile) }) })
}

async function readCaFile (path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (e) {
    throw new Error(`GATEWAY_CA_FILE cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'}): ${path}`)
  }
}

/**
 * The company's certificate, if it may be used for `cnpj`: the company active, the certificate
 * not expired, and of the CNPJ's root. Both services authorise by the 8-character root (NT
 * 2014.002 and the ADN's rules; the store checked on upload that it is its owner's root):
 * another root would be refused (cStat 593, 631) and count against the company.
 * `subject` names `cnpj` in the refusal (the field the caller sent, or what it is).
 */
export async function usableCertificate (resolve: (empresaCodigo: string) => Promise<ResolvedCertificate>, empresaCodigo: string, cnpj: string, subject = `The CNPJ ${cnpj}`): Promise<ResolvedCertificate> {
  const cert = await resolve(empresaCodigo)
  if (!cert.empresa.ativo) throw new GatewayError(404, 'GATEWAY_COMPANY_NOT_FOUND', `The company "${empresaCodigo}" is inactive.`)
  if (cert.validUntil.getTime() <= Date.now()) throw certificateIncompatible(`it expired on ${cert.validUntil.toISOString().slice(0, 10)}.`)
  const root = (cert.certificateCompany?.cnpj ?? cert.empresa.cnpj)?.slice(0, 8)
  if (root !== undefined && root !== cnpj.slice(0, 8)) {
    throw new GatewayError(422, 'GATEWAY_CERTIFICATE_INCOMPATIBLE', `${subject} does not share the CNPJ root (${root}) of company "${empresaCodigo}"'s certificate, so it cannot be used for it.`)
  }
  return cert
}

/** The agent is cached by the certificate's owner: a branch that inherits uses its head office's. */
export function certificateOwner (cert: ResolvedCertificate): string {
  return cert.certificateCompany?.empresaCodigo ?? cert.empresa.empresaCodigo
}
