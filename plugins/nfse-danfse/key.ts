/**
 * The DANFSe's 50-position access key (documents.md §7 "Access key"): municipality IBGE
 * code (7) + generating environment (1) + registration type (1; `2` CNPJ, `1` CPF) +
 * issuer CNPJ/CPF (14) + NFS-e number (13, zero-padded) + `AAMM` of issue (4) + random
 * code (9) + check digit (1).
 *
 * The check digit is modulo 11 over the first 49 positions, weights 2..9 from the right,
 * a remainder below 2 giving 0: the real key quoted in documents.md verifies this way.
 * With an alphanumeric CNPJ in positions 10-23, letters count as their ASCII code minus 48,
 * as in the CNPJ's own check digits (assumption: no real key with letters seen yet).
 */

export interface KeyParts {
  municipio: string
  ambiente: string
  tipoInscricao: string
  inscricao: string
  numero: string
  aamm: string
  codigo: string
  dv: string
}

/** 9 digits, 14 CNPJ positions (letters allowed in the first 12), 27 digits. */
export const KEY_SHAPE = /^\d{9}[0-9A-Z]{12}\d{29}$/

export function keyCheckDigit (first49: string): number {
  let sum = 0
  let weight = 2
  for (let i = first49.length - 1; i >= 0; i--) {
    sum += (first49.charCodeAt(i) - 48) * weight
    weight = weight === 9 ? 2 : weight + 1
  }
  const r = sum % 11
  return r < 2 ? 0 : 11 - r
}

export function splitKey (key: string): KeyParts | null {
  if (!KEY_SHAPE.test(key)) return null
  return {
    municipio: key.slice(0, 7),
    ambiente: key.slice(7, 8),
    tipoInscricao: key.slice(8, 9),
    inscricao: key.slice(9, 23),
    numero: key.slice(23, 36),
    aamm: key.slice(36, 40),
    codigo: key.slice(40, 49),
    dv: key.slice(49)
  }
}

/** Builds a key with its check digit (the fixture generator uses it). */
export function buildKey (p: Omit<KeyParts, 'dv'>): string {
  const first = p.municipio + p.ambiente + p.tipoInscricao + p.inscricao.padStart(14, '0') + p.numero.padStart(13, '0') + p.aamm + p.codigo
  return first + String(keyCheckDigit(first))
}
