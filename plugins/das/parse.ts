/**
 * Parser of the DAS of the Simples Nacional (documents.md §4): the guide PGDAS-D issues and
 * the installment-plan guide ("DAS de PARCSN", subtype PARCELAMENTO). The guide layout is
 * read by guide.ts; this adds the header identity and the installment data.
 */
import type { ParseContext, TextDocument } from '../../core/plugin-api.js'
import { readGuia, readIdentity } from '../_shared/simples-nacional/guide.js'
import type { Guia } from '../_shared/simples-nacional/guide.js'

export type { Guia, LinhaComposicao, Totais } from '../_shared/simples-nacional/guide.js'

export interface Parcelamento {
  /** `Número do Parcelamento:` */
  numero: number | null
  /** `Parcela: n/m`, n. */
  parcela: number | null
  /** `Parcela: n/m`, m. */
  totalParcelas: number | null
}

export interface Das extends Guia {
  cnpj: string | null
  razaoSocial: string | null
  /** `PARCELAMENTO` when the observations say `DAS de PARCSN`, else `NORMAL`. */
  subtipo: 'NORMAL' | 'PARCELAMENTO'
  /** Null unless the guide is an installment. */
  parcelamento: Parcelamento | null
}

const int = (t: string): number | null => /^\d+$/.test(t) ? Number(t) : null

export function parseDas (doc: TextDocument, ctx: ParseContext): Das {
  const identity = readIdentity(doc, ctx)
  const guia = readGuia(doc, ctx)
  // `DAS de PARCSN`, `DAS do Parcelamento RELPSN`: an installment plan's guide.
  const parcsn = doc.find(/(DAS (?:de PARCSN|do Parcelamento)\b)/i)
  if (parcsn !== undefined) ctx.cite('subtipo', parcsn)
  const numero = doc.find(/Número do Parcelamento: ?(\d+)/)
  const parcela = doc.find(/Parcela: ?(\d+) ?\/ ?(\d+)/)
  return {
    ...identity,
    ...guia,
    subtipo: parcsn === undefined ? 'NORMAL' : 'PARCELAMENTO',
    parcelamento: parcsn === undefined
      ? null
      : {
          numero: ctx.take('parcelamento.numero', numero, int),
          parcela: ctx.take('parcelamento.parcela', parcela?.parts[0], int),
          totalParcelas: ctx.take('parcelamento.totalParcelas', parcela?.parts[1], int)
        }
  }
}
