/** PAdES signing with an ICP-Brasil A1 certificate: the public surface of core/sign. */
export { signPdf, VISUAL_MODES } from './sign-pdf.js'
export type { SignPdfOptions, SignedPdf, VisualMode } from './sign-pdf.js'
export { loadPkcs12, materialFrom, assertValidAt, assertSigningKeyUsage, readPemCertificates } from './certificate.js'
export { readKeyUsage } from './extensions.js'
export type { KeyUsage } from './extensions.js'
export type { SigningMaterial, OpenPkcs12 } from './certificate.js'
export { MAX_PKCS12_ITERATIONS, MAX_PKCS12_TOTAL_ITERATIONS, assertClearPkcs12Iterations } from './pkcs12-limits.js'
export type { SignerIdentity } from './icp-brasil.js'
/** The ICP-Brasil subjectAltName otherNames (DOC-ICP-04), for readers of a certificate's CNPJ (the gateway). */
export { readOtherNames, OID_ICP_CNPJ } from './icp-brasil.js'
export type { SignaturePolicy } from './cms.js'
export { SignCode, SignError, isSignError } from './errors.js'
export { createDevChain, issueCertificate, toPkcs12 } from './dev-chain.js'
export type { DevChain, DevChainOptions, IssueOptions, IssuedCertificate, KeyUsageName } from './dev-chain.js'
/** The small DER reader and writer, for tools that cut CMS structures out of a signed file. */
export * as der from './der.js'
export { isoWithOffset, isValidTimeZone } from './time.js'
export { newDocumentIdentifier, DOCUMENT_IDENTIFIER_PATTERN } from './identifier.js'
