/** The feed scale run's NF-e fake in a process of its own (see bench/feed-scale.ts): the authority's pacing rules on. */
import { makeNfeDocuments } from '../../fixtures/gateway/documents.js'
import type { FakeNfeDocument } from '../../fixtures/gateway/documents.js'
import type { FakeServerPki } from '../../fixtures/gateway/mtls-server.js'
import { startNfeFake } from '../../fixtures/gateway/nfe-fake.js'
import type { NfeFake } from '../../fixtures/gateway/nfe-fake.js'
import { serveRpc } from './rpc.js'

export interface FeedFakeStart { pki: FakeServerPki, cnpjs: string[], docs: number, /** NSUs per company distNSU leaves out (7, 14, …): gaps the feed refills with consNSU. */ withheld: number }
export interface FeedFakeStats { requests: number, byStatus: Record<string, number>, maxConcurrentPerCnpj: number, repeatedQueries: number, handshakes: number }

let fake: NfeFake | undefined

serveRpc({
  start: async (a: FeedFakeStart) => {
    // Keys unique per company (series i), NSU 1..docs per CNPJ.
    const documents = new Map<string, FakeNfeDocument[]>(a.cnpjs.map((c, i) => [c, makeNfeDocuments(c, (i + 1) * 10_000 + 1, a.docs)
      .map((d, n) => ({ ...d, nsu: String(n + 1).padStart(15, '0') }))]))
    const withheld = new Map(a.cnpjs.map((c) => [c, new Set(Array.from({ length: a.withheld }, (_, k) => String((k + 1) * 7).padStart(15, '0')))]))
    fake = await startNfeFake({ pki: a.pki, tpAmb: 2, documents, withheld })
    return fake.url
  },
  stats: async (): Promise<FeedFakeStats> => {
    const requests = fake?.requests ?? []
    const byStatus: Record<string, number> = {}
    const seen = new Set<string>()
    let repeated = 0
    for (const r of requests) {
      byStatus[r.cStat] = (byStatus[r.cStat] ?? 0) + 1
      const key = `${r.cnpj}:${JSON.stringify(r.query)}`
      if (seen.has(key)) repeated++
      seen.add(key)
    }
    return { requests: requests.length, byStatus, maxConcurrentPerCnpj: fake?.maxConcurrentPerCnpj() ?? 0, repeatedQueries: repeated, handshakes: fake?.handshakes() ?? 0 }
  }
}, async () => { await fake?.close() })
