/**
 * Detection rules of Porto Alegre's monthly ISSQN declaration (documents.md §9 "Detection").
 * Both strong markers are required, so they form one rule: a Porto Alegre guide of another
 * tax, or another city's declaration, is then no candidate at all.
 */
import type { DetectionRule } from '../../core/plugin-api.js'

export const rules: DetectionRule[] = [
  { name: 'poa-declaracao-mensal', kind: 'strong', weight: 5, test: (t) => /PREFEITURA (?:MUNICIPAL )?DE PORTO ALEGRE/.test(t) && /DECLARACAO MENSAL - ISSQN/.test(t) },
  { name: 'recibo-title', kind: 'weak', weight: 1, test: /RECIBO DE ENTREGA - DECLARACAO MENSAL/ },
  { name: 'smf', kind: 'weak', weight: 1, test: /SECRETARIA MUNICIPAL DA FAZENDA/ },
  { name: 'recebida-em', kind: 'weak', weight: 1, test: /DECLARACAO RECEBIDA EM \d{2}\/\d{2}\/\d{4}/ },
  { name: 'responsabilidade-propria', kind: 'weak', weight: 1, test: /IMPOSTO (?:DE )?RESPONSABILIDADE PROPRIA/ },
  { name: 'declarante', kind: 'weak', weight: 1, test: /IDENTIFICACAO DO DECLARANTE/ },
  { name: 'total-geral', kind: 'weak', weight: 1, test: /TOTAL GERAL A RECOLHER/ },
  // The guide is optional (no guide when nothing is due), so it weighs less than its absence would cost.
  { name: 'guia-title', kind: 'weak', weight: 0.5, test: /GUIA PARA PAGAMENTO DE ISSQN/ },
  // Other cities (§9 Exclusion): a guide or declaration naming another municipality.
  { name: 'other-city', kind: 'exclusion', weight: 1, test: /PREFEITURA (?:MUNICIPAL )?(?:DE|DO|DA) (?!PORTO ALEGRE\b)[A-Z]/ }
]
