/**
 * The iteration counts of a PKCS#12 file, checked before any key is derived from its
 * password. The file names them itself (the MAC's, and each password-based encryption's:
 * PKCS#12 PBE, PKCS#5 PBES1, PBES2 with PBKDF2), and node-forge runs them as given: a
 * count of 10,000,000 held a thread 13 s, 2³¹−1 most of an hour. Real A1 files use a
 * few thousand (OpenSSL 2,048, Windows 2,000, Java 10,000) and at most a few hundred
 * thousand, so a count above MAX_PKCS12_ITERATIONS, or counts above
 * MAX_PKCS12_TOTAL_ITERATIONS together, is refused as an unreadable certificate.
 *
 * A key bag inside an encrypted SafeContents shows its count only once that content is
 * decrypted; it is decrypted here, with a count already checked, and inspected too (the
 * derivation is then done twice, which the total cap accounts for).
 */
import forge from 'node-forge'
import { SignError } from './errors.js'

export const MAX_PKCS12_ITERATIONS = 1_000_000
export const MAX_PKCS12_TOTAL_ITERATIONS = 2_000_000

type Node = forge.asn1.Asn1
const { Class, Type } = forge.asn1

const OID_DATA = '1.2.840.113549.1.7.1'
const OID_ENCRYPTED_DATA = '1.2.840.113549.1.7.6'
const OID_SHROUDED_KEY_BAG = '1.2.840.113549.1.12.10.1.2'
const OID_PBES2 = '1.2.840.113549.1.5.13'

const children = (node: Node | undefined): Node[] => (node !== undefined && Array.isArray(node.value) ? node.value : [])
const isUniversal = (node: Node | undefined, type: number): boolean => node?.tagClass === Class.UNIVERSAL && node.type === type
const oidOf = (node: Node | undefined): string | undefined => isUniversal(node, Type.OID) && typeof node!.value === 'string' ? forge.asn1.derToOid(node!.value) : undefined

/** An INTEGER's value, read unsigned; Infinity past 2⁴⁸ (no count is near that). */
function integer (node: Node): number {
  const bytes = typeof node.value === 'string' ? node.value : ''
  if (bytes.length > 6) return Number.POSITIVE_INFINITY
  let n = 0
  for (let i = 0; i < bytes.length; i++) n = n * 256 + bytes.charCodeAt(i)
  return n
}

/** The bytes of an OCTET STRING, primitive or made of chunks (BER). */
function octets (node: Node | undefined): string | undefined {
  if (!isUniversal(node, Type.OCTETSTRING)) return undefined
  return typeof node!.value === 'string' ? node!.value : children(node).map((c) => (typeof c.value === 'string' ? c.value : '')).join('')
}

/** The iteration count a password-based AlgorithmIdentifier asks for, or undefined when it names none. */
function algorithmIterations (algorithm: Node | undefined): number | undefined {
  const [oid, params] = children(algorithm)
  if (oidOf(oid) === OID_PBES2) return algorithmIterations(children(params)[0])
  const count = children(params)[1]
  return count !== undefined && isUniversal(count, Type.INTEGER) ? integer(count) : undefined
}

class Budget {
  private total = 0
  spend (count: number | undefined, what: string): void {
    if (count === undefined) return
    if (count > MAX_PKCS12_ITERATIONS) {
      throw new SignError('SIGN_CERT_INVALID', `The certificate file asks for ${Number.isFinite(count) ? count.toLocaleString('en') : 'an immense number of'} key-derivation iterations for its ${what}; certificates use a few thousand, and files asking for more than ${MAX_PKCS12_ITERATIONS.toLocaleString('en')} are not opened.`)
    }
    this.total += count
    if (this.total > MAX_PKCS12_TOTAL_ITERATIONS) {
      throw new SignError('SIGN_CERT_INVALID', `The certificate file asks for more than ${MAX_PKCS12_TOTAL_ITERATIONS.toLocaleString('en')} key-derivation iterations in all; it is not opened.`)
    }
  }
}

/** Checks the shrouded key bags of one SafeContents (DER). */
function checkSafeContents (der: string, budget: Budget): void {
  for (const bag of children(forge.asn1.fromDer(der, false))) {
    const [bagId, value] = children(bag)
    if (oidOf(bagId) === OID_SHROUDED_KEY_BAG) budget.spend(algorithmIterations(children(children(value)[0])[0]), 'private key')
  }
}

/** The plaintext of an EncryptedData's content, or undefined when it does not decrypt. */
function decrypt (algorithm: Node, encrypted: Node | undefined, password: string): string | undefined {
  try {
    const cipher = (forge.pki as unknown as { pbe: { getCipher: (oid: string, params: Node, password: string) => forge.cipher.BlockCipher } })
      .pbe.getCipher(oidOf(children(algorithm)[0]) ?? '', children(algorithm)[1]!, password)
    const bytes = typeof encrypted?.value === 'string' ? encrypted.value : children(encrypted).map((c) => (typeof c.value === 'string' ? c.value : '')).join('')
    cipher.update(forge.util.createBuffer(bytes))
    return cipher.finish() ? cipher.output.getBytes() : undefined
  } catch {
    return undefined
  }
}

/**
 * Throws SIGN_CERT_INVALID when the PFX (already read as ASN.1) asks for more iterations
 * than the caps. A structure it does not recognise is left to forge, which refuses it
 * without deriving anything it was not shown here. Without a password only the counts
 * shown in clear are checked: nothing is derived, so a thread that must not be held (the
 * gateway's main one) can refuse a crafted file at once.
 */
export function assertPkcs12Iterations (pfx: Node, password?: string): void {
  const budget = new Budget()
  const [, authSafe, macData] = children(pfx)
  if (macData !== undefined) {
    // MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 }
    const count = children(macData)[2]
    budget.spend(count === undefined ? 1 : integer(count), 'integrity check (MAC)')
  }
  const [, content] = children(authSafe)
  const safe = octets(children(content)[0])
  if (safe === undefined) return
  const encrypted: Array<{ algorithm: Node, data: Node | undefined }> = []
  for (const info of children(forge.asn1.fromDer(safe, false))) {
    const [type, wrapped] = children(info)
    const inner = children(wrapped)[0]
    if (oidOf(type) === OID_DATA) {
      const der = octets(inner)
      if (der !== undefined) checkSafeContents(der, budget)
    } else if (oidOf(type) === OID_ENCRYPTED_DATA) {
      // EncryptedData ::= SEQUENCE { version, EncryptedContentInfo ::= SEQUENCE { contentType, algorithm, [0] content } }
      const [, algorithm, data] = children(children(inner)[1])
      if (algorithm === undefined) continue
      budget.spend(algorithmIterations(algorithm), 'certificates')
      encrypted.push({ algorithm, data })
    }
  }
  if (password === undefined) return
  // Only once every count shown in clear has passed: decrypting costs a derivation each.
  for (const { algorithm, data } of encrypted) {
    const plain = decrypt(algorithm, data, password)
    if (plain === undefined) continue
    try {
      checkSafeContents(plain, budget)
    } catch (err) {
      if (err instanceof SignError) throw err
      // Not a SafeContents: the password is wrong, and forge's MAC check will say so.
    }
  }
}

/** The counts shown in clear, checked on the raw file: an unparsable file is left to the opener. */
export function assertClearPkcs12Iterations (file: Uint8Array): void {
  let pfx: Node
  try {
    pfx = forge.asn1.fromDer(Buffer.from(file).toString('binary'))
  } catch {
    return
  }
  assertPkcs12Iterations(pfx)
}
