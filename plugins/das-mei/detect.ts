/**
 * Detection rules of the DAS-MEI (documents.md §5 "Detection", §4, §10). They run on the
 * detection copy: accents stripped, upper case, one space.
 */
import type { DetectionRule } from '../../core/plugin-api.js'
import { hasSimplesBarcode } from '../_shared/simples-nacional/guide.js'

export const rules: DetectionRule[] = [
  // The DAS title (may be split over two lines; the copy joins them) with PGMEI's version in the
  // observations, or a MEI installment plan's (`DAS do Parcelamento RELPMEI`).
  { name: 'title-and-pgmei', kind: 'strong', weight: 5, test: (t) => /DOCUMENTO DE ARRECADACAO DO SIMPLES NACIONAL/.test(t) && /PGMEI ?\(VERSAO: ?\d|DAS DO PARCELAMENTO \w*MEI\b/.test(t) },
  // A row `0151 INSS - SIMPLES NACIONAL - MEI` (or `0151INSS`, glued by a library), or (text handed over column by column) the
  // column of codes, ending at the next heading, and the MEI denominations printed apart.
  { name: 'mei-rows', kind: 'strong', weight: 4, test: (t) => /\b(?:0151|0083|0125) ?(?:INSS|ICMS|ISS) - SIMPLES NACIONAL - MEI\b/.test(t) || (/\bCODIGO(?: DENOMINACAO)?(?: (?:0151|0083|0125))+\b/.test(t) && /\b(?:INSS|ICMS|ISS) - SIMPLES NACIONAL - MEI\b/.test(t)) },
  { name: 'barcode-issuer-0328', kind: 'weak', weight: 2, test: (t) => hasSimplesBarcode(t) },
  { name: 'guide-labels', kind: 'weak', weight: 1, test: /VALOR TOTAL DO DOCUMENTO|PAGAR ESTE DOCUMENTO ATE/ },
  { name: 'cpf-line', kind: 'weak', weight: 1, test: /\bCPF: ?\d{3}\.\d{3}\.\d{3}-\d{2}\b/ },
  { name: 'tributos-line', kind: 'weak', weight: 1, test: /TRIBUTOS \(R\$\): ?INSS [\d.,]+ ICMS [\d.,]+ ISS [\d.,]+/ },
  { name: 'senda-footer', kind: 'weak', weight: 1, test: /SENDA \(VERSAO: ?\d/ },
  // An RFB document number (§0.4): DAS numbers start with 07, but anonymised samples zero them.
  { name: 'document-number', kind: 'weak', weight: 1, test: /\b\d{2}\.\d{2}\.\d{5}\.\d{7}-\d\b/ },
  // Neighbours (§5 Exclusion, §4, §10).
  { name: 'ordinary-das-codes', kind: 'exclusion', weight: 1, test: /\b10(?:0[1-8]|10) ?[A-Z/]+ - SIMPLES NACIONAL\b(?! - MEI)/ },
  { name: 'payment-receipt', kind: 'exclusion', weight: 1, test: /COMPROVANTE DE (?:ARRECADACAO|PAGAMENTO)|COMPROVAMOS QUE CONSTA/ },
  { name: 'pgdas-extrato', kind: 'exclusion', weight: 1, test: /EXTRATO DO SIMPLES NACIONAL/ },
  { name: 'pgdas-declaration', kind: 'exclusion', weight: 1, test: /PROGRAMA GERADOR DO DOCUMENTO DE ARRECADACAO/ },
  { name: 'darf', kind: 'exclusion', weight: 1, test: /RECEITAS FEDERAIS/ },
  { name: 'esocial-dae', kind: 'exclusion', weight: 1, test: /ESOCIAL/ }
]
