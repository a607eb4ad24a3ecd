/**
 * A CNPJ or CPF read by OCR, chosen by its check digits.
 *
 * A CNPJ and a CPF carry two modulo-11 check digits: a reading whose digits verify is very
 * probably what is printed, one whose digits fail is certainly not. So where Tesseract's
 * reading of a tax id fails, the readings it may stand for are tried: those its usual
 * confusions give (a letter read for a digit: O/0, I/1, Z/2, S/5, G/6, B/8...), and any
 * other characters the caller has for a position (tesseract.js's output carries no
 * per-character choices, so the service has none to give). The one that verifies is
 * taken, provided it alone does at the fewest changes. A value whose check digits fail is
 * never chosen: when no candidate verifies, or two do, the chooser answers null, the text
 * stays as read, and the engine keeps the document below HIGH (core/extraction/engine.ts).
 */
import { isValidCnpj } from '../../cnpj.js'
import { isValidCpf } from '../tax-ids.js'

export type TaxIdKind = 'CNPJ' | 'CPF'

/**
 * The digit a character read in a tax id may stand for: Tesseract's usual confusions of
 * letters and marks with digits in print (O/0, I/1, Z/2, A/4, S/5, G/6, T/7, B/8, g/9).
 * The other way (a digit read for a letter of an alphanumeric CNPJ) is not tried blindly:
 * a digit in a CNPJ is almost always a digit, and a dozen blind tries would let a wrong
 * reading verify by chance (two check digits pass for about one string in a hundred).
 */
const LOOKALIKES: Readonly<Record<string, string>> = {
  O: '0',
  o: '0',
  D: '0',
  Q: '0',
  I: '1',
  i: '1',
  l: '1',
  L: '1',
  '|': '1',
  '!': '1',
  Z: '2',
  z: '2',
  A: '4',
  S: '5',
  s: '5',
  $: '5',
  G: '6',
  b: '6',
  T: '7',
  B: '8',
  g: '9',
  q: '9'
}

/** Most characters changed from what Tesseract read first (a forced change, a letter where only a digit may stand, not counted). */
export const MAX_CHANGES = 2

/** How many positions a CNPJ and a CPF have; the CNPJ's first 12 may hold letters. */
const LENGTH: Readonly<Record<TaxIdKind, number>> = { CNPJ: 14, CPF: 11 }

/** Whether `c` may stand at `position`: a digit, or (`letters`) an upper-case letter in a CNPJ's first 12. */
function legal (kind: TaxIdKind, position: number, c: string, letters: boolean): boolean {
  return letters && kind === 'CNPJ' && position < 12 ? /^[0-9A-Z]$/.test(c) : /^[0-9]$/.test(c)
}

function valid (kind: TaxIdKind, chars: string): boolean {
  return kind === 'CNPJ' ? isValidCnpj(chars) : isValidCpf(chars)
}

/**
 * The one reading of `chars` that verifies at the fewest changes, within `letters`' alphabet,
 * or null (none within MAX_CHANGES, or two at the same count).
 */
function choose (kind: TaxIdKind, chars: string[], alternatives: ReadonlyArray<string | undefined>, letters: boolean): string | null {
  // Per position: the character as read when it is legal there, and what else it may be.
  const kept: Array<string | undefined> = []
  const others: string[][] = []
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    const upper = c.toUpperCase()
    const asRead = legal(kind, i, upper, letters) ? upper : undefined
    const options = new Set<string>()
    for (const o of [...(LOOKALIKES[c] ?? ''), ...(LOOKALIKES[upper] ?? ''), ...(alternatives[i] ?? '')]) {
      const u = o.toUpperCase()
      if (u !== asRead && legal(kind, i, u, letters)) options.add(u)
    }
    // Nothing this character may stand for here.
    if (asRead === undefined && options.size === 0) return null
    kept.push(asRead)
    others.push([...options])
  }
  // A forced position (its character not legal there) takes each of its options; the others
  // keep their character or take an option, which counts as a change.
  let found: string[] = []
  const walk = (i: number, prefix: string, changes: number, budget: number): void => {
    if (found.length > 1) return
    if (i === chars.length) {
      if (changes === budget && valid(kind, prefix)) found.push(prefix)
      return
    }
    const asRead = kept[i]
    if (asRead === undefined) {
      for (const o of others[i]!) walk(i + 1, prefix + o, changes, budget)
      return
    }
    walk(i + 1, prefix + asRead, changes, budget)
    if (changes < budget) for (const o of others[i]!) walk(i + 1, prefix + o, changes + 1, budget)
  }
  for (let budget = 0; budget <= MAX_CHANGES; budget++) {
    found = []
    walk(0, '', 0, budget)
    // Two readings at the same cost: the check digits cannot tell which one is printed.
    if (found.length > 0) return found.length === 1 ? found[0]! : null
  }
  return null
}

/**
 * The valid CNPJ or CPF (bare: 14 or 11 upper-case characters) that `read`, its positions
 * as Tesseract read them (no mask), stands for, or null. `alternatives[i]`, when given,
 * holds other characters Tesseract proposed for position i.
 *
 * The reading as read wins when it verifies (unless it holds letters and reading them as
 * their look-alike digits verifies too: then either may be printed). Else a numeric reading is looked for, each
 * letter read as the digit it looks like (most tax ids are numeric); then, for a CNPJ whose
 * first 12 positions hold a letter that looks like no digit (so it cannot be numeric), an
 * alphanumeric one. In each, Tesseract's own alternatives are tried at the fewest changes
 * (at most MAX_CHANGES besides the forced ones), and a reading is chosen only when it alone
 * verifies.
 */
export function chooseTaxId (kind: TaxIdKind, read: string, alternatives: ReadonlyArray<string | undefined> = []): string | null {
  const chars = [...read]
  if (chars.length !== LENGTH[kind]) return null
  const upper = read.toUpperCase()
  const numeric = choose(kind, chars, alternatives, false)
  if (/^[0-9A-Z]+$/.test(upper) && valid(kind, upper)) {
    // An alphanumeric CNPJ as read, whose letters all look like digits that verify too:
    // either could be printed.
    return numeric === null || numeric === upper ? upper : null
  }
  if (numeric !== null) return numeric
  const lettered = kind === 'CNPJ' && chars.slice(0, 12).some((c) => /[A-Za-z]/.test(c) && LOOKALIKES[c] === undefined)
  return lettered ? choose(kind, chars, alternatives, true) : null
}

/** A CNPJ printed with its mask (`12.345.678/0001-95`, `12.ABC.345/01DE-35`) or a CPF (`123.456.789-09`). */
export function printTaxId (kind: TaxIdKind, chars: string): string {
  return kind === 'CNPJ'
    ? `${chars.slice(0, 2)}.${chars.slice(2, 5)}.${chars.slice(5, 8)}/${chars.slice(8, 12)}-${chars.slice(12)}`
    : `${chars.slice(0, 3)}.${chars.slice(3, 6)}.${chars.slice(6, 9)}-${chars.slice(9)}`
}

/** A character Tesseract may have read for one of a tax id: a letter or digit, or a look-alike. */
const C = String.raw`[0-9A-Za-z|!$]`
/** The mask's separators as Tesseract reads them: a dot or a comma; a slash, or a bar, backslash, l or I; a hyphen or a dash. A space beside one is tolerated. */
const DOT = String.raw`\s?[.,]\s?`
const SLASH = String.raw`\s?[/|\\lI]\s?`
const DASH = String.raw`\s?[-–—~]\s?`

/**
 * A masked CNPJ or CPF inside a run's text, as OCR reads one: the mask is what says the
 * token is a tax id (a bare run of digits may be any number), its characters may be
 * look-alikes. Not inside a longer word or number.
 */
const MASKED: Array<{ kind: TaxIdKind, pattern: RegExp }> = [
  { kind: 'CNPJ', pattern: new RegExp(String.raw`(?<![0-9A-Za-z])(${C}{2})${DOT}(${C}{3})${DOT}(${C}{3})${SLASH}(${C}{4})${DASH}(${C}{2})(?![0-9A-Za-z])`, 'g') },
  { kind: 'CPF', pattern: new RegExp(String.raw`(?<![0-9A-Za-z/])(${C}{3})${DOT}(${C}{3})${DOT}(${C}{3})${DASH}(${C}{2})(?![0-9A-Za-z])`, 'g') }
]

/** Fewer digits than this in a masked token and it is a word with punctuation, not a misread tax id. */
const MIN_DIGITS: Readonly<Record<TaxIdKind, number>> = { CNPJ: 8, CPF: 7 }

/**
 * `text` (a run read by OCR) with every masked CNPJ and CPF replaced by the valid reading
 * chooseTaxId finds for it, printed with the standard mask (so that a comma read for a dot
 * does not hide a CNPJ from the plugins' patterns); a token for which it finds none, or two,
 * is left as read.
 */
export function mendTaxIds (text: string): string {
  let out = text
  for (const { kind, pattern } of MASKED) {
    out = out.replace(pattern, (token: string, ...groups: unknown[]) => {
      const read = groups.slice(0, kind === 'CNPJ' ? 5 : 4).join('')
      if (read.replace(/\D/g, '').length < MIN_DIGITS[kind]) return token
      const chosen = chooseTaxId(kind, read)
      return chosen === null ? token : printTaxId(kind, chosen)
    })
  }
  return out
}
