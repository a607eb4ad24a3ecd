/**
 * Detection rules of the national DANFSe, v1.0 and v2.0 (documents.md §7 "Detection",
 * §10). They run on the detection copy: accents stripped, upper case, one space, so the
 * v1.0 mixed-case labels and the v2.0 capitals read alike.
 */
import type { DetectionRule } from '../../core/plugin-api.js'

/** A 50-position access key (CNPJ positions may hold letters). */
const KEY = /(?:^|\D)\d{9}[0-9A-Z]{12}\d{29}(?!\d)/
/** The NF-e's 44-digit key, printed bare or in groups of four. */
const NFE_KEY = /(?:^|\D)(?:\d{44}|\d{4}(?: \d{4}){10})(?!\d)/

/**
 * A phrase of the print, its words apart or run together: pypdf's text of the portal's print
 * drops spaces between words and adds one after a hyphen (`Chave deAcesso daNFS- e`).
 */
function phrase (...alternatives: string[]): RegExp {
  const loose = (p: string): string => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&').replace(/ /g, ' ?').replace(/-/g, '- ?')
  return new RegExp(alternatives.map(loose).join('|'))
}

export const rules: DetectionRule[] = [
  { name: 'danfse-version', kind: 'strong', weight: 4, test: /\bDANFSE ?V[12]\.0\b/ },
  { name: 'documento-auxiliar', kind: 'strong', weight: 2, test: phrase('DOCUMENTO AUXILIAR DA NFS-E') },
  { name: 'chave-acesso', kind: 'strong', weight: 3, test: (t) => phrase('CHAVE DE ACESSO DA NFS-E').test(t) && KEY.test(t) },
  { name: 'qr-autenticidade', kind: 'weak', weight: 1, test: phrase('A AUTENTICIDADE DESTA NFS-E PODE SER VERIFICADA') },
  { name: 'emitente', kind: 'weak', weight: 1, test: phrase('EMITENTE DA NFS-E') },
  { name: 'tomador', kind: 'weak', weight: 1, test: phrase('TOMADOR DO SERVICO', 'TOMADOR / ADQUIRENTE') },
  { name: 'codigo-tributacao-nacional', kind: 'weak', weight: 1, test: phrase('CODIGO DE TRIBUTACAO NACIONAL') },
  { name: 'simples-na-competencia', kind: 'weak', weight: 1, test: phrase('SIMPLES NACIONAL NA DATA DE COMPETENCIA') },
  { name: 'valor-total', kind: 'weak', weight: 1, test: phrase('VALOR TOTAL DA NFS-E', 'VALOR DA OPERACAO / SERVICO') },
  { name: 'valor-liquido', kind: 'weak', weight: 1, test: phrase('VALOR LIQUIDO DA NFS-E') },
  // Neighbours (§7 Exclusion): a city's own NFS-e model, which never says DANFSe, and the
  // NF-e's DANFE (goods, 44-digit key). A homologation print is not excluded: parse.ts flags it.
  { name: 'municipal-nfse', kind: 'exclusion', weight: 1, test: (t) => !/\bDANFSE\b/.test(t) && /NFS-E|NOTA FISCAL (?:ELETRONICA )?DE SERVICOS?/.test(t) },
  { name: 'danfe-nfe', kind: 'exclusion', weight: 1, test: (t) => /\bDANFE\b/.test(t) && NFE_KEY.test(t) }
]
