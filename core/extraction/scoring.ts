/**
 * The confidence rule, the same for every plugin:
 *
 *   Confidence is the weight of the evidence that held divided by the weight of all the
 *   evidence looked at: every strong and weak rule (matched or not) and every consistency
 *   check that could run (passed or failed); a check whose values are missing counts for
 *   neither side. A plugin with no strong rule matched, or with any exclusion rule
 *   matched, is not a candidate: its confidence is 0.
 *
 * So a matched rule or a passed check raises confidence, a missing rule or a failed check
 * lowers it, and the figure can be recomputed by hand from matchedRules and missingRules.
 * The parser's minimum is applied to the detection part (rules only), before parsing;
 * checks then move the reported figure.
 */
import type { CheckOutcome, ConfidenceLevel, DetectionRule } from './types.js'
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

/** Confidence with check outcomes added to both sides of the ratio. */
export function finalConfidence (score: RuleScore, checks: Array<{ weight: number, outcome: CheckOutcome }>): number {
  if (!score.candidate) return 0
  let held = score.held
  let total = score.total
  for (const { weight, outcome } of checks) {
    if (outcome.status === 'skip') continue
    total += weight
    if (outcome.status === 'pass') held += weight
  }
  return round4(held / total)
}

/** HIGH at 0.90 and above, MEDIUM from 0.75, LOW below (spec 3 §2 B). */
export function confidenceLevel (confidence: number): ConfidenceLevel {
  return confidence >= 0.9 ? 'HIGH' : confidence >= 0.75 ? 'MEDIUM' : 'LOW'
}

function round4 (n: number): number {
  return Math.round(n * 10_000) / 10_000
}
