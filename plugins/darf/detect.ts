/**
 * Detection rules of the DARF (documents.md §6 "Detection", §10). They run on the
 * detection copy: accents stripped, upper case, one space.
 */
import { readCollectionLine } from '../../core/plugin-api.js'
import type { DetectionRule } from '../../core/plugin-api.js'
import { DARF_ISSUERS } from './checks.js'

/** Every 48-digit collection line of the text (blocks of 11 digits, each check digit after a space or a dash). */
const LINES = /\b\d{11}[ -]?\d \d{11}[ -]?\d \d{11}[ -]?\d \d{11}[ -]?\d\b/g

/** The title broken after "Arrecadação" or "Receitas", its parts whole lines. */
function splitTitle (lines: readonly string[]): boolean {
  return (lines.includes('DOCUMENTO DE ARRECADACAO') && lines.includes('DE RECEITAS FEDERAIS')) ||
    (lines.includes('DOCUMENTO DE ARRECADACAO DE RECEITAS') && lines.includes('FEDERAIS'))
}

export const rules: DetectionRule[] = [
  // The title may break after "Arrecadação" (SENDA) or after "Receitas" (numbered boxes), with
  // words of another column between the parts in reading order.
  // Text whose positions are lost (each piece a line, another library's column order): the
  // title's two lines handed over apart, each a piece of its own.
  { name: 'title', kind: 'strong', weight: 4, test: (t, doc) => /DOCUMENTO DE ARRECADACAO (?:\S+ ){0,6}?DE RECEITAS (?:\S+ ){0,8}?FEDERAIS/.test(t) || (doc.positionless && splitTitle(doc.normalizedLines)) },
  { name: 'composition-or-revenue-box', kind: 'strong', weight: 3, test: /COMPOSICAO DO DOCUMENTO DE ARRECADACAO|CODIGO DA RECEITA/ },
  { name: 'valor-total', kind: 'weak', weight: 1, test: /VALOR TOTAL/ },
  { name: 'periodo-apuracao', kind: 'weak', weight: 1, test: /PERIODO DE APURACAO/ },
  { name: 'data-vencimento', kind: 'weak', weight: 1, test: /DATA DE VENCIMENTO/ },
  { name: 'darf-senda-or-sicalc', kind: 'weak', weight: 1, test: /\bDARF\b|\bSENDA\b|SICALC/ },
  { name: 'barcode-issuer', kind: 'weak', weight: 2, test: (t) => [...t.matchAll(LINES)].some((m) => DARF_ISSUERS.includes(readCollectionLine(m[0])?.issuer ?? '')) },
  // Neighbours (documents.md §6 Exclusion, §10).
  { name: 'das-title', kind: 'exclusion', weight: 1, test: /DOCUMENTO DE ARRECADACAO DO SIMPLES NACIONAL/ },
  { name: 'payment-receipt', kind: 'exclusion', weight: 1, test: /COMPROVANTE DE (?:ARRECADACAO|PAGAMENTO)|COMPROVAMOS QUE CONSTA/ },
  { name: 'gps', kind: 'exclusion', weight: 1, test: /GUIA DA PREVIDENCIA SOCIAL|\bGPS\b/ },
  { name: 'dctfweb-report', kind: 'exclusion', weight: 1, test: /RELATORIO DA DECLARACAO COMPLETA/ }
]
