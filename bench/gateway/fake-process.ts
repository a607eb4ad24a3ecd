/** The benchmark's NF-e fake in a process of its own (see bench/gateway.bench.ts). */
import { makeNfeDocuments } from '../../fixtures/gateway/documents.js'
import type { FakeNfeDocument } from '../../fixtures/gateway/documents.js'
import type { FakeServerPki } from '../../fixtures/gateway/mtls-server.js'
import { startNfeFake } from '../../fixtures/gateway/nfe-fake.js'
import type { NfeFake } from '../../fixtures/gateway/nfe-fake.js'
import { serveRpc } from './rpc.js'

export interface FakeStart { pki: FakeServerPki, cnpjs: string[], docs: number }

let fake: NfeFake | undefined

serveRpc({
  start: async (a: FakeStart) => {
    // maxNSU stays above the batch, so no answer starts the gateway's waiting period.
    const documents = new Map<string, FakeNfeDocument[]>(a.cnpjs.map((c) => [c, makeNfeDocuments(c, 1, a.docs + 1)]))
    fake = await startNfeFake({ pki: a.pki, tpAmb: 2, documents, batchSize: a.docs, pacing: false, record: false })
    return fake.url
  },
  handshakes: async () => fake?.handshakes() ?? 0
}, async () => { await fake?.close() })
