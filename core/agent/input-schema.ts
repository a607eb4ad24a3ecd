/**
 * The shape a package declares for its input (`inputSchema` in automation.json): a JSON
 * Schema (draft-07, read by Ajv), compiled when the descriptor is read, so that a run
 * whose input breaks it is refused before it is queued, with a message naming the field.
 *
 * Ajv is told to change nothing (no type coercion, no defaults, no removal of extra
 * fields): the package receives the input exactly as posted. Unknown keywords and formats
 * make the schema itself a descriptor problem, since a misspelt keyword would otherwise
 * check nothing. Messages never quote the input (it holds passwords): they name the
 * field and repeat the schema's `description` of it.
 */
import { Ajv } from 'ajv'
import type { ErrorObject } from 'ajv'

/** A refusal of an input: its message names the field (`input.empresas[0].cnpj`). */
export type InputCheck = (input: Record<string, unknown>) => string | undefined

export type SchemaOutcome = { ok: true, check: InputCheck } | { ok: false, problem: string }

/**
 * One Ajv instance compiles every schema: a new one a schema cost about 150 ms (its
 * meta-schema compiled again). It keeps about 17 KB of each compiled schema for good, so
 * compiled schemas are kept by their text (a reload of unchanged descriptors compiles
 * nothing), and past MAX_COMPILED distinct ones the instance and its cache are replaced.
 */
const MAX_COMPILED = 100
let shared: { ajv: Ajv, compiled: Map<string, SchemaOutcome> } | undefined

function newAjv (): Ajv {
  return new Ajv({
    allErrors: false,
    verbose: true,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    logger: false
  })
}

export function compileInputSchema (schema: unknown): SchemaOutcome {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { ok: false, problem: '"inputSchema" must be a JSON Schema object' }
  const key = JSON.stringify(schema)
  if (shared === undefined || shared.compiled.size >= MAX_COMPILED) shared = { ajv: newAjv(), compiled: new Map() }
  const known = shared.compiled.get(key)
  if (known !== undefined) return known
  const outcome = compile(shared.ajv, schema)
  shared.compiled.set(key, outcome)
  return outcome
}

function compile (ajv: Ajv, schema: object): SchemaOutcome {
  let validate: ReturnType<Ajv['compile']>
  try {
    validate = ajv.compile(schema)
  } catch (err) {
    return { ok: false, problem: `"inputSchema" is not a JSON Schema this agent reads (draft-07): ${oneLine((err as Error).message)}` }
  } finally {
    // Out of the instance's own cache (kept above by text instead), and a package's "$id" free again.
    ajv.removeSchema(schema)
  }
  return {
    ok: true,
    check: (input) => validate(input) ? undefined : describeFailure(validate.errors ?? [])
  }
}

/**
 * One sentence for the first failure. Under `anyOf`/`oneOf` Ajv lists each branch's own
 * failure before the alternative's; the alternative's is the one a person can act on.
 */
function describeFailure (errors: ErrorObject[]): string {
  const error = errors.findLast((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf') ?? errors[0]
  if (error === undefined) return 'input does not match the shape the automation declares.'
  const where = fieldPath(error.instancePath)
  const params = error.params as Record<string, unknown>
  const parent = (error.parentSchema ?? {}) as Record<string, unknown>
  const about = (schema: unknown): string => {
    const description = (schema as Record<string, unknown> | undefined)?.description
    return typeof description === 'string' && description.trim() !== '' ? ` (${description.trim().replace(/\.$/, '')})` : ''
  }
  switch (error.keyword) {
    case 'required': {
      const name = String(params.missingProperty)
      const properties = parent.properties as Record<string, unknown> | undefined
      return `${where}.${name} is required${about(properties?.[name])}.`
    }
    case 'type':
      return `${where} must be ${typeWords(params.type)}${about(parent)}.`
    case 'minItems':
      return `${where} must hold at least ${String(params.limit)} item(s)${about(parent)}.`
    case 'maxItems':
      return `${where} must hold at most ${String(params.limit)} item(s)${about(parent)}.`
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${where} must be ${String(params.comparison)} ${String(params.limit)}${about(parent)}.`
    case 'minLength':
      return Number(params.limit) === 1 ? `${where} must not be empty${about(parent)}.` : `${where} must be at least ${String(params.limit)} characters long${about(parent)}.`
    case 'maxLength':
      return `${where} must be at most ${String(params.limit)} characters long${about(parent)}.`
    case 'additionalProperties':
      return `${where}.${String(params.additionalProperty)} is not a field this automation reads.`
    case 'enum':
      return `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}${about(parent)}.`
    default: {
      const description = about(parent)
      // Ajv's own words name the rule (a pattern, a constant) from the schema, never the value.
      return description === '' ? `${where} is not valid: it ${error.message ?? 'breaks a rule of the declared shape'}.` : `${where} is not valid${description}.`
    }
  }
}

/** `/empresas/0/cnpj` → `input.empresas[0].cnpj` (JSON Pointer unescaped). */
function fieldPath (pointer: string): string {
  let out = 'input'
  if (pointer === '') return out
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    out += /^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`
  }
  return out
}

function typeWords (type: unknown): string {
  const names = (Array.isArray(type) ? type : String(type).split(',')).map((t) => String(t))
  const word = (t: string): string => t === 'object' || t === 'array' || t === 'integer' ? `an ${t}` : t === 'null' ? 'null' : `a ${t}`
  return names.map(word).join(' or ')
}

function oneLine (text: string): string {
  return text.replace(/\s+/g, ' ').slice(0, 300)
}
