/**
 * The script of razao's Tesseract worker thread (tesseract.js's `workerPath`): tesseract.js's
 * own Node worker script, with one difference, the WebAssembly core. tesseract.js's script
 * picks its core at run time by what the running V8 supports, and in Node it ignores
 * `corePath`: where V8 has relaxed SIMD (Node 22 and later) it loads the relaxed-SIMD
 * build, whose results the WebAssembly spec lets differ by CPU (V8 turns its
 * `i32x4.dot_i8x16_i7x16_add_s` into AVX-VNNI's vpdpbusd where the CPU has it, into
 * pmaddubsw, which saturates, where not), so one scan could be read differently on two
 * machines. This script loads the core named by `corePath` and nothing else; tesseract.ts
 * names the plain SIMD build, whose instructions give the same bits on every CPU.
 *
 * Plain JavaScript: tesseract.js starts it with `new Worker(workerPath)`, without the
 * TypeScript loader the tests run under.
 */
import { readlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { parentPort } from 'node:worker_threads'

const require = createRequire(import.meta.url)
// tesseract.js's internals, from its own folder (its package has no `exports` map).
const tesseractRequire = createRequire(require.resolve('tesseract.js/package.json'))
const worker = tesseractRequire('./src/worker-script/index.js')
const gunzip = tesseractRequire('./src/worker-script/node/gunzip.js')
const cache = tesseractRequire('./src/worker-script/node/cache.js')

/** @type {unknown} */
let core

/**
 * The adapter's getCore: the module at `corePath` (an absolute file path), loaded once.
 * @param {unknown} _lstmOnly
 * @param {unknown} corePath
 * @param {{ progress: (data: object) => void }} res
 */
async function getCore (_lstmOnly, corePath, res) {
  if (typeof corePath !== 'string' || corePath === '') throw new Error('razao\'s Tesseract worker needs corePath: the WebAssembly core is pinned, never chosen at run time')
  if (core === undefined) {
    res.progress({ status: 'loading tesseract core', progress: 0 })
    core = require(corePath)
    // tesseract.ts's logger records which core this thread runs (ocr.test.ts checks it), and
    // this thread's system id: its CPU time counts for the document whose page it reads
    // (core/extraction/work-clock.ts).
    res.progress({ status: 'loading tesseract core', progress: 1, corePath, threadId: systemThreadId() })
  }
  return core
}

/** This thread's id in the system (Linux's tid, from /proc), or undefined where there is none. */
function systemThreadId () {
  try {
    const match = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))
    return match === null ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}

worker.setAdapter({ getCore, gunzip, fetch: globalThis.fetch, ...cache })

if (parentPort !== null) {
  const port = parentPort
  port.on('message', (/** @type {unknown} */ packet) => {
    worker.dispatchHandlers(packet, (/** @type {unknown} */ obj) => port.postMessage(obj))
  })
}
