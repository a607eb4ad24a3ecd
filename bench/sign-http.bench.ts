/**
 * What the stamp costs over HTTP, by kind of document (issue 34): `POST /api/v1/sign` to two
 * signature services on 127.0.0.1 built by the service's own buildSignApp, one with
 * SIGN_VISUAL_MODE=NONE and one with STAMP_AND_PAGE, sharing one pool, the same certificate
 * and the same client (keep-alive fetch, JSON with the PDF in Base64, as clients send it).
 * The two modes of a document alternate request by request, so a shared machine's load moves
 * both alike; the ratio STAMP_AND_PAGE ÷ NONE of the medians is the figure (goal: at most 3×).
 *
 * Documents: a reportlab-shaped text-dense contract (every page's content filtered
 * [/ASCII85Decode /FlateDecode], 45 lines a page; the 24.9× case), pdf-lib's
 * text-dense pages (the signing benchmark's own file), image-only "scanned" pages, an
 * AcroForm, and every PDF of the real corpus in fixtures/extraction/real (scans included),
 * that last one as the sum of the medians over the corpus and the worst single file.
 *
 *   node --import tsx bench/sign-http.bench.ts [--runs 15] [--threads 2]
 *
 * `benchSignHttp` and `signHttpTable` are exported for bench/run.ts.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { deflateSync } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import { PDFDocument, PDFName } from 'pdf-lib'
import { createDevChain } from '../core/sign/index.js'
import { makeFormPdf, makeReportlabLikePdf, makeTextPdf } from '../fixtures/pdf/samples.js'
import { loadConfig } from '../server/config.js'
import { buildSignApp } from '../server/sign/app.js'
import { loadSignConfig } from '../server/sign/config.js'
import { createPool } from '../workers/pool.js'

export interface SignHttpRow {
  kind: string
  document: string
  pages: number
  inputBytes: number
  noneMs: number
  stampMs: number
  /** Median CPU time of this whole process (client, HTTP thread, pool threads) per request: steadier than wall time on a loaded machine. */
  noneCpuMs: number
  stampCpuMs: number
  runs: number
}

export interface SignHttpResult { rows: SignHttpRow[], corpus: SignHttpRow[], threads: number }

const API_KEY = 'bench-http-key-0123456789abcdefghijklmnop'
const REAL_DIR = fileURLToPath(new URL('../fixtures/extraction/real/', import.meta.url))

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/**
 * `pages` pages of one grey image each and no text, as a scanner's PDF: a 1,240 x 1,754
 * 8-bit image (A4 at 150 dpi) with a pattern that deflates to about a tenth, drawn full page.
 */
async function makeScannedPdf (pages: number): Promise<Uint8Array> {
  const [w, h] = [1240, 1754]
  const pixels = Buffer.alloc(w * h)
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) pixels[y * w + x] = 200 + ((x * 7 + y * 13 + ((x * y) >> 9)) & 0x37)
  const data = deflateSync(pixels)
  const doc = await PDFDocument.create()
  for (let i = 0; i < pages; i++) {
    const image = doc.context.register(doc.context.stream(data, { Type: 'XObject', Subtype: 'Image', Width: w, Height: h, ColorSpace: 'DeviceGray', BitsPerComponent: 8, Filter: 'FlateDecode' }))
    const page = doc.addPage([595.28, 841.89])
    page.node.set(PDFName.of('Resources'), doc.context.obj({ XObject: { Im0: image } }))
    const content = doc.context.register(doc.context.stream('q 595.28 0 0 841.89 0 0 cm /Im0 Do Q'))
    page.node.set(PDFName.of('Contents'), content)
  }
  return await doc.save({ useObjectStreams: false })
}

function realPdfs (dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...realPdfs(path))
    else if (entry.name.endsWith('.pdf')) out.push(path)
  }
  return out.sort()
}

async function pageCount (pdf: Uint8Array): Promise<number> {
  return (await PDFDocument.load(pdf, { ignoreEncryption: true, updateMetadata: false })).getPageCount()
}

export async function benchSignHttp (options: { runs?: number, threads?: number } = {}, log: (line: string) => void = () => {}): Promise<SignHttpResult> {
  const runs = options.runs ?? 15
  const threads = options.threads ?? availableParallelism()
  const dir = await mkdtemp(join(tmpdir(), 'razao-bench-sign-http-'))
  const chain = createDevChain({ password: 'bench' })
  await writeFile(join(dir, 'bench.p12'), chain.pkcs12)
  const pool = createPool({ maxThreads: threads, keepThreads: true })
  const apps: FastifyInstance[] = []
  const start = async (visualMode: string): Promise<string> => {
    const env = { RAZAO_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent', SIGN_CERT_PATH: join(dir, 'bench.p12'), SIGN_CERT_PASSWORD: 'bench', SIGN_VISUAL_MODE: visualMode }
    const shared = loadConfig(env).shared
    const app = await buildSignApp({ shared, config: loadSignConfig(env, shared), apiKey: API_KEY, pool, logger: false })
    apps.push(app)
    return `${await app.listen({ host: '127.0.0.1', port: 0 })}/api/v1/sign`
  }
  try {
    const none = await start('NONE')
    const stamped = await start('STAMP_AND_PAGE')
    const sign = async (url: string, body: string): Promise<[number, number]> => {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': API_KEY }, body })
      const text = await res.text()
      const ms = performance.now() - t0
      const cpu = process.cpuUsage(c0)
      if (res.status !== 200) throw new Error(`the benchmark's document was refused (${res.status}): ${text.slice(0, 300)}`)
      return [ms, (cpu.user + cpu.system) / 1000]
    }
    const measure = async (kind: string, document: string, pdf: Uint8Array, n: number): Promise<SignHttpRow> => {
      const body = JSON.stringify({ pdfBase64: Buffer.from(pdf).toString('base64') })
      // Warm: every thread has signed this document in both modes.
      for (let i = 0; i < Math.max(3, threads * 2); i++) await Promise.all([sign(none, body), sign(stamped, body)])
      const a: Array<[number, number]> = []
      const b: Array<[number, number]> = []
      for (let i = 0; i < n; i++) {
        a.push(await sign(none, body))
        b.push(await sign(stamped, body))
      }
      const row = {
        kind, document, pages: await pageCount(pdf), inputBytes: pdf.length, runs: n,
        noneMs: median(a.map((x) => x[0])), stampMs: median(b.map((x) => x[0])), noneCpuMs: median(a.map((x) => x[1])), stampCpuMs: median(b.map((x) => x[1]))
      }
      log(`  ${kind} ${document}: NONE ${row.noneMs.toFixed(1)} ms, STAMP_AND_PAGE ${row.stampMs.toFixed(1)} ms (${(row.stampMs / row.noneMs).toFixed(2)}×; CPU ${row.noneCpuMs.toFixed(1)} vs ${row.stampCpuMs.toFixed(1)} ms, ${(row.stampCpuMs / row.noneCpuMs).toFixed(2)}×)`)
      return row
    }
    const rows: SignHttpRow[] = []
    rows.push(await measure('text-dense, reportlab-shaped', '100 pages × 45 lines', makeReportlabLikePdf(100), runs))
    rows.push(await measure('text-dense, reportlab-shaped', '1 page × 45 lines', makeReportlabLikePdf(1), runs))
    rows.push(await measure('text-dense, pdf-lib', '100 pages × 45 lines', await makeTextPdf(100), runs))
    rows.push(await measure('scanned images', '20 pages, one 1240×1754 image each', await makeScannedPdf(20), runs))
    rows.push(await measure('form', 'AcroForm: text field, check box, link, rotated page', await makeFormPdf(), runs))
    const corpus: SignHttpRow[] = []
    for (const path of realPdfs(REAL_DIR)) {
      corpus.push(await measure('real corpus', relative(REAL_DIR, path), readFileSync(path), Math.max(5, Math.ceil(runs / 3))))
    }
    return { rows, corpus, threads }
  } finally {
    await Promise.allSettled(apps.map(async (a) => await a.close()))
    await pool.destroy()
    await rm(dir, { recursive: true, force: true })
  }
}

export function signHttpTable (result: SignHttpResult): string {
  const line = (r: SignHttpRow): string =>
    `| ${r.kind} | ${r.document} | ${r.pages} | ${Math.round(r.inputBytes / 1024)} | ${r.noneMs.toFixed(1)} | ${r.stampMs.toFixed(1)} | ${(r.stampMs / r.noneMs).toFixed(2)}× | ${r.noneCpuMs.toFixed(1)} | ${r.stampCpuMs.toFixed(1)} | ${(r.stampCpuMs / r.noneCpuMs).toFixed(2)}× |`
  const lines = [
    `### The stamp over HTTP, by kind of document (POST /api/v1/sign, JSON, one request at a time, ${result.threads} pool threads)`,
    '',
    'CPU is the whole process\'s (the client, the HTTP thread and the pool threads) per request, median: on a loaded machine it moves far less than wall time.',
    '',
    '| kind | document | pages | KB | NONE median ms | STAMP_AND_PAGE median ms | ratio | NONE CPU ms | STAMP_AND_PAGE CPU ms | CPU ratio |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...result.rows.map(line)
  ]
  if (result.corpus.length > 0) {
    const sum = (pick: (r: SignHttpRow) => number): number => result.corpus.reduce((n, r) => n + pick(r), 0)
    const total: SignHttpRow = {
      kind: `real corpus, all ${result.corpus.length} files`, document: 'sum of the medians', pages: sum((r) => r.pages), inputBytes: sum((r) => r.inputBytes), runs: 0,
      noneMs: sum((r) => r.noneMs), stampMs: sum((r) => r.stampMs), noneCpuMs: sum((r) => r.noneCpuMs), stampCpuMs: sum((r) => r.stampCpuMs)
    }
    const worst = result.corpus.reduce((w, r) => r.stampCpuMs / r.noneCpuMs > w.stampCpuMs / w.noneCpuMs ? r : w)
    lines.push(line(total), line({ ...worst, kind: 'real corpus, worst file by CPU' }))
  }
  lines.push('', '| target | measured | verdict |', '|---|---|---|')
  for (const r of result.rows) {
    const ratio = r.stampMs / r.noneMs
    lines.push(`| STAMP_AND_PAGE ÷ NONE over HTTP at most 3×: ${r.kind}, ${r.document} | ${ratio.toFixed(2)}× (CPU ${(r.stampCpuMs / r.noneCpuMs).toFixed(2)}×) | ${ratio <= 3 ? 'PASS' : 'FAIL'} |`)
  }
  return lines.join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, threads: { type: 'string' } }, strict: true })
  const result = await benchSignHttp({
    ...(values.runs === undefined ? {} : { runs: Number(values.runs) }),
    ...(values.threads === undefined ? {} : { threads: Number(values.threads) })
  }, (line) => process.stderr.write(`${line}\n`))
  process.stdout.write(`${signHttpTable(result)}\n`)
}
