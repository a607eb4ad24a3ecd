/**
 * Detection rules of the DAS (documents.md §4 "Detection", §10). They run on the detection
 * copy: accents stripped, upper case, one space.
 */
import type { DetectionRule } from '../../core/plugin-api.js'
import { hasSimplesBarcode } from '../_shared/simples-nacional/guide.js'

export const rules: DetectionRule[] = [
  // §4: the title plus at least one guide label. The title may be split over two lines;
  // the detection copy joins lines with a space.
  { name: 'title-and-label', kind: 'strong', weight: 5, test: (t) => /DOCUMENTO DE ARRECADACAO DO SIMPLES NACIONAL/.test(t) && /VALOR TOTAL DO DOCUMENTO|COMPOSICAO DO DOCUMENTO DE ARRECADACAO|PAGAR ESTE DOCUMENTO ATE|NUMERO: .*PAGAR ATE:/.test(t) },
  { name: 'barcode-issuer-0328', kind: 'strong', weight: 3, test: (t) => hasSimplesBarcode(t) },
  // A row `1001 IRPJ - SIMPLES NACIONAL` (the code glued to its name where a library joins the
  // two pieces: `1001IRPJ`), or (text handed over column by column) the column of
  // codes, two or more in a row, and the denominations printed apart.
  { name: 'composition-codes', kind: 'weak', weight: 2, test: (t) => /\b10(?:0[1-8]|10) ?[A-Z/]+ - SIMPLES NACIONAL\b(?! - MEI)/.test(t) || (/\b10(?:0[1-8]|10)(?: 10(?:0[1-8]|10)){1,}\b/.test(t) && /\b[A-Z/]+ - SIMPLES NACIONAL\b(?! - MEI)/.test(t)) },
  // An RFB document number (§0.4): DAS numbers start with 07, but anonymised samples zero them.
  { name: 'document-number', kind: 'weak', weight: 1, test: /\b\d{2}\.\d{2}\.\d{5}\.\d{7}-\d\b/ },
  { name: 'senda-footer', kind: 'weak', weight: 1, test: /SENDA \(VERSAO: ?\d/ },
  { name: 'autenticacao-mecanica', kind: 'weak', weight: 1, test: /AUTENTICACAO MECANICA/ },
  { name: 'pix', kind: 'weak', weight: 1, test: /PAGUE COM O PIX/ },
  // Neighbours (§4 Exclusion, §10). DAS-MEI is a plugin of its own.
  { name: 'mei', kind: 'exclusion', weight: 1, test: /PGMEI|SIMPLES NACIONAL - MEI|\b(?:0151|0083|0125) (?:INSS|ICMS|ISS)\b/ },
  { name: 'payment-receipt', kind: 'exclusion', weight: 1, test: /COMPROVANTE DE (?:ARRECADACAO|PAGAMENTO)|COMPROVAMOS QUE CONSTA/ },
  { name: 'pgdas-extrato', kind: 'exclusion', weight: 1, test: /EXTRATO DO SIMPLES NACIONAL/ },
  { name: 'pgdas-declaration', kind: 'exclusion', weight: 1, test: /PROGRAMA GERADOR DO DOCUMENTO DE ARRECADACAO/ },
  { name: 'darf', kind: 'exclusion', weight: 1, test: /RECEITAS FEDERAIS/ },
  { name: 'esocial-dae', kind: 'exclusion', weight: 1, test: /ESOCIAL/ }
]
