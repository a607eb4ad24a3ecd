/**
 * Detection rules of the PGDAS-D extract (documents.md §1 "Detection", §10). They run on
 * the detection copy: accents stripped, upper case, one space.
 */
import type { DetectionRule } from '../../core/plugin-api.js'

export const rules: DetectionRule[] = [
  { name: 'title', kind: 'strong', weight: 4, test: /EXTRATO DO SIMPLES NACIONAL/ },
  { name: 'apuracao-label', kind: 'strong', weight: 3, test: /PERIODO DE APURACAO \(PA\):|INFORMACOES DA APURACAO/ },
  { name: 'gerado-em', kind: 'weak', weight: 1, test: /GERADO EM \d{2}\/\d{2}\/\d{4}/ },
  { name: 'apurado-em', kind: 'weak', weight: 1, test: /APURADO EM \d{2}\/\d{2}\/\d{4}/ },
  { name: 'pgdas-version', kind: 'weak', weight: 1, test: /PGDAS-D 2018 VERSAO \d+\.\d+/ },
  { name: 'tipo-apuracao', kind: 'weak', weight: 1, test: /APURACAO (ORIGINAL|RETIFICADORA)/ },
  { name: 'cnpj-basico', kind: 'weak', weight: 1, test: /CNPJ BASICO:/ },
  { name: 'rbt12-row', kind: 'weak', weight: 1, test: /\(RBT12\)/ },
  { name: 'discriminativo', kind: 'weak', weight: 1, test: /DISCRIMINATIVO DE RECEITAS/ },
  { name: 'total-geral', kind: 'weak', weight: 1, test: /TOTAL GERAL DA EMPRESA/ },
  // Neighbours that quote the same words (§1 Exclusion, §10).
  { name: 'receipt-title', kind: 'exclusion', weight: 1, test: /RECIBO DE ENTREGA DA APURACAO NO PGDAS ?-D/ },
  { name: 'declaration-header', kind: 'exclusion', weight: 1, test: (t) => /SIMPLES NACIONAL - DECLARATORIO/.test(t) && /N(?:º|°|O|UMERO)? ?DA DECLARACAO/.test(t) },
  { name: 'das-title-first', kind: 'exclusion', weight: 1, test: (_t, doc) => /^DOCUMENTO DE ARRECADACAO( DO SIMPLES NACIONAL)?$/.test(doc.normalizedLines[0] ?? '') },
  { name: 'payment-receipt', kind: 'exclusion', weight: 1, test: /COMPROVANTE DE (ARRECADACAO|PAGAMENTO)/ },
  { name: 'maed-notification', kind: 'exclusion', weight: 1, test: /NOTIFICACAO DE LANCAMENTO|PGDASD-NOTIFICACAO-MAED/ },
  { name: 'billing-declaration', kind: 'exclusion', weight: 1, test: /DECLARAMOS PARA OS DEVIDOS FINS/ }
]
