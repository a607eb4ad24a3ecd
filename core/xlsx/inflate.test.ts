/**
 * The reused-buffer inflater against zlib itself: every entry is deflated with
 * zlib's own compressor, stored in a file between unrelated bytes, and must come
 * back exactly, through the native-handle path and through the stream fallback.
 *
 * Which engines a Node line has is a fact of that line (NATIVE_HANDLE_NODE_MAJORS):
 * every test below runs once per engine the running line has, with the engine in its
 * name, and the handle-only tests say so and run only where the handle is used. .ci/run
 * runs this file on each supported line (.ci/node-line), so each engine is checked
 * somewhere; on a line without the handle the stream path gets the same tests.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateRawSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NATIVE_HANDLE_NODE_MAJORS, defaultInflateEngine, inflateEntry, nativeInflateAvailable, streamInflate } from './inflate.js'
import type { EntryData, InflateEngine } from './inflate.js'
import { readXlsxFirstSheet } from './read-xlsx.js'
import type { Cell } from './cells.js'
import { generateLedger } from '../../fixtures/ledger/generate.js'

let dir: string
let n = 0
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-inflate-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

/** Writes `data` deflated (or stored) between junk, as a ZIP entry sits between headers. */
async function entryOf (data: Buffer, method = 8, tamper?: (compressed: Buffer) => Buffer): Promise<EntryData> {
  let body = method === 8 ? deflateRawSync(data) : data
  if (tamper !== undefined) body = tamper(body)
  const before = randomBytes(1000)
  const path = join(dir, `entry-${n++}`)
  await writeFile(path, Buffer.concat([before, body, randomBytes(777)]))
  return { path, start: before.length, compressedSize: body.length, method }
}

async function collect (entry: EntryData, engine: InflateEngine): Promise<{ bytes: Buffer, largestChunk: number }> {
  const chunks: Buffer[] = []
  let largestChunk = 0
  // Copies, as the contract asks: a chunk's memory is reused after the next is asked for.
  for await (const chunk of inflateEntry(entry, engine)) {
    largestChunk = Math.max(largestChunk, chunk.length)
    chunks.push(Buffer.from(chunk))
  }
  return { bytes: Buffer.concat(chunks), largestChunk }
}

/** Text that compresses like sheet XML, `size` bytes long. */
function sheetLike (size: number, seed: number): Buffer {
  const parts: string[] = []
  let length = 0
  for (let r = 1; length < size; r++) {
    const row = `<row r="${r}"><c r="A${r}"><v>${(r * 7919 + seed) % 100003}</v></c><c r="B${r}" t="s"><v>${r % 97}</v></c></row>`
    parts.push(row)
    length += row.length
  }
  return Buffer.from(parts.join('')).subarray(0, size)
}

const major = Number(process.versions.node.split('.')[0])
const lineHasHandle = NATIVE_HANDLE_NODE_MAJORS.has(major)
/** The engines of this Node line: the handle where it was checked, the stream everywhere. */
const ENGINES: InflateEngine[] = lineHasHandle ? ['native-handle', 'stream'] : ['stream']
/** Largest chunk each engine hands out (native: its pieces; stream: zlib's chunk size). */
const LARGEST_CHUNK: Record<InflateEngine, number> = { 'native-handle': 32 * 1024, stream: 256 * 1024 }

describe(`inflateEntry on Node ${major}`, () => {
  const checked = [...NATIVE_HANDLE_NODE_MAJORS].join(', ')
  it(lineHasHandle
    ? `uses the native zlib handle, as on every checked line (${checked}): otherwise every read quietly takes the slower stream path`
    : `takes the stream path: the native handle was checked on ${checked} only`, async () => {
    expect(await nativeInflateAvailable()).toBe(lineHasHandle)
    expect(await defaultInflateEngine()).toBe(lineHasHandle ? 'native-handle' : 'stream')
  })

  it('the stream engine is asked for by name and needs no handle', async () => {
    const data = sheetLike(300_000, 21)
    const entry = await entryOf(data)
    expect((await collect(entry, 'stream')).bytes.equals(data)).toBe(true)
  })

  for (const engine of ENGINES) {
    describe(`engine ${engine}`, () => {
      const sizes = [1, 100, 128 * 1024, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20), 3 * (1 << 20) + 12345, 9 * (1 << 20) + 7]
      for (const size of sizes) {
        it(`gives back ${size} bytes exactly, compressible and random, in chunks of at most ${LARGEST_CHUNK[engine] / 1024} KiB`, async () => {
          for (const data of [sheetLike(size, size), randomBytes(size)]) {
            const entry = await entryOf(data)
            const got = await collect(entry, engine)
            expect(got.bytes.equals(data)).toBe(true)
            expect(got.largestChunk).toBeLessThanOrEqual(LARGEST_CHUNK[engine])
          }
        })
      }

      it('reads stored (uncompressed) entries', async () => {
        const data = sheetLike(2_500_000, 3)
        const entry = await entryOf(data, 0)
        expect((await collect(entry, engine)).bytes.equals(data)).toBe(true)
      })

      it('fails on a deflate stream cut short or damaged, and still reads the next entry', async () => {
        const data = sheetLike(5_000_000, 9)
        const cut = await entryOf(data, 8, (c) => c.subarray(0, Math.floor(c.length / 2)))
        await expect(collect(cut, engine)).rejects.toThrow()
        const damaged = await entryOf(data, 8, (c) => {
          const out = Buffer.from(c)
          for (let i = 100; i < 400; i++) out[i] = 0xff
          return out
        })
        await expect(collect(damaged, engine)).rejects.toThrow()
        const whole = await entryOf(data)
        expect((await collect(whole, engine)).bytes.equals(data)).toBe(true)
      })

      it('fails when the file ends inside the entry', async () => {
        const data = sheetLike(3_000_000, 4)
        const entry = await entryOf(data)
        await expect(collect({ ...entry, compressedSize: entry.compressedSize + 5000 }, engine)).rejects.toThrow()
      })

      it('stops cleanly when the consumer leaves early, with zlib busy, and the next read gets its bytes right', async () => {
        const data = sheetLike(12_000_000, 5)
        const entry = await entryOf(data)
        for (let stopAfter = 1; stopAfter < 40; stopAfter += 7) {
          let seen = 0
          let taken = 0
          for await (const chunk of inflateEntry(entry, engine)) {
            expect(chunk.equals(data.subarray(seen, seen + chunk.length))).toBe(true)
            seen += chunk.length
            if (++taken === stopAfter) break
          }
          expect(taken).toBe(stopAfter)
        }
        // A read that stopped early keeps its buffers out of reuse (a zlib write may still be
        // filling one); the next read must get its bytes right at once.
        expect((await collect(entry, engine)).bytes.equals(data)).toBe(true)
      })

      it('runs reads of different entries at the same time without mixing their bytes', async () => {
        const datas = [sheetLike(4_000_000, 1), randomBytes(2_000_000), sheetLike(6_000_000, 2)]
        const entries = await Promise.all(datas.map((d) => entryOf(d)))
        const results = await Promise.all(entries.map((e) => collect(e, engine)))
        results.forEach((r, i) => expect(r.bytes.equals(datas[i]!)).toBe(true))
      })

      // The memory test: buffers the engine allocates while inflating 256 MB, sampled as the
      // consumer goes. The handle reuses five buffers (3 MiB out, 512 KiB in, taken from the
      // thread's spares when an earlier read left them), so it stays within a few MiB; the
      // stream path leaves a fresh 256 KiB buffer per chunk for the collector (measured: a
      // 32 MiB peak on Node 20, 66 MiB on 24 and 26) and must still stay far below the entry.
      const bound = engine === 'native-handle' ? 8 << 20 : 128 << 20
      it(`holds at most ${bound >> 20} MiB of buffers while inflating a 256 MB entry`, async () => {
        const data = sheetLike(16 << 20, 31)
        const compressed = deflateRawSync(Buffer.concat(Array.from({ length: 16 }, () => data)), { level: 1 })
        const path = join(dir, `big-${n++}`)
        await writeFile(path, compressed)
        const entry: EntryData = { path, start: 0, compressedSize: compressed.length, method: 8 }
        const before = process.memoryUsage().arrayBuffers
        let peak = before
        let total = 0
        let chunks = 0
        for await (const chunk of inflateEntry(entry, engine)) {
          total += chunk.length
          if (++chunks % 16 === 0) peak = Math.max(peak, process.memoryUsage().arrayBuffers)
        }
        expect(total).toBe(256 << 20)
        expect(peak - before).toBeLessThan(bound)
      })
    })
  }

  it('keeps the stream path as its own reference', async () => {
    const data = sheetLike(1_000_000, 8)
    const entry = await entryOf(data)
    const chunks: Buffer[] = []
    for await (const chunk of streamInflate(entry)) chunks.push(chunk)
    expect(Buffer.concat(chunks).equals(data)).toBe(true)
  })
})

describe(`the reader on each engine of Node ${major}`, () => {
  it(`sees the same rows of a generated ledger (${ENGINES.join(', ')})`, async () => {
    const path = join(dir, 'ledger.xlsx')
    await generateLedger({ path, format: 'xlsx', rows: 30_000, seed: 11, textAmountEvery: 7, blankRowEvery: 50, dateStyle: 'mixed', extraColumns: true })
    const read = async (engine: InflateEngine): Promise<Array<[number, Cell[]]>> => {
      const rows: Array<[number, Cell[]]> = []
      await readXlsxFirstSheet(path, (r, cells) => { rows.push([r, cells]) }, { maxInflatedBytes: 1 << 30, inflateEngine: engine })
      return rows
    }
    const reference = await read('stream')
    expect(reference.length).toBeGreaterThan(30_000)
    for (const engine of ENGINES) expect(await read(engine)).toEqual(reference)
  })
})
