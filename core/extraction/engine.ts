/**
 * The extraction engine: scores every active plugin's rules on a document, picks the
 * best candidate, applies its minimum confidence, runs its parser (on the document bounded
 * by the plugin's labels) and checks, counts the fields the plugin expects, and fills the
 * spec's `engine` object. Plugins never compute confidence themselves.
 *
 * Confidence (scoring.ts): rules, checks and expected fields. A required field the parser
 * left null counts as a failed check of weight 1 (`field:<path>` in missingRules), is named
 * in `warnings` (`FIELD_NOT_FOUND`), and keeps the document below HIGH; `fieldsExpected` and
 * `fieldsFound` say how much of the document was read.
 */
import { Code } from '../errors.js'
import { isValidCnpj, isValidCpf } from './tax-ids.js'
import { confidenceLevel, countFields, detectionConfidence, finalConfidence, scoreRules } from './scoring.js'
import type { RuleScore } from './scoring.js'
import type { Evidence, TextDocument } from './text.js'
import type { Candidate, CheckOutcome, EngineReport, ExtractionResult, ExtractorPlugin, ParseContext, Problem } from './types.js'

/** Version of the engine (detection, parsers, confidence and metrics), spec 3 §9 B. */
export const ENGINE_VERSION = '1.11.0'

/**
 * The warning code of a required field the parser could not read. A warning of the
 * extraction only (never an HTTP error), so it is not in the catalog of core/errors.ts.
 */
export const FIELD_NOT_FOUND = 'FIELD_NOT_FOUND'

/**
 * The warning code of a field whose label has two readings that disagree (a value after the
 * label and another under it, say: label-value.ts): the field is null, not guessed.
 */
export const LABEL_VALUE_CONFLICT = 'LABEL_VALUE_CONFLICT'

/** The documentType of a document no plugin recognised. */
export const UNKNOWN_DOCUMENT = 'UNKNOWN'

function emptyReport (doc: TextDocument): EngineReport {
  return {
    version: ENGINE_VERSION,
    family: null,
    detector: null,
    parser: null,
    parserVersion: null,
    parserStatus: null,
    schemaVersion: null,
    confidence: 0,
    confidenceLevel: 'LOW',
    minimumConfidence: null,
    parserExecuted: false,
    parserBlocked: false,
    matchedRules: [],
    missingRules: [],
    excludedRules: [],
    fieldsExpected: 0,
    fieldsFound: 0,
    ...textSource(doc)
  }
}

/** Which pages were read by OCR (the `engine` report's textSource and ocrPages). */
function textSource (doc: TextDocument): Pick<EngineReport, 'textSource' | 'ocrPages'> {
  const ocrPages = doc.pages.filter((p) => p.source === 'OCR').map((p) => p.page)
  return { textSource: ocrPages.length === 0 ? 'TEXT_LAYER' : ocrPages.length === doc.pageCount ? 'OCR' : 'MIXED', ocrPages }
}

/** Below HIGH (spec 3 §2 B: HIGH from 0.90). */
const BELOW_HIGH = 0.89

/**
 * The paths of `data` holding a CNPJ or CPF (a key naming one, a value of 14 or 11
 * digits) whose check digits do not verify: on a scan, a misread digit.
 */
function badTaxIds (data: unknown, path = ''): string[] {
  if (data === null || typeof data !== 'object') return []
  const out: string[] = []
  for (const [key, value] of Object.entries(data)) {
    const at = path === '' ? key : `${path}.${key}`
    if (typeof value === 'string' && /cnpj|cpf|^documento$/i.test(key)) {
      if (/^\d{14}$/.test(value) && !isValidCnpj(value)) out.push(at)
      if (/^\d{11}$/.test(value) && !isValidCpf(value)) out.push(at)
    } else {
      out.push(...badTaxIds(value, at))
    }
  }
  return out
}

/**
 * A document read by OCR reaches HIGH only when its consistency checks confirm it (at
 * least one passed, none failed) and every CNPJ and CPF it holds has valid check digits:
 * check digits and totals are what catch a misread digit, and OCR misreads digits where
 * a text layer cannot. Otherwise its confidence is kept below HIGH and a warning says
 * why. Returns the confidence to report.
 */
function capUnverifiedOcr (engine: EngineReport, outcomes: Array<{ outcome: CheckOutcome }>, data: object, warnings: Problem[]): number {
  if (engine.textSource === 'TEXT_LAYER') return engine.confidence
  const passed = outcomes.some((o) => o.outcome.status === 'pass')
  const failed = outcomes.some((o) => o.outcome.status === 'fail')
  const badIds = badTaxIds(data)
  if (passed && !failed && badIds.length === 0) return engine.confidence
  const pages = engine.ocrPages.join(', ')
  const why = badIds.length > 0
    ? `the check digits of ${badIds.join(', ')} do not verify (a digit misread)`
    : failed ? 'a consistency check failed (see the other warnings)' : 'no consistency check (check digits, totals) could confirm its digits'
  warnings.push({ code: Code.OCR_UNVERIFIED, message: `Page(s) ${pages} were read by OCR and ${why}: verify the values against the document; confidence is kept below HIGH.` })
  return Math.min(engine.confidence, BELOW_HIGH)
}

/** The result for a document without any text (a scan): reported, never guessed. */
function noText (doc: TextDocument): ExtractionResult {
  const engine = emptyReport(doc)
  return {
    success: false,
    documentType: UNKNOWN_DOCUMENT,
    pages: doc.pageCount,
    data: null,
    warnings: [],
    errors: [{
      code: Code.PDF_NO_TEXT_LAYER,
      message: engine.textSource === 'TEXT_LAYER'
        ? 'The PDF has no text: no text layer, and no scanned image OCR could read (or OCR is turned off). Its type and fields cannot be read.'
        : 'The PDF has no text layer and OCR found no text on its pages (a blank page, or a scan too faint, too small or turned sideways).'
    }],
    engine,
    evidence: {},
    candidates: []
  }
}

/** A hit's evidence; the OCR confidence of its words when it was read from a scanned page. */
function evidenceOf (hit: Evidence): Evidence {
  const e: Evidence = { page: hit.page, source: hit.source, box: hit.box }
  if (hit.confidence !== undefined) e.confidence = hit.confidence
  return e
}

/** Each plugin's verdict once the winner is known (registry order kept). */
function verdicts (scored: Array<{ plugin: ExtractorPlugin, score: RuleScore, confidence: number }>, winner: ExtractorPlugin | undefined): Candidate[] {
  const best = scored.find((s) => s.plugin === winner)
  return scored.map(({ plugin, score, confidence }) => ({
    plugin: plugin.id,
    documentType: plugin.documentType,
    confidence,
    matchedRules: [...score.matched],
    excludedRules: [...score.excluded],
    outcome: plugin === winner
      ? 'selected'
      : score.excluded.length > 0
        ? 'excluded'
        : !score.candidate
            ? 'no-strong-rule'
            : best !== undefined && confidence === best.confidence ? 'tie-order' : 'lower-confidence'
  }))
}

/** What to do about a PDF no plugin recognised: the types there are, by documentType. */
function noMatchMessage (plugins: readonly ExtractorPlugin[]): string {
  const types = [...new Set(plugins.filter((p) => p.status === 'active').map((p) => p.documentType))]
  return `The document is of no type this service knows: no parser recognised it. Supported types: ${types.join(', ')}. ` +
    'Send a PDF of one of these types; GET /api/v1/info of the extraction service lists its parsers.'
}

/**
 * Runs the engine. `plugins` is the registry in its order: on equal confidence the
 * earlier plugin wins. Inactive plugins are skipped.
 */
export function extractDocument (doc: TextDocument, plugins: readonly ExtractorPlugin[]): ExtractionResult {
  if (doc.isEmpty) return noText(doc)
  let best: { plugin: ExtractorPlugin, score: RuleScore, confidence: number } | undefined
  const scored: Array<{ plugin: ExtractorPlugin, score: RuleScore, confidence: number }> = []
  // Every exclusion that fired, whoever wins: the spec's excludedRules is where the
  // response can say why a neighbour lost (documents.md §10).
  const excluded: string[] = []
  // Each plugin's rules read the document as its parser will: its labels bound the values and
  // its wrapped labels are joined back (TextDocument.withLabels).
  const views = new Map<ExtractorPlugin, TextDocument>()
  for (const plugin of plugins) {
    if (plugin.status !== 'active') continue
    const view = doc.withLabels(plugin.labels, plugin.cellLabels)
    views.set(plugin, view)
    const score = scoreRules(plugin.rules, view)
    excluded.push(...score.excluded.map((name) => `${plugin.id}:${name}`))
    const confidence = detectionConfidence(score)
    scored.push({ plugin, score, confidence })
    if (score.candidate && (best === undefined || confidence > best.confidence)) best = { plugin, score, confidence }
  }
  const candidates = verdicts(scored, best?.plugin)
  if (best === undefined) {
    return {
      success: false,
      documentType: UNKNOWN_DOCUMENT,
      pages: doc.pageCount,
      data: null,
      warnings: [],
      errors: [{ code: Code.PLUGIN_NO_MATCH, message: noMatchMessage(plugins) }],
      engine: { ...emptyReport(doc), excludedRules: excluded },
      evidence: {},
      candidates
    }
  }
  const { plugin, score } = best
  const engine: EngineReport = {
    version: ENGINE_VERSION,
    family: plugin.family,
    detector: plugin.id,
    parser: plugin.id,
    parserVersion: plugin.version,
    parserStatus: plugin.status,
    schemaVersion: plugin.schemaVersion,
    confidence: best.confidence,
    confidenceLevel: confidenceLevel(best.confidence),
    minimumConfidence: plugin.minimumConfidence,
    parserExecuted: false,
    parserBlocked: false,
    matchedRules: [...score.matched],
    missingRules: [...score.missing],
    excludedRules: excluded,
    fieldsExpected: 0,
    fieldsFound: 0,
    ...textSource(doc)
  }
  const result: ExtractionResult = { success: false, documentType: plugin.documentType, pages: doc.pageCount, data: null, warnings: [], errors: [], engine, evidence: {}, candidates }
  if (best.confidence < plugin.minimumConfidence) {
    engine.parserBlocked = true
    result.errors.push({
      code: Code.PLUGIN_BLOCKED,
      message: `Recognised as ${plugin.documentType} with confidence ${best.confidence}, below this parser's minimum of ${plugin.minimumConfidence}: no fields were extracted, to avoid a wrong reading.`
    })
    return result
  }
  const evidence: Record<string, Evidence> = {}
  const warnings: Problem[] = []
  const ctx: ParseContext = {
    take: (field, hit, convert) => {
      if (hit === undefined) return null
      if (hit.conflict !== undefined) {
        warnings.push({ code: LABEL_VALUE_CONFLICT, message: `${field}: ${hit.conflict}.`, field })
        return null
      }
      const value = convert(hit.value)
      if (value !== null) evidence[field] = evidenceOf(hit)
      return value
    },
    cite: (field, hit) => { if (hit.conflict === undefined) evidence[field] = evidenceOf(hit) },
    report: (d) => { warnings.push(d.field === undefined ? { code: d.code, message: d.message } : { code: d.code, message: d.message, field: d.field }) }
  }
  engine.parserExecuted = true
  const bounded = views.get(plugin) ?? doc.withLabels(plugin.labels, plugin.cellLabels)
  let data: object
  try {
    data = plugin.parse(bounded, ctx)
  } catch {
    // The parser's own failure on a document it recognised: reported, with no message
    // of the exception (it may quote the document).
    result.errors.push({ code: Code.PLUGIN_PARSE_FAILED, message: `The ${plugin.id} parser could not read this document.` })
    result.warnings = warnings
    return result
  }
  const outcomes: Array<{ weight: number, outcome: CheckOutcome }> = []
  for (const check of plugin.checks ?? []) {
    let outcome: CheckOutcome
    try {
      outcome = check.run(data, bounded)
    } catch {
      outcome = { status: 'skip' }
    }
    outcomes.push({ weight: check.weight, outcome })
    if (outcome.status === 'pass') engine.matchedRules.push(`check:${check.name}`)
    if (outcome.status === 'fail') {
      engine.missingRules.push(`check:${check.name}`)
      warnings.push({ code: Code.PLUGIN_CHECK_FAILED, message: `${check.name}: ${outcome.message}` })
    }
  }
  const fields = countFields(plugin.fields(data), data)
  engine.fieldsExpected = fields.expected
  engine.fieldsFound = fields.found
  for (const path of fields.missingRequired) {
    engine.missingRules.push(`field:${path}`)
    warnings.push({ code: FIELD_NOT_FOUND, message: `FIELD_NOT_FOUND: ${path} (every ${plugin.documentType} prints it, but it could not be read here; it is null)`, field: path })
  }
  engine.confidence = finalConfidence(score, outcomes, fields.missingRequired.length)
  engine.confidence = capUnverifiedOcr(engine, outcomes, data, warnings)
  engine.confidenceLevel = confidenceLevel(engine.confidence)
  return { ...result, success: true, data, warnings, evidence }
}
