/**
 * Detection rules of the PGDAS-D receipt (documents.md §8a, §10), on the detection copy.
 * The receipt's title is the only strong cue: the declaration's own section 3 prints the
 * same labels (receipt number, authentication, transmission) without it.
 */
import type { DetectionRule, TextDocument } from '../../core/plugin-api.js'

/** A line that starts with the extract's title (a mention inside a sentence does not count). */
const extractTitleLine = (_t: string, doc: TextDocument): boolean => doc.normalizedLines.some((l) => l.startsWith('EXTRATO DO SIMPLES NACIONAL'))

export const rules: DetectionRule[] = [
  // Some libraries' text splits the title's last word (`PGDAS -D`).
  { name: 'title', kind: 'strong', weight: 4, test: /RECIBO DE ENTREGA DA APURACAO NO PGDAS ?-D/ },
  { name: 'tipo', kind: 'weak', weight: 1, test: /(?:DECLARACAO|APURACAO) (?:ORIGINAL|RETIFICADORA)/ },
  { name: 'numero-recibo', kind: 'weak', weight: 1, test: /NUMERO DO RECIBO:? ?\d{2}\.\d{2}\.\d{5}\. ?\d{7}-\d/ },
  { name: 'autenticacao', kind: 'weak', weight: 1, test: /AUTENTICACAO:? ?\d{5}\.\d{5}\.\d{5}\.\d{5}/ },
  { name: 'transmissao', kind: 'weak', weight: 1, test: /DATA E HORARIO DA TRANSMISSAO/ },
  { name: 'cnpj-matriz', kind: 'weak', weight: 1, test: /CNPJ DA MATRIZ/ },
  { name: 'numero-apuracao', kind: 'weak', weight: 1, test: /NUMERO DA APURACAO/ },
  // The table's headers wrap (`Total do Débito` / `Exigível`): test a phrase that stays on one line.
  { name: 'suspensa-column', kind: 'weak', weight: 1, test: /EXIGIBILIDADE SUSPENSA/ },
  // A combined declaration+receipt file is the declaration's (pgdas-declaracao reports it
  // with a warning naming the receipt page); the MAED notification and the extract (§10).
  { name: 'declaration-header', kind: 'exclusion', weight: 1, test: /SIMPLES NACIONAL - DECLARATORIO/ },
  { name: 'maed-notification', kind: 'exclusion', weight: 1, test: /NOTIFICACAO DE LANCAMENTO|PGDASD-NOTIFICACAO-MAED|MULTA POR ATRASO NA ENTREGA/ },
  { name: 'extract-title', kind: 'exclusion', weight: 1, test: extractTitleLine }
]
