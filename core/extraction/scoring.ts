/**
 * The confidence rule, the same for every plugin:
 *
 *   Confidence is the weight of the evidence that held divided by the weight of all the
 *   evidence looked at: every strong and weak rule (matched or not), every consistency
 *   check that could run (passed or failed), and every required field the parser did not
 *   read (a failed check of weight 1, `field:<path>` in missingRules); a check whose values
 *   are missing counts for neither side. A document with a required field missing is at
 *   most MEDIUM (0.89): a reading with a hole in it is never HIGH. A plugin with no strong
 *   rule matched, or with any exclusion rule matched, is not a candidate: its confidence is 0.
 *
 * So a matched rule or a passed check raises confidence, a missing rule, a failed check or
 * a missing field lowers it, and the figure can be recomputed by hand from matchedRules and
 * missingRules. The parser's minimum is applied to the detection part (rules only), before
 * parsing; checks and fields then move the reported figure.
 */
import type { CheckOutcome, ConfidenceLevel, DetectionRule, ExpectedFields } from './types.js'
import type { TextDocument } from './text.js'

export interface RuleScore {
  matched: string[]
  missing: string[]
  excluded: string[]
  /** Weight of matched strong and weak rules. */
  held: number
  /** Weight of all strong and weak rules. */
  total: number
  /** False when no strong rule matched or an exclusion did. */
  candidate: boolean
}

function ruleMatches (rule: DetectionRule, doc: TextDocument): boolean {
  return typeof rule.test === 'function' ? rule.test(doc.normalized, doc) : rule.test.test(doc.normalized)
}

export function scoreRules (rules: DetectionRule[], doc: TextDocument): RuleScore {
  const score: RuleScore = { matched: [], missing: [], excluded: [], held: 0, total: 0, candidate: false }
  let strong = false
  for (const rule of rules) {
    const hit = ruleMatches(rule, doc)
    if (rule.kind === 'exclusion') {
      if (hit) score.excluded.push(rule.name)
      continue
    }
    score.total += rule.weight
    if (hit) {
      score.matched.push(rule.name)
      score.held += rule.weight
      if (rule.kind === 'strong') strong = true
    } else {
      score.missing.push(rule.name)
    }
  }
  score.candidate = strong && score.excluded.length === 0 && score.total > 0
  return score
}

/** Confidence of the rules alone (0 for a non-candidate), rounded to 4 places. */
export function detectionConfidence (score: RuleScore): number {
  return score.candidate ? round4(score.held / score.total) : 0
}

/** The highest confidence of a reading with a required field missing: just under HIGH. */
export const MISSING_FIELD_CEILING = 0.89

/**
 * Confidence with check outcomes added to both sides of the ratio, and each missing
 * required field to the total only (then at most MISSING_FIELD_CEILING).
 */
export function finalConfidence (score: RuleScore, checks: Array<{ weight: number, outcome: CheckOutcome }>, missingFields = 0): number {
  if (!score.candidate) return 0
  let held = score.held
  let total = score.total + missingFields
  for (const { weight, outcome } of checks) {
    if (outcome.status === 'skip') continue
    total += weight
    if (outcome.status === 'pass') held += weight
  }
  const confidence = round4(held / total)
  return missingFields > 0 ? Math.min(confidence, MISSING_FIELD_CEILING) : confidence
}

/** What a reading holds of the fields its plugin expects. */
export interface FieldCount { expected: number, found: number, missingRequired: string[] }

/** A value counts as read unless it is null, undefined or an empty list. */
function isRead (value: unknown): boolean {
  return value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0)
}

function valueAt (data: object, path: string): unknown {
  let at: unknown = data
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined
    at = (at as Record<string, unknown>)[key]
  }
  return at
}

/** Counts the expected fields `data` holds and names the required ones it does not. */
export function countFields (fields: ExpectedFields, data: object): FieldCount {
  const optional = fields.optional ?? []
  const missingRequired = fields.required.filter((path) => !isRead(valueAt(data, path)))
  const foundOptional = optional.filter((path) => isRead(valueAt(data, path))).length
  return { expected: fields.required.length + optional.length, found: fields.required.length - missingRequired.length + foundOptional, missingRequired }
}

/** HIGH at 0.90 and above, MEDIUM from 0.75, LOW below (spec 3 §2 B). */
export function confidenceLevel (confidence: number): ConfidenceLevel {
  return confidence >= 0.9 ? 'HIGH' : confidence >= 0.75 ? 'MEDIUM' : 'LOW'
}

function round4 (n: number): number {
  return Math.round(n * 10_000) / 10_000
}
