/**
 * Each plugin's declared shape of `data` (`schema.ts`: /openapi.json's `components.schemas`)
 * and what the plugin outputs are the same (issue 33, item 5). Every fixture, generated and
 * real, is read as the service reads it; the answer's `data` must validate against its
 * type's schema (no field missing, none extra, each of its type: objects admit no other
 * key), and every field the schema lists must be reached in at least one fixture's output
 * (its object not null, its list not empty), but for the few NOT_REACHED names with the
 * reason. The compiler keeps each
 * schema and the parser's TypeScript type together (`DataSchema<Darf>`).
 */
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { schema as s } from '../core/plugin-api.js'
import { corpus } from '../fixtures/extraction/corpus.js'
import { extractPdf } from '../fixtures/extraction/extract.js'
import { plugins } from './index.js'

const ajv = new Ajv({ allErrors: true, strict: true })
ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/)

/**
 * Fields no fixture reaches: their object is null, or their list empty, in every fixture,
 * so nothing shows that the parser writes them as declared. Listed with the reason, until
 * a fixture prints them (the test fails when one is reached, so the list only shrinks).
 */
const NOT_REACHED: Record<string, { paths: string[], why: string }> = {
  'pgdas-extrato': {
    paths: ['atividades[].parcelas[].numero', 'atividades[].parcelas[].valor', 'atividades[].substituicaoTributaria[]', 'atividades[].tributacaoMonofasica[]', 'rbt12p.interno', 'rbt12p.externo', 'rbt12p.total'],
    why: 'no fixture prints installments, tax substitution or single-phase taxation in an activity, nor an RBT12p row'
  },
  'pgdas-declaracao': { paths: ['filiais[]', 'rbt12p.interno', 'rbt12p.externo', 'rbt12p.total'], why: 'no fixture declares branches or an RBT12p row' },
  darf: { paths: ['vias.divergencias[]'], why: 'the copies of every numbered-box fixture agree' },
  'nfse-danfse': {
    paths: ['intermediario', 'destinatario'].flatMap((p) => ['documento', 'inscricaoMunicipal', 'nome', 'email', 'telefone', 'endereco', 'municipio', 'uf', 'cep', 'codigoIbge', 'simplesNacional', 'regimeApuracaoSn'].map((f) => `${p}.${f}`)),
    why: 'no fixture has an intermediary or a recipient'
  }
}

/** The leaf paths `value` reaches (null leaves included), list items as `[]`. */
function reachedPaths (value: unknown, prefix = '', into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) reachedPaths(item, `${prefix}[]`, into)
  else if (value !== null && typeof value === 'object') for (const [key, v] of Object.entries(value)) reachedPaths(v, prefix === '' ? key : `${prefix}.${key}`, into)
  else into.add(prefix)
  return into
}

/** Fields a schema declares always null (`alwaysNull`: the type never prints them): no output fills them. */
function alwaysNullPaths (json: Record<string, unknown>, prefix = ''): string[] {
  if (json.type === 'null') return [prefix]
  const properties = json.properties as Record<string, Record<string, unknown>> | undefined
  if (properties !== undefined) return Object.entries(properties).flatMap(([key, child]) => alwaysNullPaths(child, prefix === '' ? key : `${prefix}.${key}`))
  const items = json.items as Record<string, unknown> | undefined
  return items === undefined ? [] : alwaysNullPaths(items, `${prefix}[]`)
}

describe('each plugin\'s data schema and its outputs are equal', () => {
  const entries = corpus()

  for (const plugin of plugins) {
    it(plugin.id, async () => {
      expect(plugin.dataSchema, `plugins/${plugin.id} declares no dataSchema (schema.ts, docs/plugins.md step 7)`).toBeDefined()
      const json = plugin.dataSchema!.json
      const validate = ajv.compile(json)
      const filled = new Set<string>()
      let read = 0
      for (const entry of entries.filter((e) => e.type === plugin.id)) {
        const result = await extractPdf((await entry.load()).pdf)
        if (result.documentType !== plugin.documentType || result.data === null) continue
        read++
        expect(validate(result.data), `${entry.name}: ${ajv.errorsText(validate.errors)}`).toBe(true)
        for (const path of reachedPaths(result.data)) filled.add(path)
      }
      expect(read, `${plugin.id}: no fixture was read as ${plugin.documentType}`).toBeGreaterThan(0)
      // Every field the schema lists is written by the parser in some fixture: validation
      // above says it is there whenever its object is; this says some fixture reaches it.
      const never = s.schemaPaths(json).filter((p) => !filled.has(p) && !alwaysNullPaths(json).includes(p))
      expect(never.sort(), `${plugin.id}: fields the schema lists that no fixture's output reaches`).toEqual([...NOT_REACHED[plugin.id]?.paths ?? []].sort())
    }, 180_000)
  }
})

describe('the schema helpers', () => {
  it('write JSON Schema that refuses a missing field, an extra one and a wrong type, and admits null where declared', () => {
    const validate = ajv.compile(s.object({ a: s.text(), b: s.notNull(s.integer()), c: s.list(s.object({ d: s.money() })), e: s.oneOf(['X', 'Y']) }).json)
    expect(validate({ a: null, b: 1, c: [{ d: 1.5 }], e: null })).toBe(true)
    expect(validate({ a: 'x', b: 1, c: [], e: 'X' })).toBe(true)
    expect(validate({ a: null, b: null, c: [], e: null })).toBe(false)
    expect(validate({ b: 1, c: [], e: null })).toBe(false)
    expect(validate({ a: null, b: 1, c: [], e: null, f: 1 })).toBe(false)
    expect(validate({ a: null, b: 1, c: [{ d: '1,50' }], e: null })).toBe(false)
    expect(validate({ a: null, b: 1, c: [], e: 'Z' })).toBe(false)
    expect(s.schemaPaths(s.object({ a: s.text(), c: s.nullable(s.list(s.object({ d: s.money() }))) }).json)).toEqual(['a', 'c[].d'])
  })
})
