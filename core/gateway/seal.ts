/**
 * Authenticated encryption of the stored secrets: AES-256-GCM (NIST SP 800-38D) with a
 * fresh random 96-bit IV for every value and the full 128-bit tag. The additional data
 * names what the value is and whose it is (`certificados/<empresa id>/pfx`), so a sealed
 * value moved to another company or column fails to open instead of being used there.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { EngineError } from '../errors.js'
import type { MasterKey } from './master-key.js'

const VERSION = 1
const IV_BYTES = 12
const TAG_BYTES = 16
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES

/** version (1) || IV (12) || tag (16) || ciphertext */
export function sealValue (master: MasterKey, plaintext: Uint8Array, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', master.key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(aad, 'utf8'))
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body])
}

/** Opens a sealed value; any mismatch (key, AAD, altered bytes) is GATEWAY_STORE_KEY_MISMATCH, never garbage. */
export function openSealed (master: MasterKey, sealed: Uint8Array, aad: string): Buffer {
  const buf = Buffer.from(sealed)
  if (buf.length < HEADER_BYTES || buf[0] !== VERSION) {
    throw new EngineError('GATEWAY_STORE_KEY_MISMATCH', 'A stored secret has an unknown layout; upload the certificate again.')
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', master.key, buf.subarray(1, 1 + IV_BYTES), { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(aad, 'utf8'))
    decipher.setAuthTag(buf.subarray(1 + IV_BYTES, HEADER_BYTES))
    return Buffer.concat([decipher.update(buf.subarray(HEADER_BYTES)), decipher.final()])
  } catch (err) {
    throw new EngineError('GATEWAY_STORE_KEY_MISMATCH', 'A stored certificate could not be decrypted: its sealed bytes were altered or belong to another company.', undefined, { cause: err })
  }
}
