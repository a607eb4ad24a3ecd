/**
 * Starts services in this process: one Fastify app per service on its own port, each with
 * its share of the process's file descriptors (a connection cap and a head timeout,
 * server/connections.ts), a worker pool per service that needs threads, and a clean shutdown
 * on SIGINT/SIGTERM (stop accepting, finish or abort in-flight requests, then destroy the pools).
 */
import type { FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import type { Database } from './database.js'
import { loadAgentConfig } from './agent/config.js'
import { loadExtractConfig } from './extract/config.js'
import { loadGatewayConfig } from './gateway/config.js'
import { loadSignConfig } from './sign/config.js'
import { connectionLimits, describeLimits, limitConnections, readOpenFileLimit } from './connections.js'
import { unsupportedLineWarning } from './runtime.js'
import { resolveApiKey } from './secrets.js'
import { createPool } from '../workers/pool.js'
import type { WorkerPool } from '../workers/pool.js'
import type { ServiceName } from './service-names.js'

/** Services that exist (server/service-names.ts); `all` starts each of them. */
export { SERVICES } from './service-names.js'
export type { ServiceName } from './service-names.js'

/** Each service's listening variables (the agent keeps the spec's names). */
const ADDRESS_VARIABLES: Record<ServiceName, { host: string, port: string }> = {
  import: { host: 'IMPORT_HOST', port: 'IMPORT_PORT' },
  sign: { host: 'SIGN_HOST', port: 'SIGN_PORT' },
  extract: { host: 'EXTRACT_HOST', port: 'EXTRACT_PORT' },
  gateway: { host: 'GATEWAY_HOST', port: 'GATEWAY_PORT' },
  agent: { host: 'HOST', port: 'PORT' }
}

/** A service could not listen: which one, on what, and the variable that moves it. The services started before it are stopped. */
export class ServiceStartError extends Error {
  constructor (readonly service: ServiceName, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'ServiceStartError'
  }
}

function listenError (name: ServiceName, host: string, port: number, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code
  const { host: hostVariable, port: portVariable } = ADDRESS_VARIABLES[name]
  const where = `${host}:${port}`
  if (code === 'EADDRINUSE') return new ServiceStartError(name, `the ${name} service could not start: port ${port} on ${host} is already in use (another razao, or another program, listens there). Stop it, or set ${portVariable} to a free port (0 picks one).`, { cause: err })
  if (code === 'EACCES') return new ServiceStartError(name, `the ${name} service could not start: this user may not listen on ${where} (ports below 1024 need privileges). Set ${portVariable} to a port from 1024 up.`, { cause: err })
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ServiceStartError(name, `the ${name} service could not start: ${host} is not an address of this machine (${code}). Set ${hostVariable} to one of its addresses (127.0.0.1, or 0.0.0.0 for every interface).`, { cause: err })
  return err
}

/** The services that run work in a pool of threads of their own. */
const POOLED: readonly ServiceName[] = ['import', 'sign', 'extract']

export interface RunningServices {
  apps: Array<{ name: ServiceName, app: FastifyInstance, url: string }>
  /**
   * One pool per service that runs work in threads (import, sign, extract), each of
   * RAZAO_POOL_SIZE threads: under `serve all`, slow PDFs queued for extraction cannot take
   * the threads a signature needs. The agent gets none: it needs no threads, and a lean
   * process forks its packages faster.
   */
  pools: ReadonlyMap<ServiceName, WorkerPool>
  database: Database | undefined
  close: () => Promise<void>
}

/**
 * `env` is read here for the services whose variables live beside their code
 * (SIGN_*: server/sign/config.ts, GATEWAY_*: server/gateway/config.ts); it is validated before anything starts, so a
 * bad value stops the process (ConfigError) with nothing half running.
 */
export async function startServices (names: readonly ServiceName[], config: Config, log: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<RunningServices> {
  const signConfig = names.includes('sign') ? loadSignConfig(env, config.shared) : undefined
  const extractConfig = names.includes('extract') ? loadExtractConfig(env) : undefined
  const gatewayConfig = names.includes('gateway') ? loadGatewayConfig(env, config.shared) : undefined
  const agentConfig = names.includes('agent') ? loadAgentConfig(env) : undefined
  const threads = config.shared.poolSize * names.filter((name) => POOLED.includes(name)).length
  const limits = connectionLimits({ services: names.length, threads }, config.shared, readOpenFileLimit())
  const untested = unsupportedLineWarning()
  if (untested !== undefined) log(`Warning: ${untested}`)
  log(describeLimits(limits))
  // The agent and the gateway get no pool: each agent job forks the process, and fork copies
  // the page tables of everything mapped, worker threads' heaps included (bench/agent.bench.ts).
  // Idle threads end after a minute, so the pools of quiet services cost one thread each.
  const pools = new Map<ServiceName, WorkerPool>()
  const poolOf = (name: ServiceName): WorkerPool => {
    let pool = pools.get(name)
    if (pool === undefined) {
      // EXTRACT_WARM: the extraction threads are warmed once and kept.
      pool = createPool({ maxThreads: config.shared.poolSize, keepThreads: name === 'extract' && extractConfig?.warm === true })
      pools.set(name, pool)
    }
    return pool
  }
  const apps: RunningServices['apps'] = []
  const listen = async (name: ServiceName, app: FastifyInstance, host: string, port: number): Promise<void> => {
    limitConnections(app, limits)
    let url: string
    try {
      url = await app.listen({ host, port })
    } catch (err) {
      await app.close().catch(() => undefined)
      throw listenError(name, host, port, err)
    }
    apps.push({ name, app, url })
  }
  let database: Database | undefined
  // The import service and the gateway share one database (one registry of companies).
  const openDatabase = async (): Promise<Database> => {
    const { openDatabase: open } = await import('./database.js')
    return await open(config.shared, { role: 'server', log })
  }
  const close = async (): Promise<void> => {
    await Promise.allSettled(apps.map(({ app }) => app.close()))
    await Promise.allSettled([...pools.values()].map(async (pool) => { await pool.destroy() }))
    await database?.close()
  }
  const apiKey = async (name: ServiceName, configured: string | undefined, variable: string, header = 'X-API-Key'): Promise<string> => {
    const key = await resolveApiKey(configured, config.shared.dataDir, name)
    if (key.generated) {
      // Printed once, on the terminal, never through the logger.
      log(`Generated a development API key for the ${name} service (kept in ${key.file}):\n  ${key.key}\nSend it in the ${header} header. Set ${variable} to use your own.`)
    }
    return key.key
  }
  try {
    for (const name of names) {
      // Each service's app (and the database) is loaded only when that service starts: the
      // extraction service alone then carries none of the import and sign services' modules.
      if (name === 'import') {
        const { buildImportApp } = await import('./import/app.js')
        database ??= await openDatabase()
        const app = await buildImportApp({ shared: config.shared, config: config.import, apiKey: await apiKey(name, config.import.apiKey, 'IMPORT_API_KEY'), pool: poolOf(name), database })
        await listen(name, app, config.import.host, config.import.port)
      } else if (name === 'gateway') {
        const gateway = gatewayConfig!
        const { startGatewayApp } = await import('./gateway/start.js')
        database ??= await openDatabase()
        const app = await startGatewayApp(config.shared, gateway, database, log)
        await listen(name, app, gateway.host, gateway.port)
      } else if (name === 'extract') {
        const extract = extractConfig!
        const { buildExtractApp } = await import('./extract/app.js')
        const app = await buildExtractApp({ shared: config.shared, config: extract, apiKey: await apiKey(name, extract.apiKey, 'EXTRACT_API_KEY'), pool: poolOf(name) })
        await listen(name, app, extract.host, extract.port)
      } else if (name === 'agent') {
        const agent = agentConfig!
        if (agent.refuseAll) log('Warning: AGENT_API_KEY is set but empty: every /api/v1 route of the agent refuses every caller. Set a key (16 characters or more) or unset the variable for a generated development key.')
        const key = agent.refuseAll ? undefined : await apiKey(name, agent.apiKey, 'AGENT_API_KEY', 'X-AGENT-API-KEY')
        const { buildAgentApp } = await import('./agent/app.js')
        const app = await buildAgentApp({ shared: config.shared, config: agent, apiKey: key })
        await listen(name, app, agent.host, agent.port)
      } else {
        const sign = signConfig!
        const { buildSignApp } = await import('./sign/app.js')
        const app = await buildSignApp({ shared: config.shared, config: sign, apiKey: await apiKey(name, sign.apiKey, 'SIGN_API_KEY'), pool: poolOf(name) })
        await listen(name, app, sign.host, sign.port)
      }
    }
  } catch (err) {
    await close()
    throw err
  }
  return { apps, pools, database, close }
}
