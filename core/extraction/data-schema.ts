/**
 * The shape of a plugin's `data`, declared once by the plugin beside its parser
 * (`plugins/<id>/schema.ts`), and written as JSON Schema (2020-12, as OpenAPI 3.1 reads it)
 * for /openapi.json, /docs and client generators (server/extract/schemas.ts).
 *
 * Each helper carries the TypeScript type of the value it describes, so a declaration typed
 * `DataSchema<Darf>` that misses a field of `Darf`, or types one differently, does not
 * compile; and `plugins/data-schemas.test.ts` validates every fixture's output against the
 * schema (a field the schema lists but the parser never writes, or writes in another
 * shape, fails there).
 *
 * Scalars are nullable, as a value the document does not print is null; `notNull` strips
 * the null where the parser always writes a value. Objects list every key (required) and
 * admit no other.
 */

export type JsonSchema = Record<string, unknown>

/** A schema of `T` (the type is for the compiler only; `json` is what is written). */
export interface DataSchema<T> {
  readonly json: JsonSchema
  /** Never set: carries `T`. */
  readonly type?: T
}

const make = <T>(json: JsonSchema): DataSchema<T> => ({ json })
const described = (description: string | undefined): JsonSchema => description === undefined ? {} : { description }

/** The JSON types of a schema as a list. */
function typesOf (json: JsonSchema): string[] {
  return [json.type as string | string[]].flat().filter((t) => t !== undefined)
}

/** `schema` or null. */
export function nullable<T> (schema: DataSchema<T>): DataSchema<T | null> {
  const json = { ...schema.json }
  if (!typesOf(json).includes('null')) json.type = [...typesOf(json), 'null']
  if (Array.isArray(json.enum) && !json.enum.includes(null)) json.enum = [...json.enum, null]
  return make(json)
}

/** `schema` without its null: the parser always writes a value. */
export function notNull<T> (schema: DataSchema<T>): DataSchema<NonNullable<T>> {
  const json = { ...schema.json }
  const types = typesOf(json).filter((t) => t !== 'null')
  json.type = types.length === 1 ? types[0] : types
  if (Array.isArray(json.enum)) json.enum = json.enum.filter((v) => v !== null)
  return make(json)
}

const scalar = <T>(json: JsonSchema, description: string | undefined): DataSchema<T | null> =>
  nullable(make<T>({ ...json, ...described(description) }))

/** Text as printed (one-spaced, trimmed), or null. */
export const text = (description?: string): DataSchema<string | null> => scalar({ type: 'string' }, description)
/** Digits or characters without punctuation (CNPJ, CPF, document numbers), or null. */
export const digits = (description?: string): DataSchema<string | null> => scalar({ type: 'string', pattern: '^[0-9A-Z]+$' }, description)
/** An ISO date `YYYY-MM-DD`, or null. */
export const date = (description?: string): DataSchema<string | null> => scalar({ type: 'string', format: 'date' }, description)
/** An ISO date-time `YYYY-MM-DDTHH:mm[:ss]`, local or with its offset (`-03:00`), or null. */
export const dateTime = (description?: string): DataSchema<string | null> => scalar({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?([+-]\\d{2}:\\d{2}|Z)?$' }, description)
/** A period `YYYY-MM` (`YYYY-13` for a 13th salary, `YYYY` for a year), or null. */
export const period = (description?: string): DataSchema<string | null> => scalar({ type: 'string', pattern: '^\\d{4}(-\\d{2})?$' }, description)
/** Money in reais, a JSON number read through integer cents, or null. */
export const money = (description?: string): DataSchema<number | null> => scalar({ type: 'number' }, description)
/** A number (a percentage, a rate), or null. */
export const number = (description?: string): DataSchema<number | null> => scalar({ type: 'number' }, description)
/** A whole number, or null. */
export const integer = (description?: string): DataSchema<number | null> => scalar({ type: 'integer' }, description)
/** Yes or no, or null. */
export const flag = (description?: string): DataSchema<boolean | null> => scalar({ type: 'boolean' }, description)
/** Always null: a field the document type never prints, kept for the contract. */
export const alwaysNull = (description?: string): DataSchema<null> => make({ type: 'null', ...described(description) })

/** One of these texts, or null. */
export function oneOf<const V extends string> (values: readonly V[], description?: string): DataSchema<V | null> {
  return nullable(make<V>({ type: 'string', enum: [...values], ...described(description) }))
}

/** Always this text. */
export function constant<const V extends string> (value: V, description?: string): DataSchema<V> {
  return make({ type: 'string', const: value, ...described(description) })
}

type Shape = Record<string, DataSchema<unknown>>
type Of<S> = S extends DataSchema<infer T> ? T : never

/** An object with exactly these fields, every one present (null when not printed). */
export function object<S extends Shape> (shape: S, description?: string): DataSchema<{ [K in keyof S]: Of<S[K]> }> {
  const properties = Object.fromEntries(Object.entries(shape).map(([key, schema]) => [key, schema.json]))
  return make({ type: 'object', properties, required: Object.keys(shape), additionalProperties: false, ...described(description) })
}

/** A list of items, in the document's order. */
export function list<T> (items: DataSchema<T>, description?: string): DataSchema<T[]> {
  return make({ type: 'array', items: items.json, ...described(description) })
}

/** The fields of two object schemas together (an interface that extends another). */
export function merge<A extends object, B extends object> (a: DataSchema<A>, b: DataSchema<B>): DataSchema<A & B> {
  const [ja, jb] = [a.json, b.json] as Array<{ properties: JsonSchema, required: string[] } & JsonSchema>
  return make({ ...ja, properties: { ...ja!.properties, ...jb!.properties }, required: [...ja!.required, ...jb!.required] })
}

/** Every path of leaves `schema` lists, list items as `[]` (`guias[].valorTotal`): the test's check that each is written. */
export function schemaPaths (json: JsonSchema, prefix = ''): string[] {
  const types = typesOf(json)
  if (types.includes('object') && json.properties !== undefined) {
    return Object.entries(json.properties as Record<string, JsonSchema>).flatMap(([key, child]) => schemaPaths(child, prefix === '' ? key : `${prefix}.${key}`))
  }
  if (types.includes('array') && json.items !== undefined) return schemaPaths(json.items as JsonSchema, `${prefix}[]`)
  return [prefix]
}
