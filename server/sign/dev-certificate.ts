/**
 * The embedded default: with no SIGN_CERT_PATH outside production, a development chain
 * (root, intermediate, e-CNPJ signer in the ICP-Brasil shape) is created once in
 * `<dataDir>/sign-dev/` and reused; it is recreated when its signer certificate is
 * within a week of expiring. Every name in it says TESTE / NAO CONFIAVEL and the health
 * report says it is in use.
 */
import { X509Certificate } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createDevChain } from '../../core/sign/index.js'

export interface DevCertificate {
  path: string
  password: string
  dir: string
  created: boolean
}

const WEEK_MS = 7 * 86_400_000

const README = `DEVELOPMENT SIGNING CERTIFICATE - NOT VALID FOR ANY REAL SIGNATURE

Created by razao's signature service because SIGN_CERT_PATH is not set.
root.pem          AC RAIZ RAZAO DESENVOLVIMENTO - NAO CONFIAVEL (self-signed test root)
intermediate.pem  AC RAZAO DESENVOLVIMENTO v1 - TESTE
signer.pem        e-CNPJ style end-entity certificate (fake CNPJ 11.222.333/0001-81)
signer.p12        the signer key and chain (password in signer.password)

Signatures made with it verify only against root.pem. Set SIGN_CERT_PATH and
SIGN_CERT_PASSWORD to an ICP-Brasil A1 certificate for real signatures.
`

async function reusable (dir: string): Promise<string | undefined> {
  try {
    const password = (await readFile(join(dir, 'signer.password'), 'utf8')).trim()
    const cert = new X509Certificate(await readFile(join(dir, 'signer.pem')))
    await readFile(join(dir, 'signer.p12'))
    return Date.parse(cert.validTo) - Date.now() > WEEK_MS ? password : undefined
  } catch {
    return undefined
  }
}

export async function ensureDevCertificate (dataDir: string): Promise<DevCertificate> {
  const dir = join(dataDir, 'sign-dev')
  const path = join(dir, 'signer.p12')
  const existing = await reusable(dir)
  if (existing !== undefined) return { path, password: existing, dir, created: false }
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const chain = createDevChain()
  await writeFile(join(dir, 'README.txt'), README)
  await writeFile(join(dir, 'root.pem'), chain.root.certPem)
  await writeFile(join(dir, 'intermediate.pem'), chain.intermediate.certPem)
  await writeFile(join(dir, 'signer.password'), `${chain.password}\n`, { mode: 0o600 })
  // The p12 is written aside and renamed last, so a reader never sees a half-written file.
  await writeFile(`${path}.tmp`, chain.pkcs12, { mode: 0o600 })
  await rename(`${path}.tmp`, path)
  await writeFile(join(dir, 'signer.pem'), chain.signer.certPem)
  return { path, password: chain.password, dir, created: true }
}
