/**
 * The DEC package run as the agent runs it (fixtures/automations/run-package.ts) in headless
 * Chromium against the local portal (fixtures/automations/dec-portal.ts).
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { extractPdf } from '../../../fixtures/extraction/plugin-cases.js'
import { readPdfText } from '../../../core/extraction/index.js'
import { startDecPortal } from '../../../fixtures/automations/dec-portal.js'
import type { DecPortal } from '../../../fixtures/automations/dec-portal.js'
import { readDescriptor, runPackage } from '../../../fixtures/automations/run-package.js'
import { cnpjOf, seedFailingMiddle, seedThreeModes } from '../../../fixtures/automations/dec-scenarios.js'
import type { ExpectedItem, Scenario } from '../../../fixtures/automations/dec-scenarios.js'
import { startXvfb } from '../../../fixtures/automations/xvfb.js'
import type { PackageRun } from '../../../fixtures/automations/run-package.js'

const PACKAGE_DIR = dirname(fileURLToPath(import.meta.url))

const company = (c: { cnpj: string, senha: string, razaoSocial: string, inscricaoMunicipal: string }, ano = '2026', mes = '7') =>
  ({ razaoSocial: c.razaoSocial, cnpj: c.cnpj, senha: c.senha, inscricaoMunicipal: c.inscricaoMunicipal, competenciaAno: ano, competenciaMes: mes })

let portal: DecPortal
const runs: PackageRun[] = []
const run = async (input: unknown, env: Record<string, string> = {}, options: { stopWhenStderr?: RegExp } = {}): Promise<PackageRun> => {
  const r = await runPackage(PACKAGE_DIR, input, { env: { DEC_PORTAL_URL: portal.url, ...env }, timeoutMs: 120_000, ...options })
  runs.push(r)
  return r
}
/** Every byte a run showed: both streams, the result line, the output file names. */
const everything = async (r: PackageRun): Promise<string> => [r.stdout, r.stderr, JSON.stringify(r.result), ...(await readdir(r.jobDir))].join('\n')

/** Fails naming the password's position only (the output itself may be megabytes of debug log). */
const expectNoSecret = (all: string, secrets: string[]): void => {
  for (const s of secrets) expect(all.includes(s), `a password appears in the output at offset ${all.indexOf(s)}`).toBe(false)
}

beforeAll(async () => { portal = await startDecPortal() })
afterAll(async () => {
  await portal.close()
  for (const r of runs) await r.cleanup()
})

describe('dec-issqn-poa package: descriptor', () => {
  it('declares the agent contract: schema 1.0, a node command, 10 minutes, queued singleton, the input\'s shape', async () => {
    expect(await readDescriptor(PACKAGE_DIR)).toEqual({
      schemaVersion: '1.0',
      id: 'dec-issqn-poa',
      name: expect.any(String),
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      enabled: true,
      command: ['node', 'main.mjs'],
      timeoutMs: 600_000,
      singleton: true,
      env: ['DEC_PORTAL_URL', 'DEC_PORTAL_CONFIG', 'DEC_CHROMIUM_PATH', 'DEC_ACTION_TIMEOUT_MS', 'DISPLAY', 'XAUTHORITY', 'WAYLAND_DISPLAY', 'XDG_RUNTIME_DIR'],
      // What the agent checks a run against (core/agent/agent-parts.test.ts tests its messages).
      inputSchema: expect.objectContaining({ type: 'object', required: ['empresas'] }),
      checkInput: expect.any(Function)
    })
  })
})

/** The result's item a scenario expects, the download path being any PDF in the job folder. */
const itemOf = (x: ExpectedItem, jobDir: string) => x.success
  ? { success: true, cnpj: x.cnpj, competencia: x.competencia, download: expect.stringMatching(new RegExp(`^${jobDir}/dec-${x.cnpj}-\\d{4}-\\d{2}\\.pdf$`)), mode: x.mode }
  : { success: false, cnpj: x.cnpj, competencia: x.competencia, download: null, mode: null, error: expect.stringMatching(new RegExp(`^${x.errorStartsWith!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)) }

describe('dec-issqn-poa package: the three modes in one run', () => {
  let s: Scenario
  let r: PackageRun
  let agents: string[]
  beforeAll(async () => {
    s = seedThreeModes(portal)
    const before = portal.userAgents.length
    r = await run(s.input)
    agents = portal.userAgents.slice(before)
  })

  it('drives a headless browser when the input says headless', () => {
    expect(agents.length).toBeGreaterThan(10)
    expect(agents.every((a) => a.includes('HeadlessChrome'))).toBe(true)
  })

  it('creates, resumes and reprints, printing the items so far after each company and the final result last', () => {
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^AGENT_RESULT_JSON=/)
    const items = s.expected.map((x) => itemOf(x, r.jobDir))
    expect(r.results).toEqual([
      { success: false, total: 3, succeeded: 1, failed: 0, pending: 2, items: items.slice(0, 1) },
      { success: false, total: 3, succeeded: 2, failed: 0, pending: 1, items: items.slice(0, 2) },
      { success: true, total: 3, succeeded: 3, failed: 0, items }
    ])
  })

  it('leaves each period sent exactly once on the portal (a reprint sends nothing)', () => {
    expect(s.companies.map((c) => portal.period(c.cnpj, 2026, 7))).toEqual([
      expect.objectContaining({ status: 'SENT', sends: 1 }),
      expect.objectContaining({ status: 'SENT', sends: 1 }),
      expect.objectContaining({ status: 'SENT', sends: 0 })
    ])
  })

  it('registers each PDF, inside the job folder, with its name and type', () => {
    const items = (r.result as any).items as Array<{ download: string }>
    expect(r.files).toEqual(items.map((i) => ({ path: i.download, fileName: i.download.split('/').at(-1), mimeType: 'application/pdf' })))
    for (const f of r.files) expect(dirname(f.path)).toBe(r.jobDir)
  })

  it('prints declaration, guide and receipt into one PDF that the extraction engine reads as the DEC', async () => {
    const reprinted = s.companies[2]!
    const pdf = new Uint8Array(await readFile(r.files[2]!.path))
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-')
    const result = await extractPdf(pdf)
    expect(result).toMatchObject({ success: true, documentType: 'DEC_ISSQN_POA', engine: { parser: 'dec-issqn-poa', confidenceLevel: 'HIGH' } })
    const data = result.data as any
    expect(data.empresa).toEqual({ cnpj: reprinted.cnpj, razaoSocial: reprinted.razaoSocial, inscricaoMunicipal: reprinted.inscricaoMunicipal })
    expect(data.competencia).toEqual({ ano: 2026, mes: 7, referencia: '2026-07' })
    expect(data.recibo).toEqual({ situacao: 'ENTREGUE', recebidoEm: '2026-08-05T10:22:31-03:00', autenticacao: '8CDF3125A0B1C2D3E4F5061728394A0A' })
    // Default activity: 12.500,00 of revenue, 500,00 deducted, 5% → 600,00 due.
    expect(data.financeiro).toMatchObject({ receitaServicos: 12_500, deducoes: 500, baseCalculo: 12_000, issProprio: 600, totalRecolher: 600 })
    expect(data.guia).toMatchObject({ valorImposto: 600, valorPagar: 600, vencimento: '2026-08-15', linhaDigitavel: expect.stringMatching(/^816\d{45}$/) })
    expect(data.paginas).toEqual({ declaracao: [1], guia: [2], recibo: [3] })
    expect(result.engine.matchedRules).toEqual(expect.arrayContaining(['check:guide-matches-declaration', 'check:barcode-check-digits', 'check:barcode-amount']))
  })

  it('prints the protocol and the company of each receipt, the alphanumeric CNPJ included', async () => {
    for (const [i, c] of s.companies.slice(0, 2).entries()) {
      const pdf = new Uint8Array(await readFile(r.files[i]!.path))
      const text = (await readPdfText(pdf)).map((p) => p.runs.map((run) => run.text).join(' ')).join('\n')
      expect(text).toContain('RECIBO DE ENTREGA - DECLARAÇÃO MENSAL')
      expect(text).toContain(portal.period(c.cnpj, 2026, 7)!.protocolo!)
      expect(text).toContain(c.razaoSocial)
      expect(((await extractPdf(pdf)).data as any).empresa.cnpj).toBe(c.cnpj)
    }
    expect(s.companies[1]!.cnpj).toMatch(/[A-Z]/)
  })

  it('never shows a password: not on stdout, stderr, in the result or a file name', async () => {
    expect(s.passwords.every((p) => p.includes('"'))).toBe(true)
    expectNoSecret(await everything(r), [...s.passwords, ...s.passwords.map((p) => JSON.stringify(p).slice(1, -1))])
  })
})

describe('dec-issqn-poa package: one company failing keeps the others', () => {
  let s: Scenario
  let r: PackageRun
  beforeAll(async () => {
    s = seedFailingMiddle(portal)
    r = await run(s.input)
  })

  it('reports the wrong password and the portal error on their own items, the others sent', () => {
    expect(r.exitCode, r.stderr).toBe(0)
    // Three intermediate results (the failures among them as they came), then the final one.
    expect(r.resultLines).toBe(4)
    expect(r.results[1]).toMatchObject({ success: false, total: 4, succeeded: 1, failed: 1, pending: 2 })
    expect(r.result).toEqual({ success: false, total: 4, succeeded: 2, failed: 2, items: s.expected.map((x) => itemOf(x, r.jobDir)) })
    expect(portal.period(s.companies[1]!.cnpj, 2026, 7)).toBeUndefined()
    expect(portal.period(s.companies[2]!.cnpj, 2026, 7)).toMatchObject({ status: 'OPEN', sends: 0 })
  })

  it('registers files only for the companies that succeeded and leaves no partial file', async () => {
    const names = [s.companies[0]!, s.companies[3]!].map((c) => `dec-${c.cnpj}-2026-07.pdf`)
    expect(r.files.map((f) => f.fileName)).toEqual(names)
    expect((await readdir(r.jobDir)).sort()).toEqual([...names].sort())
  })

  it('shows neither the typed wrong password nor any other', async () => {
    expectNoSecret(await everything(r), s.passwords)
  })

  it('ends a step the portal never answers after the step timeout, and goes on past a 500 at login', async () => {
    const HUNG = { cnpj: cnpjOf('505556660001'), senha: 'Trav@da-55', razaoSocial: 'Portal Travado Ltda', inscricaoMunicipal: '890123-4-5' }
    const DOWN = { cnpj: cnpjOf('507778880001'), senha: 'F0ra-do-Ar', razaoSocial: 'Fora do Ar Ltda', inscricaoMunicipal: '012345-6-7' }
    const AFTER = { cnpj: cnpjOf('506667770001'), senha: 'Dep0is-66', razaoSocial: 'Depois Ltda', inscricaoMunicipal: '901234-5-6' }
    portal.addCompany({ ...HUNG, hangAt: 'periods' })
    portal.addCompany({ ...DOWN, failAt: 'login' })
    portal.addCompany({ ...AFTER, periods: [{ ano: 2025, mes: 12, status: 'SENT' }] })
    const hung = await run({ empresas: [company(HUNG), company(DOWN), company(AFTER, '2025', '12')] }, { DEC_ACTION_TIMEOUT_MS: '5000' })
    expect(hung.exitCode, hung.stderr).toBe(0)
    expect((hung.result as any).items).toEqual([
      { success: false, cnpj: HUNG.cnpj, competencia: '07/2026', download: null, mode: null, error: 'login: the portal did not answer within 5000 ms' },
      { success: false, cnpj: DOWN.cnpj, competencia: '07/2026', download: null, mode: null, error: 'login: the portal answered HTTP 500 (Erro - DecWeb)' },
      { success: true, cnpj: AFTER.cnpj, competencia: '12/2025', download: expect.stringMatching(/-2025-12\.pdf$/), mode: 'REPRINT' }
    ])
  })
})

describe('dec-issqn-poa package: a visible browser', () => {
  it('runs with a window (headless false, slowMo) on a virtual display and still prints the PDF', async () => {
    const x = await startXvfb()
    try {
      const s = seedThreeModes(portal, 2026, 9)
      const before = portal.userAgents.length
      const r = await run({ ...s.input, headless: false, slowMo: 20, empresas: s.input.empresas.slice(1, 2) }, { DISPLAY: x.display })
      expect(r.exitCode, r.stderr).toBe(0)
      expect(r.result).toMatchObject({ success: true, items: [{ mode: 'RESUMED_AND_SENT' }] })
      const agents = portal.userAgents.slice(before)
      expect(agents.length).toBeGreaterThan(3)
      expect(agents.some((a) => a.includes('HeadlessChrome'))).toBe(false)
      expect(((await extractPdf(new Uint8Array(await readFile(r.files[0]!.path)))).data as any).competencia.referencia).toBe('2026-09')
    } finally {
      await x.stop()
    }
  })
})

describe('dec-issqn-poa package: the print when nothing is due', () => {
  it('has no guide page and zero totals, and the engine still reads it as the DEC', async () => {
    const IDLE = { cnpj: cnpjOf('512223330001'), senha: 'Sem-M0vimento', razaoSocial: 'Holding Parada Ltda', inscricaoMunicipal: '121212-1-2' }
    portal.addCompany({ ...IDLE, newPeriodActivities: [{ servico: '17.01 - Assessoria ou consultoria', receitaCents: 0, deducoesCents: 0, aliquotaBp: 500 }] })
    const r = await run({ empresas: [company(IDLE, '2026', '2')] })
    expect(r.result).toMatchObject({ success: true, items: [{ mode: 'CREATED_AND_SENT' }] })
    const result = await extractPdf(new Uint8Array(await readFile(r.files[0]!.path)))
    expect(result).toMatchObject({ success: true, documentType: 'DEC_ISSQN_POA', pages: 2 })
    expect(result.data).toMatchObject({ guia: null, paginas: { declaracao: [1], guia: [], recibo: [2] }, financeiro: { receitaServicos: 0, totalRecolher: 0 }, competencia: { referencia: '2026-02' } })
  })
})

describe('dec-issqn-poa package: input and configuration', () => {
  /** A company the portal does not know (these runs stop before the portal). */
  const NOWHERE = { cnpj: cnpjOf('909090900001'), senha: 'N3nhum-Acesso', razaoSocial: 'Nenhuma Ltda', inscricaoMunicipal: '999999-9-9' }

  it('turns a malformed company into a failed item without opening the portal for it', async () => {
    const GOOD = { cnpj: cnpjOf('601112220001'), senha: 'B0a-Entrada', razaoSocial: 'Boa Ltda', inscricaoMunicipal: '111111-1-1' }
    portal.addCompany({ ...GOOD, periods: [{ ano: 2026, mes: 3, status: 'SENT' }] })
    const before = portal.requests.length
    const badCnpj = `${GOOD.cnpj.slice(0, 13)}${(Number(GOOD.cnpj[13]) + 1) % 10}`
    const r = await run({
      empresas: [
        { ...company(GOOD), cnpj: badCnpj, senha: 'Sigil0-Um' },
        { ...company(GOOD), competenciaMes: '13', senha: 'Sigil0-Dois' },
        { ...company(GOOD), competenciaAno: '26', senha: 'Sigil0-Tres' },
        { ...company(GOOD), senha: '' },
        'not a company',
        company(GOOD, '2026', '03')
      ]
    })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.result).toMatchObject({ success: false, total: 6, succeeded: 1, failed: 5 })
    expect((r.result as any).items).toEqual([
      { success: false, cnpj: badCnpj, competencia: '07/2026', download: null, mode: null, error: 'empresas[0]: cnpj is not a valid CNPJ (14 characters with matching check digits).' },
      { success: false, cnpj: GOOD.cnpj, competencia: '', download: null, mode: null, error: 'empresas[1]: competenciaMes must be a month from 1 to 12.' },
      { success: false, cnpj: GOOD.cnpj, competencia: '', download: null, mode: null, error: 'empresas[2]: competenciaAno must be a 4-digit year (2000 or later).' },
      { success: false, cnpj: GOOD.cnpj, competencia: '07/2026', download: null, mode: null, error: 'empresas[3]: senha is required.' },
      { success: false, cnpj: '', competencia: '', download: null, mode: null, error: 'empresas[4] is not an object.' },
      { success: true, cnpj: GOOD.cnpj, competencia: '03/2026', download: expect.any(String), mode: 'REPRINT' }
    ])
    // Only the valid company logged in.
    expect(portal.requests.slice(before).filter((q) => q.startsWith('POST /login'))).toHaveLength(1)
    expectNoSecret(await everything(r), ['Sigil0-Um', 'Sigil0-Dois', 'Sigil0-Tres', GOOD.senha])
  })

  it.each([
    ['no empresas', { headless: true }, '"empresas" must be a non-empty array of companies.'],
    ['empty empresas', { empresas: [] }, '"empresas" must be a non-empty array of companies.'],
    ['an array', [], 'The input must be a JSON object with an "empresas" array.'],
    ['headless not a boolean', { empresas: [{}], headless: 'yes' }, '"headless" must be a boolean.'],
    ['negative slowMo', { empresas: [{}], slowMo: -1 }, '"slowMo" must be a number of milliseconds from 0 to 5000.']
  ])('refuses a run with %s: exit 1 and a failed result', async (_name, input, error) => {
    const r = await run(input)
    expect(r.exitCode).toBe(1)
    expect(r.resultLines).toBe(1)
    expect(r.result).toEqual({ success: false, total: 0, succeeded: 0, failed: 0, items: [], error })
    expect(r.files).toEqual([])
  })

  it('refuses a configuration without a selector, naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dec-config-'))
    const config = JSON.parse(await readFile(join(PACKAGE_DIR, 'portal.config.json'), 'utf8'))
    delete config.login.password
    await writeFile(join(dir, 'portal.config.json'), JSON.stringify(config))
    const r = await run({ empresas: [company(NOWHERE)] }, { DEC_PORTAL_CONFIG: join(dir, 'portal.config.json') })
    await rm(dir, { recursive: true, force: true })
    expect(r.exitCode).toBe(1)
    expect((r.result as any).error).toMatch(/lacks: login\.password\.$/)
  })

  it('names the selector a page never showed, so a portal change is found in the configuration', async () => {
    const SHIFTED = { cnpj: cnpjOf('913131310001'), senha: 'M0vid@-Sel', razaoSocial: 'Seletor Ltda', inscricaoMunicipal: '131313-1-3' }
    portal.addCompany(SHIFTED)
    const dir = await mkdtemp(join(tmpdir(), 'dec-config-'))
    const config = JSON.parse(await readFile(join(PACKAGE_DIR, 'portal.config.json'), 'utf8'))
    config.periods.ready = '#lista-nova'
    await writeFile(join(dir, 'portal.config.json'), JSON.stringify(config))
    const r = await run({ empresas: [company(SHIFTED)] }, { DEC_PORTAL_CONFIG: join(dir, 'portal.config.json'), DEC_ACTION_TIMEOUT_MS: '4000' })
    await rm(dir, { recursive: true, force: true })
    expect((r.result as any).items[0].error).toBe("login: the page did not show locator('#lista-nova') within 4000 ms (check that selector in the portal configuration)")
  })

  it('fails every company with the reason when the browser cannot start', async () => {
    const r = await run({ empresas: [company(NOWHERE), company(NOWHERE, '2026', '8')] }, { DEC_CHROMIUM_PATH: '/nonexistent/chromium' })
    expect(r.exitCode).toBe(1)
    expect(r.result).toMatchObject({ success: false, total: 2, succeeded: 0, failed: 2, error: 'The browser could not start (/nonexistent/chromium).' })
    expect((r.result as any).items.map((i: any) => i.error)).toEqual([expect.stringMatching(/^The browser could not start: /), expect.stringMatching(/^The browser could not start: /)])
  })

  it('keeps the password out of stderr when the environment asks for Playwright\'s debug log', async () => {
    const DEBUGGED = { cnpj: cnpjOf('801112220001'), senha: 'Dbg-S3nh@-Visivel', razaoSocial: 'Depurada Ltda', inscricaoMunicipal: '333333-3-3' }
    portal.addCompany({ ...DEBUGGED, periods: [{ ano: 2026, mes: 5, status: 'SENT' }] })
    const r = await run({ empresas: [company(DEBUGGED, '2026', '5')] }, { DEBUG: 'pw:api,pw:protocol,pw:browser', DEBUG_FILE: '' })
    expect(r.result).toMatchObject({ success: true, succeeded: 1 })
    expectNoSecret(await everything(r), [DEBUGGED.senha])
  })

  it('prints the items so far and stops when the agent sends SIGTERM', async () => {
    const SLOW = { cnpj: cnpjOf('701112220001'), senha: 'Len7a-Parada', razaoSocial: 'Parada Ltda', inscricaoMunicipal: '222222-2-2' }
    portal.addCompany({ ...SLOW, hangAt: 'login' })
    const r = await run({ empresas: [company(SLOW), company(SLOW, '2026', '8')] }, { DEC_ACTION_TIMEOUT_MS: '60000' }, { stopWhenStderr: /\[1\/2\] 07\/2026 login/ })
    expect(r.exitCode).toBe(143)
    expect(r.resultLines).toBe(1)
    expect(r.result).toMatchObject({ success: false, total: 2, failed: 2, error: 'The run was stopped by a signal.' })
    expectNoSecret(await everything(r), [SLOW.senha])
  })
})
