/**
 * The page sizes of GET /v1/documents and `razao documents list` (server/gateway/document-wire.ts
 * checks them). A module of its own so the command's help can say them without loading the gateway.
 */
export const DEFAULT_PAGE = 50
export const MAX_PAGE = 500
