/** One gateway instance's feed scheduler for the scale run (see bench/feed-scale.ts): its own process, its own pool. */
import pg from 'pg'
import { FeedScheduler, TlsAgentCache } from '../../core/gateway/index.js'
import { serveRpc } from './rpc.js'

export interface FeedInstanceStart {
  databaseUrl: string
  nfeUrl: string
  rootPem: string
  client: { pfxBase64: string, password: string, fingerprint: string }
  concurrency: number
}
export interface FeedInstanceStats { polled: number, stored: number, cpuMs: number }

let pool: pg.Pool | undefined
let scheduler: FeedScheduler | undefined
let agents: TlsAgentCache | undefined
const polled = new Set<string>()
let stored = 0
let cpuAtStart = process.cpuUsage()

serveRpc({
  start: async (a: FeedInstanceStart) => {
    pool = new pg.Pool({ connectionString: a.databaseUrl, max: a.concurrency + 2 })
    agents = new TlsAgentCache({ extraCaPem: a.rootPem })
    const cert = { pfx: Buffer.from(a.client.pfxBase64, 'base64'), password: a.client.password, fingerprint: a.client.fingerprint }
    await agents.agentFor(cert)
    scheduler = new FeedScheduler({
      pool,
      agentFor: async () => await agents!.agentFor(cert),
      tpAmb: 2,
      nfeUrl: a.nfeUrl,
      adnUrl: 'https://127.0.0.1:1/contribuintes',
      timeoutMs: 20_000,
      concurrency: a.concurrency,
      idleMs: 200,
      onFeedChanged: (c) => {
        polled.add(c.company.cnpj)
        stored += c.inserted
      }
    })
    cpuAtStart = process.cpuUsage()
    scheduler.start()
    return true
  },
  stats: async (): Promise<FeedInstanceStats> => {
    const cpu = process.cpuUsage(cpuAtStart)
    return { polled: polled.size, stored, cpuMs: (cpu.user + cpu.system) / 1000 }
  }
}, async () => {
  await scheduler?.stop()
  agents?.close()
  await pool?.end()
})
