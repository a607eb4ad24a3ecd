/** Verification of signed PDFs: the public surface of core/sign/verify. */
export { verifyPdf } from './verify-pdf.js'
export type { VerificationReport, SignatureReport, SignerReport, Verdict, PadesLevel, VerifyOptions } from './verify-pdf.js'
export { loadTrustStore, certificatesIn, shippedAnchorsDir, TrustStoreError } from './trust-store.js'
export type { TrustAnchor, CertificateFacts } from './chain.js'
export type { ChangesAfter, ModificationLevel } from './changes.js'
export { ICP_BRASIL_PADES_POLICIES } from './policies.js'
