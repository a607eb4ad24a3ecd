/**
 * The cross-reference check on its own: sound files from pdf-lib and qpdf (tables,
 * streams with PNG predictors, hybrid, several revisions) pass, and each kind of damage
 * is named.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PDFDocument } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeHybridPdf, makePdf, qpdf, withObjectStreams } from '../../fixtures/pdf/samples.js'
import { toolsAvailable } from '../../fixtures/pdf/verify.js'
import { findStartXref } from './open.js'
import { checkCrossReferences, objectNumberAt } from './xref-check.js'

let dir: string
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'razao-xref-')) })
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

async function check (bytes: Uint8Array): Promise<void> {
  const doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false })
  checkCrossReferences(bytes, findStartXref(bytes), doc.context)
}

const edit = (pdf: Uint8Array, change: (text: string) => string): Buffer => Buffer.from(change(Buffer.from(pdf).toString('latin1')), 'latin1')

describe('objectNumberAt', () => {
  it('reads the number of an object header, allowing white space before it, and -1 for anything else', () => {
    const bytes = Buffer.from('\r\n12 0 obj\n<< >>\nendobj 7 0 R 3 0 objx', 'latin1')
    expect(objectNumberAt(bytes, 0)).toBe(12)
    expect(objectNumberAt(bytes, 2)).toBe(12)
    expect(objectNumberAt(bytes, 3)).toBe(2)
    expect(objectNumberAt(bytes, 4)).toBe(-1)
    expect(objectNumberAt(bytes, bytes.indexOf('7 0 R'))).toBe(-1)
    expect(objectNumberAt(bytes, bytes.length - 8)).toBe(3)
    expect(objectNumberAt(bytes, bytes.length)).toBe(-1)
  })
})

describe.skipIf(!toolsAvailable('qpdf'))('checkCrossReferences', () => {
  it('accepts sound tables, qpdf\'s predicted cross-reference streams, a linearized file and a hybrid file', async () => {
    const plain = await makePdf([{}, {}])
    await check(plain)
    await check(await withObjectStreams(dir, plain, 'objstm'))
    await check(await qpdf(dir, plain, ['--linearize'], 'linear'))
    await check(makeHybridPdf())
  })

  it('names an entry that points where its object is not, a truncated table and a startxref into an object', async () => {
    const plain = await makePdf([{}])
    const shifted = edit(plain, (t) => t.replace(/^(\d{10}) 00000 n/m, (_m, o: string) => `${String(Number(o) + 5).padStart(10, '0')} 00000 n`))
    await expect(check(shifted)).rejects.toThrow(/entry of object \d+ points at byte \d+, where that object is not/)
    const truncated = edit(plain, (t) => t.replace(/(\nxref\n0 (\d+)\n)/, (_m, head: string, n: string) => head.replace(n, String(Number(n) + 5))))
    await expect(check(truncated)).rejects.toThrow(/truncated|malformed/)
    await expect(check(edit(plain, (t) => t.replace(/startxref\n\d+/, 'startxref\n20')))).rejects.toThrow(/no cross-reference section at byte 20/)
  })

  it('names a cross-reference stream whose entry is wrong (qpdf file edited through its predictor)', async () => {
    const streamed = await withObjectStreams(dir, await makePdf([{}]), 'objstm-bad')
    // A comment before the first object moves every object on, behind the stream's back.
    const text = Buffer.from(streamed).toString('latin1')
    const first = text.indexOf(' 0 obj') - 1
    const moved = Buffer.from(text.slice(0, first) + '%x\n' + text.slice(first).replace(/startxref\n(\d+)/, (_m, n: string) => `startxref\n${Number(n) + 3}`), 'latin1')
    await expect(check(moved)).rejects.toThrow(/entry of object/)
  })
})
