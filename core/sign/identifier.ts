/**
 * The document identifier printed on the stamp and the final page. Random, not derived
 * from the request id (spec 2 wants them different) nor from the content (the same
 * file signed twice is two documents). 80 random bits in Crockford base32, grouped for
 * reading aloud: `RZ-7K3M-9XQ2-4HFA-P8DN`. No I, L, O or U, so nothing is misread.
 */
import { randomBytes } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

export function newDocumentIdentifier (): string {
  const bytes = randomBytes(10)
  let bits = 0n
  for (const b of bytes) bits = (bits << 8n) | BigInt(b)
  let out = ''
  for (let i = 0; i < 16; i++) {
    out = ALPHABET[Number(bits & 31n)]! + out
    bits >>= 5n
  }
  return `RZ-${out.slice(0, 4)}-${out.slice(4, 8)}-${out.slice(8, 12)}-${out.slice(12)}`
}

export const DOCUMENT_IDENTIFIER_PATTERN = /^RZ-[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/
