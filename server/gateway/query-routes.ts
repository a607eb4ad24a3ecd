/**
 * Placeholder: replaced by branch gw-query, which owns this file (the NF-e and NFS-e
 * query routes). It registers nothing, so that this branch compiles on its own.
 */
import type { FastifyInstance } from 'fastify'
import type { QueryRouteDeps } from './config.js'

export async function registerQueryRoutes (_app: FastifyInstance, _deps: QueryRouteDeps): Promise<void> {
  // replaced by branch gw-query
}
