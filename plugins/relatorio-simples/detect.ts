/**
 * Detection rules of the accounting-software "Relatório do Simples" (documents.md §3
 * "Detection", §10). They run on the detection copy (accents stripped, upper case, one
 * space); installations that lose accents print `Emiss?o`, so accented letters are `.`.
 */
import type { DetectionRule, TextDocument } from '../../core/plugin-api.js'

/** True when a line of the document, in detection form, matches `title`. */
const titleLine = (doc: TextDocument, title: RegExp): boolean => doc.normalizedLines.some((l) => title.test(l))

export const rules: DetectionRule[] = [
  { name: 'a-recolher', kind: 'strong', weight: 3, test: /SIMPLES NACIONAL A RECOLHER:/ },
  { name: 'receita-tributada', kind: 'strong', weight: 3, test: /RECEITA TRIBUTADA TOTAL:/ },
  // The heading is a line of its own (the phrase alone is in every neighbour).
  { name: 'heading', kind: 'weak', weight: 1, test: (_t, doc) => doc.normalizedLines.includes('SIMPLES NACIONAL') },
  { name: 'header', kind: 'weak', weight: 1, test: (t) => /EMPRESA:/.test(t) && /EMISS.O:/.test(t) && /P.GINA:/.test(t) },
  { name: 'periodo', kind: 'weak', weight: 1, test: /PER.ODO: \d{2}\/\d{4}/ },
  { name: 'rpa-label', kind: 'weak', weight: 1, test: /RECEITA BRUTA DO PER.ODO DE APURA..O \(RPA\)/ },
  { name: 'total-receitas', kind: 'weak', weight: 1, test: /TOTAL DE RECEITAS BRUTAS/ },
  { name: 'faixa', kind: 'weak', weight: 1, test: /FAIXA DE ENQUADRAMENTO:/ },
  { name: 'anexo', kind: 'weak', weight: 1, test: /ANEXO: ANEXO [IV]+\b/ },
  { name: 'secao-tabela', kind: 'weak', weight: 1, test: (t) => /SE..O:/.test(t) && /TABELA:/.test(t) },
  { name: 'partilha', kind: 'weak', weight: 1, test: /PARTILHA:/ },
  { name: 'licenciado', kind: 'weak', weight: 1, test: /SISTEMA LICENCIADO PARA/ },
  // The official documents' titles exclude (§1, §2, §4, §5, §8a). A title is a line of its own, so a
  // report that merely mentions the DAS is not refused.
  { name: 'pgdas-extrato-title', kind: 'exclusion', weight: 1, test: (_t, doc) => titleLine(doc, /^EXTRATO DO SIMPLES NACIONAL$/) },
  { name: 'pgdas-declaracao-title', kind: 'exclusion', weight: 1, test: /DOCUMENTO DE ARRECADACAO DO SIMPLES NACIONAL - DECLARATORIO/ },
  { name: 'das-title', kind: 'exclusion', weight: 1, test: (_t, doc) => titleLine(doc, /^DOCUMENTO DE ARRECADACAO(?: DO SIMPLES NACIONAL)?$/) },
  { name: 'das-mei', kind: 'exclusion', weight: 1, test: /PGMEI|SIMPLES NACIONAL - MEI/ },
  // The receipt's title as the receipt's detector reads it, `PGDAS -D` split by some libraries included.
  { name: 'pgdas-receipt', kind: 'exclusion', weight: 1, test: /RECIBO DE ENTREGA DA APURACAO NO PGDAS ?-D/ }
]
