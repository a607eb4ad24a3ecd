/**
 * Parser of the DAS-MEI (documents.md §5): the SENDA guide PGMEI prints, one month per
 * page; an annual file (`DAS-PGMEI-<CNPJ>-AC<ano>.pdf`) holds several months, each page a
 * guide of its own with its own number and collection line. The guide layout is read by
 * guide.ts, page by page.
 */
import { MONEY_PATTERN, moneyNumber, onlyDigits } from '../../core/plugin-api.js'
import type { ParseContext, TextDocument } from '../../core/plugin-api.js'
import { readGuia, readIdentity } from '../_shared/simples-nacional/guide.js'
import type { Guia } from '../_shared/simples-nacional/guide.js'

export type { Guia, LinhaComposicao, Totais } from '../_shared/simples-nacional/guide.js'

/** `Tributos (R$): INSS x ICMS y ISS z` of the observations (all three, zeros included). */
export interface TributosMei { inss: number | null, icms: number | null, iss: number | null }

export interface GuiaMei extends Guia {
  tributosMei: TributosMei | null
}

export interface DasMei {
  cnpj: string | null
  /** For a MEI, the owner's name followed by the CPF digits. */
  razaoSocial: string | null
  /** The owner's CPF, 11 digits (`CPF:` of the observations). */
  cpf: string | null
  /** `PGMEI(Versao:x.y.z)` of the observations. */
  versaoPgmei: string | null
  /** One guide per month, in page order. */
  guias: GuiaMei[]
}

const M = `(${MONEY_PATTERN})`
const HEADER = /Período de Apuração Data de Vencimento Número do Documento/

export function parseDasMei (doc: TextDocument, ctx: ParseContext): DasMei {
  const identity = readIdentity(doc, ctx)
  const guias: GuiaMei[] = []
  for (let page = 1; page <= doc.pageCount; page++) {
    // Positions lost (text handed over column by column): the header's labels each a line of their own.
    const alone = doc.positionless && doc.find(/^Período de Apuração$/, { page }) !== undefined && doc.find(/^Número do Documento$/, { page }) !== undefined
    if (doc.find(HEADER, { page }) === undefined && !alone) continue
    const prefix = `guias.${guias.length}.`
    const tributos = doc.find(new RegExp(`Tributos \\(R\\$\\): ?INSS ${M} ICMS ${M} ISS ${M}`), { page })
    const money = (k: keyof TributosMei, i: number): number | null => ctx.take(`${prefix}tributosMei.${k}`, tributos?.parts[i], moneyNumber)
    const guia = readGuia(doc, ctx, { page }, prefix)
    // The PGMEI's observations start with the owner's `CPF:`. Positions lost, a page whose
    // `CPF:` line was handed over elsewhere (a library that draws it last, glued to other
    // digits) gives observations read without it: a part of the box, not its text.
    const cpfLine = doc.positionless ? doc.find(/(?<!\p{L})CPF: ?\d{3}\.\d{3}\.\d{3}-\d{2}/u, { page }) : undefined
    if (guia.observacoes !== null && cpfLine !== undefined && !/(?<!\p{L})CPF:/u.test(guia.observacoes)) {
      ctx.report({ code: 'LABEL_VALUE_CONFLICT', field: `${prefix}observacoes`, message: `${prefix}observacoes: the text whose positions are lost prints the owner's CPF (${cpfLine.value}) apart from the observations read after their label ("${guia.observacoes}"); the box's whole text is not known, so it is not given.` })
      guia.observacoes = null
    }
    guias.push({
      ...guia,
      tributosMei: tributos === undefined ? null : { inss: money('inss', 0), icms: money('icms', 1), iss: money('iss', 2) }
    })
  }
  if (guias.length === 0) throw new Error('no DAS-MEI guide header on any page')
  return {
    ...identity,
    cpf: ctx.take('cpf', doc.find(/CPF: ?(\d{3}\.\d{3}\.\d{3}-\d{2})/), onlyDigits),
    versaoPgmei: ctx.take('versaoPgmei', doc.find(/PGMEI ?\(Vers[aã]o: ?(\d+(?:\.\d+)+)\)/), (t) => t),
    guias
  }
}
