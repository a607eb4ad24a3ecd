/** The tax-document gateway's core: company registry view, encrypted certificate store, API key hash. */
export { CertificateStore } from './store.js'
export type { ResolvedCertificate, ResolveCertificate, CertificateStoreOptions } from './store.js'
export {
  listGatewayCompanies, findGatewayCompany, getGatewayCompany, createGatewayCompany, updateGatewayCompany, deactivateGatewayCompany
} from './companies.js'
export type { GatewayCompany, NewGatewayCompany, CompanyChanges, CertificateSummary } from './companies.js'
export { inspectCertificate, daysToExpiry } from './certificate.js'
export type { CertificateFacts } from './certificate.js'
export { loadMasterKey, parseMasterKey, masterKeyId, MASTER_KEY_FILE } from './master-key.js'
export type { MasterKey, MasterKeySource } from './master-key.js'
export { apiKeyMatchesHash, ensureApiKey, hashApiKey, readApiKeyHash, rotateApiKey } from './api-key.js'
export type { InitialApiKey } from './api-key.js'
