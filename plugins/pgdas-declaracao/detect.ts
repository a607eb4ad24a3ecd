/**
 * Detection rules of the PGDAS-D declaration (documents.md §2 "Detection", §10). They run
 * on the detection copy: accents stripped, upper case, one space.
 *
 * A combined declaration+receipt file (the receipt printed as a further page) is NOT
 * excluded here: it is reported as the declaration, with a `PGDAS_COMBINED_RECEIPT`
 * warning naming the receipt's page (parse.ts); the receipt plugin excludes it.
 */
import type { DetectionRule, TextDocument } from '../../core/plugin-api.js'

/** A line that starts with the extract's title (a mention inside a sentence does not count). */
const extractTitleLine = (_t: string, doc: TextDocument): boolean => doc.normalizedLines.some((l) => l.startsWith('EXTRATO DO SIMPLES NACIONAL'))

export const rules: DetectionRule[] = [
  { name: 'header', kind: 'strong', weight: 4, test: /PROGRAMA GERADOR DO DOCUMENTO DE ARRECADACAO DO SIMPLES NACIONAL - DECLARATORIO/ },
  { name: 'numero-declaracao', kind: 'weak', weight: 2, test: /(?:N[º°O]\.?|NUMERO) DA DECLARACAO: ?\d{17}\b/ },
  { name: 'tipo-declaracao', kind: 'weak', weight: 1, test: /DECLARACAO (ORIGINAL|RETIFICADORA)/ },
  { name: 'periodo-range', kind: 'weak', weight: 1, test: /PERIODO DE APURACAO: \d{2}\/\d{2}\/\d{4} A \d{2}\/\d{2}\/\d{4}/ },
  { name: 'cnpj-matriz', kind: 'weak', weight: 1, test: /CNPJ MATRIZ:/ },
  { name: 'resumo-declaracao', kind: 'weak', weight: 1, test: /RESUMO DA DECLARACAO/ },
  { name: 'recepcao', kind: 'weak', weight: 1, test: /INFORMACOES DA RECEPCAO DA DECLARACAO/ },
  { name: 'total-geral', kind: 'weak', weight: 1, test: /TOTAL GERAL DA EMPRESA/ },
  { name: 'rbt12-row', kind: 'weak', weight: 1, test: /\(RBT12\)/ },
  // Neighbours (§2 Exclusion, §10): the MAED fine notification says "Período de Apuração" too;
  // a file whose line starts with the extract's title is the extract (§1).
  { name: 'maed-notification', kind: 'exclusion', weight: 1, test: /NOTIFICACAO DE LANCAMENTO|PGDASD-NOTIFICACAO-MAED|MULTA POR ATRASO NA ENTREGA/ },
  { name: 'extract-title', kind: 'exclusion', weight: 1, test: extractTitleLine }
]
