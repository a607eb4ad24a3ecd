/**
 * The tax-document gateway's core: company registry view, encrypted certificate store, API
 * key hash; NF-e and NFS-e distribution clients, TLS agents, the query guard, its errors.
 */
export { CertificateStore, rekeyCertificates } from './store.js'
export type { ResolvedCertificate, ResolveCertificate, CertificateStoreOptions } from './store.js'
export { ResolvedCertificateCache, DEFAULT_CACHE_MS } from './resolve-cache.js'
export {
  listGatewayCompanies, findGatewayCompany, getGatewayCompany, createGatewayCompany, updateGatewayCompany, deactivateGatewayCompany
} from './companies.js'
export type { GatewayCompany, NewGatewayCompany, CompanyChanges, CertificateSummary } from './companies.js'
export { inspectCertificate, daysToExpiry } from './certificate.js'
export type { CertificateFacts } from './certificate.js'
export { loadMasterKey, parseMasterKey, masterKeyId, MASTER_KEY_FILE } from './master-key.js'
export type { MasterKey, MasterKeySource } from './master-key.js'
export { ApiKeyHashCache, apiKeyMatchesHash, ensureApiKey, hashApiKey, readApiKeyHash, rotateApiKey } from './api-key.js'
export type { InitialApiKey } from './api-key.js'
export { GatewayCode, GatewayError, isGatewayError, companyNotFound, certificateIncompatible } from './errors.js'
export type { GatewayErrorOptions } from './errors.js'
export { TlsAgentCache, splitPem } from './tls-agents.js'
export type { ClientCertificate, TlsAgentCacheOptions } from './tls-agents.js'
export {
  NFE_DIST_URLS, NFE_DIST_ACTION, NFE_DIST_CONTENT_TYPE, buildDistNsuEnvelope, queryNfeDistribution, assertAnswered
} from './nfe-distribution.js'
export type { DistNsuRequest, DistRequest, NfeDistributionCall } from './nfe-distribution.js'
export { NFE_NS, NFE_WSDL_NS, SOAP12_NS, MAX_DOCUMENTS, DistAnswerReader, parseDistAnswer } from './dist-answer.js'
export type { DistAnswer, NfeDocument, RetDistDFeInt, SoapFault } from './dist-answer.js'
export { AnswerRefused } from './answer-encoding.js'
export { DEFAULT_MAX_BYTES, READ_SLICE_BYTES, readInSlices } from './https-call.js'
export type { AnswerReader, GatewayLog } from './https-call.js'
export { ADN_BASE_URLS, adnDistributionUrl, queryAdnDistribution } from './adn-distribution.js'
export type { AdnAnswer, AdnDocument, AdnDistributionCall } from './adn-distribution.js'
export { QueryGuard, DEFAULT_COOLDOWN_MS, nfeCooldownReason } from './query-guard.js'
export type { GuardedAnswer, GuardedRoute, QueryGuardOptions, RunOptions } from './query-guard.js'
export { DOCUMENT_REFUSALS, DocumentRefused, openNfeDocument, openNfseDocument, inflateDocument } from './doc-zip.js'
export type { DocumentFacts, DocumentKind, DocumentRefusal, OpenedDocument } from './doc-zip.js'
export { DOCUMENT_KINDS, DOCUMENT_STATUSES, getDocument, listDocuments, storeDocuments, storeDocumentsIn } from './documents.js'
export type { DocumentFilter, ReceivedDocument, StoredDocument, StoreOutcome } from './documents.js'
export { FEED_SERVICES, listFeedStates, setFeedOptions } from './feed-state.js'
export type { FeedOptions, FeedService, FeedState } from './feed-state.js'
export { FeedScheduler, GAP_ATTEMPTS, openAdn, openNfe } from './feed.js'
export type { FeedChange, FeedCompany, FeedSchedulerOptions } from './feed.js'
export { POINT_LOOKUPS_PER_HOUR, takePointLookup } from './point-lookups.js'
export type { LookupReason, LookupTaken } from './point-lookups.js'
