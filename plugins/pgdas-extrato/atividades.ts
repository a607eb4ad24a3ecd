/**
 * Section 3 of the extract: per establishment (`CNPJ Estabelecimento:`), one block per
 * activity (documents.md §1 "Activity block"): `Valor do Débito por Tributo para a
 * Atividade (R$):`, the activity's description (it wraps over several lines), `Receita
 * Bruta Informada: R$ X`, the 9-column tax table, then optional `Parcela N: R$ X`,
 * `Substituição tributária de: ICMS.` and `Tributação monofásica de: COFINS, PIS.` lines.
 * `Totais do Estabelecimento` closes an establishment's activities.
 */
import { MONEY_PATTERN, cnpjChars, moneyNumber, normalizeText } from '../../core/plugin-api.js'
import type { ParseContext, TextRegion } from '../../core/plugin-api.js'
import { readTributos } from '../_shared/simples-nacional/pgdas-tables.js'
import type { Tributos } from '../_shared/simples-nacional/pgdas-tables.js'

export interface Parcela { numero: number, valor: number | null }

export interface Atividade {
  /** The establishment's CNPJ (14 characters), null when its line is not printed. */
  estabelecimento: string | null
  /** The activity as printed (its lines joined): it names the annex's kind of revenue. */
  descricao: string | null
  /** `Receita Bruta Informada`. */
  receita: number | null
  tributos: Tributos | null
  /** `Parcela N: R$ X` lines, in order; [] when none is printed. */
  parcelas: Parcela[]
  /** Taxes named by `Substituição tributária de:` (keys of `tributos`); [] when not printed. */
  substituicaoTributaria: string[]
  /** Taxes named by `Tributação monofásica de:`; [] when not printed. */
  tributacaoMonofasica: string[]
}

const HEADING = /^Valor do Débito por Tributo para a Atividade \(R\$\):?/
const M = `(${MONEY_PATTERN})`
/** Tax names as these sentences print them → the keys of `Tributos`. */
const TAX_NAMES: Record<string, string> = { IRPJ: 'irpj', CSLL: 'csll', COFINS: 'cofins', PIS: 'pis', 'PIS/PASEP': 'pis', 'INSS/CPP': 'inssCpp', CPP: 'inssCpp', ICMS: 'icms', IPI: 'ipi', ISS: 'iss' }

function taxList (block: TextRegion, ctx: ParseContext, field: string, label: RegExp): string[] {
  const hit = block.labelValue(label, /^\s*(.+?)\.?$/)
  const keys = ctx.take(field, hit, (t) => {
    const names = t.split(/\s*,\s*|\s+e\s+/).map((n) => TAX_NAMES[normalizeText(n)])
    return names.every((n) => n !== undefined) ? names as string[] : null
  })
  return keys ?? []
}

/** Every activity block of section 3, establishments in order; [] when none is printed. */
export function readAtividades (section: TextRegion, ctx: ParseContext): Atividade[] {
  const out: Atividade[] = []
  // Blocks before the first `CNPJ Estabelecimento:` (one left out) still count, without one.
  const establishments = section.sections(/^CNPJ Estabelecimento:/)
  const scopes = establishments.length === 0 ? [section] : [section.before(/^CNPJ Estabelecimento:/), ...establishments]
  for (const scope of scopes) {
    // Beside its label or under it, wherever the print puts it.
    const cnpjHit = scope.labelValue(/^CNPJ Estabelecimento:/, /^\s*([0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2})/)
    for (const block of scope.sections(HEADING, [/^Totais do Estabelecimento/])) {
      const f = `atividades.${out.length}`
      // The description: the lines between the heading and the revenue line.
      const end = block.lines.findIndex((l) => /^Receita Bruta Informada:/.test(l.text))
      const descLines = block.lines.slice(1, end < 0 ? 1 : end)
      const first = descLines.length === 0 ? undefined : block.find(/^(.+)$/, { within: descLines[0]!.box, page: descLines[0]!.page })
      const descricao = ctx.take(`${f}.descricao`, first, () => descLines.map((l) => l.text).join(' ').replace(/\s+/g, ' ').trim() || null)
      out.push({
        estabelecimento: ctx.take(`${f}.estabelecimento`, cnpjHit, cnpjChars),
        descricao,
        receita: ctx.take(`${f}.receita`, block.labelValue(/^Receita Bruta Informada:/, new RegExp(`^\\s*(?:R\\$\\s*)?${M}`)), moneyNumber),
        tributos: readTributos(block, ctx, `${f}.tributos`, /^Receita Bruta Informada:/),
        parcelas: block.findAll(new RegExp(`^Parcela (\\d+):\\s*(?:R\\$\\s*)?${M}`)).map((h, i) => ({
          numero: Number(h.parts[0]!.value),
          valor: ctx.take(`${f}.parcelas.${i}.valor`, h.parts[1], moneyNumber)
        })),
        substituicaoTributaria: taxList(block, ctx, `${f}.substituicaoTributaria`, /^Substituição tributária de:/),
        tributacaoMonofasica: taxList(block, ctx, `${f}.tributacaoMonofasica`, /^Tributação monofásica de:/)
      })
    }
  }
  return out
}
