/**
 * `razao sign` in a child process: a file signed as the service signs it (pdfsig judges the
 * output), the visual mode for one file, the level passed through, usage errors (exit 2),
 * a file that is not a PDF (exit 1, nothing written), `--check` with the days left, and an
 * expired certificate refused before anything is read.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PDFDocument } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDevChain } from '../../core/sign/index.js'
import { ROOT, runRazao } from '../../fixtures/razao-cli.js'
import { makePdf } from '../../fixtures/pdf/samples.js'
import { toolsAvailable } from '../../fixtures/pdf/verify.js'
import { unsupportedLineWarning } from '../runtime.js'

const run = promisify(execFile)
let dir: string
let env: NodeJS.ProcessEnv

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-cli-sign-'))
  const chain = createDevChain({ password: 'senha' })
  await writeFile(join(dir, 'cert.p12'), chain.pkcs12)
  await writeFile(join(dir, 'in.pdf'), await makePdf([{}, {}]))
  env = { ...process.env, RAZAO_DATA_DIR: join(dir, 'data'), SIGN_CERT_PATH: join(dir, 'cert.p12'), SIGN_CERT_PASSWORD: 'senha', SIGN_VISUAL_MODE: 'NONE', NODE_ENV: 'development' }
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

const razao = async (args: string[], over: NodeJS.ProcessEnv = {}): ReturnType<typeof runRazao> => await runRazao(['sign', ...args], { cwd: ROOT, env: { ...env, ...over } })

describe('razao sign', () => {
  it.skipIf(!toolsAvailable('pdfsig'))('signs IN.pdf into OUT.pdf, with the visual mode asked for this file, and prints a summary', async () => {
    const out = join(dir, 'out.pdf')
    const result = await razao([join(dir, 'in.pdf'), '-o', out, '--stamp', 'page_only', '--level', 'b'])
    // Nothing to warn of but, on a Node line past its end of life, that.
    const runtime = unsupportedLineWarning()
    expect(result.stderr).toBe(runtime === undefined ? '' : `razao: warning: ${runtime}\n`)
    expect(result.code).toBe(0)
    const summary = JSON.parse(result.stdout)
    const signed = await readFile(out)
    expect(summary).toMatchObject({ output: out, signatureStandard: 'PAdES-B', level: 'B', sizeBytes: signed.length, documentIdentifier: expect.stringMatching(/^RZ-/) })
    // PAGE_ONLY for this file although SIGN_VISUAL_MODE is NONE: the final page is there.
    expect((await PDFDocument.load(signed)).getPageCount()).toBe(3)
    const { stdout } = await run('pdfsig', [out])
    expect(stdout).toContain('Signature is Valid')
  })

  it('refuses wrong usage with exit 2 and a reason, before any file is written', async () => {
    for (const [args, reason] of [
      [[join(dir, 'in.pdf')], /missing -o OUT\.pdf/],
      [[], /missing IN\.pdf/],
      [[join(dir, 'in.pdf'), '-o', join(dir, 'x.pdf'), '--level', 'C'], /--level must be one of B, T, LT, LTA/],
      [[join(dir, 'in.pdf'), '-o', join(dir, 'x.pdf'), '--stamp', 'big'], /--stamp must be one of NONE, STAMP_ONLY/],
      [[join(dir, 'in.pdf'), '-o', join(dir, 'x.pdf'), '--colour'], /unknown option --colour for razao sign/]
    ] as Array<[string[], RegExp]>) {
      const result = await razao(args)
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(reason)
    }
    expect(await readdir(dir)).not.toContain('x.pdf')
  })

  it('exits 1 with the service\'s code for a file that is not a PDF, leaving no output behind', async () => {
    await writeFile(join(dir, 'notes.txt'), 'not a pdf')
    const result = await razao([join(dir, 'notes.txt'), '-o', join(dir, 'notes-signed.pdf')])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/notes\.txt was not signed: INVALID_PDF: /)
    expect((await readdir(dir)).filter((f) => f.startsWith('notes-signed') || f.endsWith('.tmp'))).toEqual([])
  })

  it('--check reports the days left and warns from 30 days before the end; an expired certificate stops it with exit 2', async () => {
    const soon = createDevChain({ password: 'x', signerNotAfter: new Date(Date.now() + 20 * 86_400_000 - 3_600_000) })
    await writeFile(join(dir, 'soon.p12'), soon.pkcs12)
    const check = await razao(['--check'], { SIGN_CERT_PATH: join(dir, 'soon.p12'), SIGN_CERT_PASSWORD: 'x' })
    expect(check.code).toBe(0)
    const report = JSON.parse(check.stdout)
    expect(report).toMatchObject({ status: 'UP', daysLeft: 19 })
    expect(report.warnings.join(' ')).toMatch(/expires on .* \(in 19 days\)/)

    const old = createDevChain({ password: 'x', signerNotBefore: new Date(Date.now() - 400 * 86_400_000), signerNotAfter: new Date(Date.now() - 86_400_000) })
    await writeFile(join(dir, 'old.p12'), old.pkcs12)
    const expired = await razao([join(dir, 'in.pdf'), '-o', join(dir, 'never.pdf')], { SIGN_CERT_PATH: join(dir, 'old.p12'), SIGN_CERT_PASSWORD: 'x' })
    expect(expired.code).toBe(2)
    expect(expired.stderr).toMatch(/^razao: SIGN_CERT_PATH: the signing certificate in .*old\.p12 expired on .*does not start with an expired certificate/)
    expect(await readdir(dir)).not.toContain('never.pdf')
  })
})
