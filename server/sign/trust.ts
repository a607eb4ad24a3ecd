/**
 * The verification trust store as the service and the CLI load it: the folder SIGN_TRUST_DIR
 * names, or the ICP-Brasil roots shipped with razao. Read once at start; a folder that cannot
 * be read, or that holds a file that is not a root certificate, stops the start naming it.
 */
import { createHash } from 'node:crypto'
import { ConfigError } from '../config.js'
import { TrustStoreError, loadTrustStore, shippedAnchorsDir } from '../../core/sign/verify/index.js'

export interface LoadedTrustStore {
  anchors: Array<{ der: Uint8Array, source: string }>
  trustStore: string
}

export function loadVerifyTrustStore (trustDir: string | undefined): LoadedTrustStore {
  try {
    const dir = trustDir ?? shippedAnchorsDir()
    const anchors = loadTrustStore(dir).map((a) => ({ der: new Uint8Array(a.cert.raw), source: a.source }))
    if (anchors.length === 0) throw new TrustStoreError(`The trust store folder ${dir} holds no certificate (.pem, .crt, .cer or .der).`)
    return { anchors, trustStore: trustDir === undefined ? 'ICP-Brasil root certificates shipped with razao (v5, v10, v11, v12)' : `the folder ${trustDir} (SIGN_TRUST_DIR)` }
  } catch (err) {
    if (err instanceof TrustStoreError) throw new ConfigError('SIGN_TRUST_DIR', err.message)
    throw err
  }
}

/** SHA-256 fingerprints of the anchors, upper-case hex: what the shipped-roots test pins. */
export function anchorFingerprints (store: LoadedTrustStore): string[] {
  return store.anchors.map((a) => createHash('sha256').update(a.der).digest('hex').toUpperCase())
}
