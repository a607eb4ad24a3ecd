/**
 * Certificate extensions read from the DER (RFC 5280 §4.2): node:crypto's X509Certificate
 * shows the extended key usage but not the keyUsage bits, which decide whether a key may
 * sign documents at all.
 */
import { child, children, decodeOid, readNode } from './der.js'

export const OID_KEY_USAGE = '2.5.29.15'
export const OID_SUBJECT_ALT_NAME = '2.5.29.17'
export const OID_CERTIFICATE_POLICIES = '2.5.29.32'

/** RFC 5280 §4.2.1.3, in bit order: bit 0 is digitalSignature, bit 1 nonRepudiation (contentCommitment). */
export const KEY_USAGE_BITS = ['digitalSignature', 'nonRepudiation', 'keyEncipherment', 'dataEncipherment', 'keyAgreement', 'keyCertSign', 'cRLSign', 'encipherOnly', 'decipherOnly'] as const
export type KeyUsage = typeof KEY_USAGE_BITS[number]

/** The extnValue octets of extension `oid` in a DER certificate, or undefined when it has none. */
export function extensionValue (certDer: Buffer, oid: string): Buffer | undefined {
  const tbs = child(readNode(certDer), 0)
  const extensions = children(tbs).find((n) => n.tag === 0xa3)
  if (extensions === undefined) return undefined
  for (const ext of children(child(extensions, 0))) {
    // Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }
    const parts = children(ext)
    if (parts[0] !== undefined && decodeOid(parts[0].content) === oid) return parts[parts.length - 1]!.content
  }
  return undefined
}

/**
 * The keyUsage bits set in a DER certificate, or undefined when it has no keyUsage
 * extension (RFC 5280 then puts no limit on the key's use).
 */
export function readKeyUsage (certDer: Buffer): KeyUsage[] | undefined {
  const value = extensionValue(certDer, OID_KEY_USAGE)
  if (value === undefined) return undefined
  // KeyUsage ::= BIT STRING: the first content octet counts the unused bits, then bit 0 is the high bit.
  const bits = readNode(value).content.subarray(1)
  return KEY_USAGE_BITS.filter((_name, i) => ((bits[i >> 3] ?? 0) & (0x80 >> (i & 7))) !== 0)
}

/**
 * The policy identifiers of a DER certificate's certificatePolicies extension (RFC 5280
 * §4.2.1.4: a SEQUENCE of PolicyInformation, each starting with its OID); empty without one.
 */
export function readCertificatePolicies (certDer: Buffer): string[] {
  const value = extensionValue(certDer, OID_CERTIFICATE_POLICIES)
  if (value === undefined) return []
  return children(readNode(value)).map((info) => decodeOid(child(info, 0).content))
}
