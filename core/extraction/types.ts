/**
 * What an extraction plugin declares. Plugins see these through core/plugin-api.ts.
 */
import type { DataSchema } from './data-schema.js'
import type { Evidence, Hit, TextDocument } from './text.js'

/** How a detection rule counts (see scoring.ts). */
export type RuleKind = 'strong' | 'weak' | 'exclusion'

/** One named detection rule. `test` runs on the detection copy (accent-stripped, upper case, collapsed spaces). */
export interface DetectionRule {
  /** Stable name, reported in matchedRules / missingRules / excludedRules. */
  name: string
  kind: RuleKind
  /** Relative weight (> 0); exclusions ignore it (one match excludes). */
  weight: number
  /** A pattern on the detection copy, or a predicate given the detection copy and the document. */
  test: RegExp | ((normalized: string, doc: TextDocument) => boolean)
}

/** The outcome of one consistency check on parsed data. */
export type CheckOutcome =
  | { status: 'pass' }
  | { status: 'fail', message: string }
  /** The values it needs are missing: it counts for nothing. */
  | { status: 'skip' }

/**
 * A consistency check on the parsed data (barcode check digits, parts adding up to a
 * total). It gets the document too, for invariants between `data` and text that `data`
 * does not keep (a page footer repeating a number, a second copy of the same value);
 * most checks need `data` only and ignore the second parameter.
 */
export interface ConsistencyCheck<D> {
  name: string
  /** Weight beside the detection rules' (see scoring.ts). */
  weight: number
  // Method syntax on purpose: a registry holds plugins of different data types (bivariant parameter).
  run (data: D, doc: TextDocument): CheckOutcome
}

/** A non-fatal problem met while parsing; it becomes an entry of the response's `warnings`. */
export interface Diagnostic {
  code: string
  message: string
  /** The data field concerned, when there is one. */
  field?: string
}

/** What parse receives beside the document. */
export interface ParseContext {
  /**
   * Reads a field from a hit: `convert(hit.value)`; null when the hit is missing or
   * the conversion refuses it (values are never invented). Records the evidence of
   * every non-null value under `field` (a dotted path such as `das.vencimento`).
   */
  take: <T>(field: string, hit: Hit | undefined, convert: (text: string) => T | null) => T | null
  /** Records evidence for a value computed from several hits (a list item, a sum). */
  cite: (field: string, hit: Hit) => void
  /** A non-fatal problem for `warnings`. */
  report: (diagnostic: Diagnostic) => void
}

export type PluginStatus = 'active' | 'inactive'

/**
 * The fields of `data` a document prints, as paths (`cnpj`, `das.vencimento`, `tributos`
 * for a list that must not be empty). `required`: every document of the type (or of this
 * layout) prints it, so a null is a reading that failed; `optional`: printed by some
 * documents only. See scoring.ts for how a missing required field counts.
 */
export interface ExpectedFields {
  required: string[]
  optional?: string[]
}

/** An extraction plugin: one document type. */
export interface ExtractorPlugin<D extends object = object> {
  /** Folder name under plugins/, kebab-case; reported as `detector` and `parser`. */
  id: string
  /** Document family (`SIMPLES_NACIONAL`). */
  family: string
  /** The `documentType` of the response. */
  documentType: string
  /** Version of the plugin's code. */
  version: string
  /** Version of the shape of its `data`. */
  schemaVersion: string
  status: PluginStatus
  /** Below this confidence the type is reported but the parser does not run. */
  minimumConfidence: number
  rules: DetectionRule[]
  checks?: Array<ConsistencyCheck<D>>
  /**
   * The fields the document prints, given the data read (so that a plugin whose layouts
   * print different fields can look at its `layout` field). Method syntax: see `run`.
   */
  fields (data: D): ExpectedFields
  /**
   * The document's printed labels (`Data de Vencimento`, `Razão Social`), compared accent-
   * and case-blind: every text query stops a value before one of them, so a value never
   * runs into the next field's label. Write whole labels, not single common words.
   */
  labels: string[]
  /**
   * Labels printed only as a cell of their own in a grid, too common to bound a value
   * (`Telefone`, `CEP`, `Município`: an address or a description may hold the word). A
   * value is never cut at one; a grid cell (`under`, the label reader's `under`) whose first
   * run is exactly one is empty (the next row of labels follows), and the layout variants
   * (fixtures) lay them out as labels. Optional: most documents need none.
   */
  cellLabels?: string[]
  /** Reads `data`; missing fields are null. Throws only when no data can be read at all. */
  parse (doc: TextDocument, ctx: ParseContext): D
  /**
   * The shape of `data`, every field typed (`plugins/<id>/schema.ts`, built with the plugin
   * API's `schema` helpers): /openapi.json describes `data` with it, one schema per type.
   * Every plugin of the registry declares one (plugins/data-schemas.test.ts).
   */
  dataSchema?: DataSchema<D>
}

export type ConfidenceLevel = 'HIGH' | 'MEDIUM' | 'LOW'

/** The spec's `engine` object (spec 3 §2 B). */
export interface EngineReport {
  version: string
  family: string | null
  detector: string | null
  parser: string | null
  parserVersion: string | null
  parserStatus: PluginStatus | null
  schemaVersion: string | null
  confidence: number
  confidenceLevel: ConfidenceLevel
  minimumConfidence: number | null
  parserExecuted: boolean
  parserBlocked: boolean
  matchedRules: string[]
  missingRules: string[]
  /**
   * Exclusion rules that fired, as `<plugin>:<rule>`: the winner has none of its own (one
   * exclusion makes a plugin no candidate), so these are the neighbours' rules that kept
   * other plugins out of the contest, the reason the others lost where the spec's fields
   * can say it.
   */
  excludedRules: string[]
  /** Beyond the spec: how many fields the plugin expects on this document (required and optional). */
  fieldsExpected: number
  /** Beyond the spec: how many of those were read (not null, not an empty list). */
  fieldsFound: number
  /**
   * Beyond the spec: where the text was read from. `TEXT_LAYER` (the PDF's own text),
   * `OCR` (every page was a scan), `MIXED` (some pages were; `ocrPages` names them).
   */
  textSource: 'TEXT_LAYER' | 'OCR' | 'MIXED'
  /** The 1-based pages read by OCR (empty for a text layer). */
  ocrPages: number[]
}

/**
 * How one active plugin fared on a document (beyond the spec: the service shows it only
 * beside `evidence`). `reason` says why a plugin other than the winner lost.
 */
export interface Candidate {
  plugin: string
  documentType: string
  /** Confidence of its rules alone (0 when it was not a candidate). */
  confidence: number
  matchedRules: string[]
  excludedRules: string[]
  /** `selected`, `excluded` (an exclusion rule fired), `no-strong-rule`, `lower-confidence`, `tie-order` (same confidence, later in the registry). */
  outcome: 'selected' | 'excluded' | 'no-strong-rule' | 'lower-confidence' | 'tie-order'
}

/** An entry of `errors` or `warnings`. */
export interface Problem { code: string, message: string, field?: string }

/** The engine's answer for one document, before the service adds its request id. */
export interface ExtractionResult {
  success: boolean
  documentType: string
  pages: number
  data: object | null
  warnings: Problem[]
  errors: Problem[]
  engine: EngineReport
  /** Where each extracted field was read (data path → evidence); the service shows it on request only. */
  evidence: Record<string, Evidence>
  /** Every active plugin's verdict, in registry order (beyond the spec: on request only, like evidence). */
  candidates: Candidate[]
}
