/**
 * The DEC package run as the agent runs it (fixtures/automations/run-package.ts) in headless
 * Chromium against the local portal (fixtures/automations/dec-portal.ts).
 */
import { readFile, readdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { extractPdf } from '../../../fixtures/extraction/plugin-cases.js'
import { readPdfText } from '../../../core/extraction/index.js'
import { startDecPortal } from '../../../fixtures/automations/dec-portal.js'
import type { DecPortal } from '../../../fixtures/automations/dec-portal.js'
import { readDescriptor, runPackage } from '../../../fixtures/automations/run-package.js'
import type { PackageRun } from '../../../fixtures/automations/run-package.js'

const PACKAGE_DIR = dirname(fileURLToPath(import.meta.url))

/** A valid CNPJ (numeric or alphanumeric) from its first 12 characters. */
function cnpjOf (root12: string): string {
  const dv = (s: string): number => {
    let sum = 0
    let w = 2
    for (let i = s.length - 1; i >= 0; i--) { sum += (s.charCodeAt(i) - 48) * w; w = w === 9 ? 2 : w + 1 }
    const r = sum % 11
    return r < 2 ? 0 : 11 - r
  }
  const d1 = dv(root12)
  return `${root12}${d1}${dv(root12 + d1)}`
}

const CREATED = { cnpj: cnpjOf('112223330001'), senha: 'Cr1ad@-S3nha!"quote', razaoSocial: 'Clínica Bem Estar Ltda', inscricaoMunicipal: '123456-7-8' }
const RESUMED = { cnpj: cnpjOf('12ABC3450001'), senha: 'Retom@da-77xq', razaoSocial: 'Tecnologia Guaíba Serviços Ltda', inscricaoMunicipal: '234567-8-9' }
const REPRINTED = { cnpj: cnpjOf('445556660001'), senha: 'Reimpr3ss@o-k9', razaoSocial: 'Escritório Moinhos Consultoria S/S', inscricaoMunicipal: '345678-9-0' }

const company = (c: { cnpj: string, senha: string, razaoSocial: string, inscricaoMunicipal: string }, ano = '2026', mes = '7') =>
  ({ razaoSocial: c.razaoSocial, cnpj: c.cnpj, senha: c.senha, inscricaoMunicipal: c.inscricaoMunicipal, competenciaAno: ano, competenciaMes: mes })

let portal: DecPortal
const runs: PackageRun[] = []
const run = async (input: unknown, env: Record<string, string> = {}, options: { stopAfterMs?: number } = {}): Promise<PackageRun> => {
  const r = await runPackage(PACKAGE_DIR, input, { env: { DEC_PORTAL_URL: portal.url, ...env }, timeoutMs: 120_000, ...options })
  runs.push(r)
  return r
}
/** Every byte a run showed: both streams, the result line, the output file names. */
const everything = async (r: PackageRun): Promise<string> => [r.stdout, r.stderr, JSON.stringify(r.result), ...(await readdir(r.jobDir))].join('\n')

beforeAll(async () => { portal = await startDecPortal() })
afterAll(async () => {
  await portal.close()
  for (const r of runs) await r.cleanup()
})

describe('dec-issqn-poa package: descriptor', () => {
  it('declares the agent contract: schema 1.0, a node command, 10 minutes, queued singleton', async () => {
    expect(await readDescriptor(PACKAGE_DIR)).toEqual({
      schemaVersion: '1.0',
      id: 'dec-issqn-poa',
      name: expect.any(String),
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      enabled: true,
      command: ['node', 'main.mjs'],
      timeoutMs: 600_000,
      singleton: true
    })
  })
})

describe('dec-issqn-poa package: the three modes in one run', () => {
  let r: PackageRun
  beforeAll(async () => {
    portal.addCompany(CREATED)
    portal.addCompany({ ...RESUMED, periods: [{ ano: 2026, mes: 7, status: 'OPEN' }, { ano: 2026, mes: 6, status: 'SENT' }] })
    portal.addCompany({ ...REPRINTED, periods: [{ ano: 2026, mes: 7, status: 'SENT', recebidoEm: new Date('2026-08-05T13:22:31Z'), autenticacao: '8CDF3125A0B1C2D3E4F5061728394A0A' }] })
    r = await run({ headless: true, slowMo: 0, empresas: [company(CREATED), company(RESUMED), company(REPRINTED)] })
  })

  it('creates, resumes and reprints, and ends with one result line', () => {
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.resultLines).toBe(1)
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(/^AGENT_RESULT_JSON=/)
    expect(r.result).toEqual({
      success: true,
      total: 3,
      succeeded: 3,
      failed: 0,
      items: [
        { success: true, cnpj: CREATED.cnpj, competencia: '07/2026', download: expect.stringMatching(new RegExp(`/dec-${CREATED.cnpj}-2026-07\\.pdf$`)), mode: 'CREATED_AND_SENT' },
        { success: true, cnpj: RESUMED.cnpj, competencia: '07/2026', download: expect.stringMatching(/\.pdf$/), mode: 'RESUMED_AND_SENT' },
        { success: true, cnpj: REPRINTED.cnpj, competencia: '07/2026', download: expect.stringMatching(/\.pdf$/), mode: 'REPRINT' }
      ]
    })
  })

  it('leaves each period sent exactly once on the portal (a reprint sends nothing)', () => {
    expect(portal.period(CREATED.cnpj, 2026, 7)).toMatchObject({ status: 'SENT', sends: 1 })
    expect(portal.period(RESUMED.cnpj, 2026, 7)).toMatchObject({ status: 'SENT', sends: 1 })
    expect(portal.period(REPRINTED.cnpj, 2026, 7)).toMatchObject({ status: 'SENT', sends: 0 })
    expect(portal.period(RESUMED.cnpj, 2026, 6)).toMatchObject({ status: 'SENT', sends: 0 })
  })

  it('registers each PDF, inside the job folder, with its name and type', () => {
    const items = (r.result as any).items as Array<{ download: string }>
    expect(r.files).toEqual(items.map((i) => ({ path: i.download, fileName: i.download.split('/').at(-1), mimeType: 'application/pdf' })))
    for (const f of r.files) expect(dirname(f.path)).toBe(r.jobDir)
  })

  it('prints declaration, guide and receipt into one PDF that the extraction engine reads as the DEC', async () => {
    const pdf = new Uint8Array(await readFile(r.files[2]!.path))
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-')
    const result = await extractPdf(pdf)
    expect(result).toMatchObject({ success: true, documentType: 'DEC_ISSQN_POA', engine: { parser: 'dec-issqn-poa', confidenceLevel: 'HIGH' } })
    const data = result.data as any
    expect(data.empresa).toEqual({ cnpj: REPRINTED.cnpj, razaoSocial: REPRINTED.razaoSocial, inscricaoMunicipal: REPRINTED.inscricaoMunicipal })
    expect(data.competencia).toEqual({ ano: 2026, mes: 7, referencia: '2026-07' })
    expect(data.recibo).toEqual({ situacao: 'ENTREGUE', recebidoEm: '2026-08-05T10:22:31-03:00', autenticacao: '8CDF3125A0B1C2D3E4F5061728394A0A' })
    // Default activity: 12.500,00 of revenue, 500,00 deducted, 5% → 600,00 due.
    expect(data.financeiro).toMatchObject({ receitaServicos: 12_500, deducoes: 500, baseCalculo: 12_000, issProprio: 600, totalRecolher: 600 })
    expect(data.guia).toMatchObject({ valorImposto: 600, valorPagar: 600, vencimento: '2026-08-15', linhaDigitavel: expect.stringMatching(/^816\d{45}$/) })
    expect(data.paginas).toEqual({ declaracao: [1], guia: [2], recibo: [3] })
    expect(result.engine.matchedRules).toEqual(expect.arrayContaining(['check:guide-matches-declaration', 'check:barcode-check-digits', 'check:barcode-amount']))
  })

  it('prints the protocol and the company of each receipt, the alphanumeric CNPJ included', async () => {
    for (const [i, c] of [CREATED, RESUMED].entries()) {
      const text = (await readPdfText(new Uint8Array(await readFile(r.files[i]!.path)))).map((p) => p.runs.map((run) => run.text).join(' ')).join('\n')
      expect(text).toContain('RECIBO DE ENTREGA - DECLARAÇÃO MENSAL')
      expect(text).toContain(portal.period(c.cnpj, 2026, 7)!.protocolo!)
      expect(text).toContain(c.razaoSocial)
    }
  })

  it('never shows a password: not on stdout, stderr, in the result or a file name', async () => {
    const all = await everything(r)
    for (const c of [CREATED, RESUMED, REPRINTED]) expect(all).not.toContain(c.senha)
    expect(all).not.toContain('Cr1ad@-S3nha!\\"quote')
  })
})
