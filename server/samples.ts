/**
 * `razao samples DIR`: files to try every main job on, made by the generators the tests
 * use (seeded, so every run writes the same content): ledgers for the import service,
 * one PDF of each document type the extraction service knows, a PDF to sign. Nothing
 * in them is real: the companies, CNPJs and amounts are invented, with valid check digits.
 *
 * The one server module that reaches fixtures/ and the plugins' fixture generators (the
 * lint rule allows it here alone): they are compiled into dist/ with it, and loaded only
 * when this command runs.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateLedger } from '../fixtures/ledger/generate.js'
import { makeTextPdf } from '../fixtures/pdf/samples.js'
import { generateDarf } from '../plugins/darf/fixtures/generate.js'
import { generateDas } from '../plugins/das/fixtures/generate.js'
import { generateDasMei } from '../plugins/das-mei/fixtures/generate.js'
import { generateDec } from '../plugins/dec-issqn-poa/fixtures/generate.js'
import { generateDanfse } from '../plugins/nfse-danfse/fixtures/generate.js'
import { generateDeclaracao } from '../plugins/pgdas-declaracao/fixtures/generate.js'
import { generateExtrato } from '../plugins/pgdas-extrato/fixtures/generate.js'
import { generateRecibo } from '../plugins/pgdas-recibo/fixtures/generate.js'
import { generateRelatorio } from '../plugins/relatorio-simples/fixtures/generate.js'

export interface Sample {
  file: string
  /** What to try it on, for the listing the command prints. */
  use: string
}

/** The seed of every generator: the same files on every run. */
const SEED = 2024

/** One PDF per document type, by the type's name as /api/v1/pdf/extract answers it. */
const DOCUMENTS: ReadonlyArray<readonly [documentType: string, make: () => Promise<{ pdf: Uint8Array }>]> = [
  ['DARF', () => generateDarf({ seed: SEED })],
  ['DAS', () => generateDas({ seed: SEED })],
  ['DAS_MEI', () => generateDasMei({ seed: SEED })],
  ['DEC_ISSQN_POA', () => generateDec({ seed: SEED })],
  ['NFSE_DANFSE', () => generateDanfse({ seed: SEED })],
  ['PGDAS_DECLARACAO', () => generateDeclaracao({ seed: SEED })],
  ['PGDAS_EXTRATO', () => generateExtrato({ seed: SEED })],
  ['PGDAS_RECIBO', () => generateRecibo({ seed: SEED })],
  ['RELATORIO_SIMPLES', () => generateRelatorio({ seed: SEED })]
]

export const SAMPLE_DOCUMENT_TYPES: readonly string[] = DOCUMENTS.map(([type]) => type)

/** The file name of the sample of a document type: `PGDAS_EXTRATO` → `PGDAS-EXTRATO.pdf`. */
export const documentSampleName = (documentType: string): string => `${documentType.replaceAll('_', '-')}.pdf`

export const LEDGER_SAMPLES = {
  balanced: { file: 'razao-2024-03.xlsx', rows: 10_000 },
  unbalanced: { file: 'razao-2024-03-desbalanceado.xlsx', rows: 2_000, unbalancedGroups: 4 },
  legacy: { file: 'razao-2024-03.xls', rows: 2_000 }
} as const

export const SIGN_SAMPLE = 'contrato.pdf'

export async function writeSamples (dir: string): Promise<Sample[]> {
  await mkdir(dir, { recursive: true })
  const { balanced, unbalanced, legacy } = LEDGER_SAMPLES
  await generateLedger({ path: join(dir, balanced.file), format: 'xlsx', rows: balanced.rows, seed: SEED })
  await generateLedger({ path: join(dir, unbalanced.file), format: 'xlsx', rows: unbalanced.rows, seed: SEED + 1, unbalancedGroups: unbalanced.unbalancedGroups })
  await generateLedger({ path: join(dir, legacy.file), format: 'xls', rows: legacy.rows, seed: SEED + 2 })
  const samples: Sample[] = [
    { file: balanced.file, use: `a balanced ledger of ${balanced.rows} rows: POST /v1/analyze, /v1/process; razao analyze, razao import` },
    { file: unbalanced.file, use: `a ledger with ${unbalanced.unbalancedGroups} unbalanced groups: POST /v1/diagnose-unbalanced; razao diagnose` },
    { file: legacy.file, use: 'the same kind of ledger as a legacy Excel 97-2003 file: POST /v1/analyze' }
  ]
  for (const [documentType, make] of DOCUMENTS) {
    const file = documentSampleName(documentType)
    await writeFile(join(dir, file), (await make()).pdf)
    samples.push({ file, use: `a ${documentType}: POST /api/v1/pdf/extract; razao extract` })
  }
  await writeFile(join(dir, SIGN_SAMPLE), await makeTextPdf(2))
  samples.push({ file: SIGN_SAMPLE, use: 'a two-page PDF to sign: POST /api/v1/sign (Base64 in pdfBase64)' })
  return samples
}
