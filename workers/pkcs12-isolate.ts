/**
 * Opens a PKCS#12 file in a worker thread of its own, thrown away afterwards. Deriving
 * its keys is seconds of CPU for a file at the iteration caps (core/sign/pkcs12-limits.ts),
 * and the gateway, which opens certificates on upload and before its first query with
 * each, has no pool: on the main thread that would stall every service of the process.
 * A deadline and a heap cap bound what a crafted file can still cost.
 *
 * The key crosses back as PKCS#8 DER and the certificates as DER; the calling thread
 * rebuilds the signing material from them (ordering the chain is cheap).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto'
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
// The certificate modules alone, not core/sign's index: the thread starts for one file,
// and the whole signer (pdf-lib, pdf.js) would multiply its start-up time for nothing.
import { loadPkcs12, materialFrom } from '../core/sign/certificate.js'
import type { SigningMaterial } from '../core/sign/certificate.js'
import { SignError, isSignError } from '../core/sign/errors.js'
import { assertClearPkcs12Iterations } from '../core/sign/pkcs12-limits.js'
import { startWorker } from './paths.js'

/** A file at the caps opens in about 3 s on a loaded machine; ten times that is a fault. */
const DEADLINE_MS = 30_000
const HEAP_MB = 256
const ISOLATE_MARK = 'razaoPkcs12Isolate'

type Outcome = { ok: true, key: Uint8Array, chain: Uint8Array[] } | { ok: false, code: string, message: string }

export interface Pkcs12IsolateLimits { deadlineMs: number, heapMb: number }

/** loadPkcs12 in a fresh thread: the same material, or the same SIGN_CERT_INVALID refusals. */
export async function openPkcs12Isolated (file: Uint8Array, password: string, limits: Pkcs12IsolateLimits = { deadlineMs: DEADLINE_MS, heapMb: HEAP_MB }): Promise<SigningMaterial> {
  // The counts in clear cost nothing to read: a crafted file is refused without starting a thread.
  assertClearPkcs12Iterations(file)
  const outcome = await new Promise<Outcome>((resolve) => {
    const worker = startWorker('pkcs12-isolate', {
      workerData: { [ISOLATE_MARK]: true, file, password },
      resourceLimits: { maxOldGenerationSizeMb: limits.heapMb }
    })
    let settled = false
    const settle = (value: Outcome): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      void worker.terminate()
      resolve(value)
    }
    const timer = setTimeout(() => settle({ ok: false, code: 'SIGN_CERT_INVALID', message: 'Opening the certificate file took too long and was abandoned; it may be damaged or crafted.' }), limits.deadlineMs)
    worker.once('message', settle)
    worker.once('error', () => settle({ ok: false, code: 'SIGN_CERT_INVALID', message: 'The certificate file could not be opened; it may be damaged or crafted.' }))
    worker.once('exit', (code) => settle({ ok: false, code: 'SIGN_CERT_INVALID', message: `The certificate reader stopped unexpectedly (exit ${code}); the file may be damaged or crafted.` }))
  })
  if (!outcome.ok) throw new SignError(isSignError(outcome) ? outcome.code : 'SIGN_CERT_INVALID', outcome.message)
  return materialFrom(createPrivateKey({ key: Buffer.from(outcome.key), format: 'der', type: 'pkcs8' }), outcome.chain.map((der) => new X509Certificate(Buffer.from(der))))
}

if (!isMainThread && parentPort !== null && (workerData as Record<string, unknown> | null)?.[ISOLATE_MARK] === true) {
  const { file, password } = workerData as { file: Uint8Array, password: string }
  let outcome: Outcome
  try {
    const material = loadPkcs12(file, password)
    outcome = { ok: true, key: material.key.export({ type: 'pkcs8', format: 'der' }), chain: material.chain }
  } catch (err) {
    outcome = isSignError(err) ? { ok: false, code: err.code, message: err.message } : { ok: false, code: 'SIGN_CERT_INVALID', message: 'The certificate file could not be opened.' }
  }
  parentPort.postMessage(outcome)
}
