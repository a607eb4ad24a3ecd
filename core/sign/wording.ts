/**
 * What the stamp and the final page say (in Portuguese, for the firm's clients).
 * Kept apart from the drawing code so the words can change without touching layout.
 */
import type { FinalPageContent } from '../pdf/index.js'
import type { ChainKind, SignerIdentity } from './icp-brasil.js'

export interface VisibleFacts {
  identity: SignerIdentity
  document: string
  when: string
  standard: 'PAdES-B' | 'PAdES-T' | 'PAdES-LT' | 'PAdES-LTA'
  documentIdentifier: string
  validatorUrl: string
  originalPages: number
  totalPages: number
  /** Only an ICP-Brasil chain may be called one, and only its signatures go to the national validator. */
  chainKind: ChainKind
}

/** What the stamp says of the certificate after the standard (issue 34: no "ICP-Brasil" for a chain that is not). */
const STAMP_CHAIN: Record<ChainKind, string> = {
  ICP_BRASIL: ' ICP-Brasil',
  DEVELOPMENT: ' - certificado de TESTE, sem validade jurídica',
  OTHER: ' - certificado fora da ICP-Brasil'
}

/** `11.222.333/0001-81`, `529.982.247-25`, or the value as is. */
export function formatDocument (identity: Pick<SignerIdentity, 'signerDocument' | 'documentKind'>): string {
  const d = identity.signerDocument
  if (identity.documentKind === 'CNPJ') return `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`
  if (identity.documentKind === 'CPF') return `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6, 9)}-${d.slice(9)}`
  return d
}

function documentLabel (facts: VisibleFacts): string {
  return facts.identity.documentKind ?? 'CPF/CNPJ'
}

export function stampLines (facts: VisibleFacts, pageNumber: number): string[] {
  const who = facts.document === '' ? facts.identity.signerName : `${facts.identity.signerName} (${documentLabel(facts)} ${facts.document})`
  return [
    `Assinado digitalmente por ${who} em ${facts.when}`,
    `Assinatura ${facts.standard}${STAMP_CHAIN[facts.chainKind]} - Identificador ${facts.documentIdentifier} - Página ${pageNumber} de ${facts.totalPages}`
  ]
}

const STANDARD_WORDS: Record<VisibleFacts['standard'], string> = {
  'PAdES-B': 'PAdES-B (PAdES baseline B-B, ETSI EN 319 142-1)',
  'PAdES-T': 'PAdES-T (PAdES baseline B-T, com carimbo do tempo RFC 3161)',
  'PAdES-LT': 'PAdES-LT (PAdES baseline B-LT, com dados de revogação)',
  'PAdES-LTA': 'PAdES-LTA (PAdES baseline B-LTA, com carimbo do documento)'
}

export function finalPageContent (facts: VisibleFacts): FinalPageContent {
  const standard = STANDARD_WORDS[facts.standard]
  const icp = facts.chainKind === 'ICP_BRASIL'
  const covers = 'A assinatura cobre todas as páginas do arquivo, inclusive esta.'
  const subtitle = icp
    ? `Este documento foi assinado digitalmente com certificado ICP-Brasil. ${covers}`
    : facts.chainKind === 'DEVELOPMENT'
      ? `Este documento foi assinado com um certificado de TESTE, sem validade jurídica: a cadeia de desenvolvimento do serviço, que nenhum validador reconhece. ${covers}`
      : `Este documento foi assinado digitalmente com um certificado fora da ICP-Brasil, emitido por ${facts.identity.certificateAuthority}. ${covers}`
  return {
    title: 'Manifesto de assinatura digital',
    subtitle,
    rows: [
      ['Signatário', facts.identity.signerName],
      [documentLabel(facts), facts.document === '' ? 'não informado no certificado' : facts.document],
      ['Autoridade certificadora', facts.identity.certificateAuthority],
      ['Série do certificado', facts.identity.serialNumber],
      ['Data e hora', facts.when],
      ['Padrão', standard],
      ['Identificador do documento', facts.documentIdentifier],
      ['Páginas', `${facts.originalPages} do documento original + esta página`]
    ],
    // The national validator checks ICP-Brasil signatures only: pointing other ones at it
    // would send the reader to a page that rejects them.
    qr: icp
      ? { text: facts.validatorUrl, caption: `Para verificar a assinatura, envie este arquivo PDF ao validador de assinaturas: ${facts.validatorUrl}` }
      : undefined,
    footer: `Qualquer alteração feita neste arquivo depois da assinatura é detectada ${icp ? 'pelo validador' : 'por quem verificar a assinatura'}. A data e a hora impressas são as declaradas na assinatura` +
      (facts.standard !== 'PAdES-B' ? '; a hora confiável é a do carimbo do tempo.' : '.')
  }
}
