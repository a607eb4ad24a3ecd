import { describe, expect, it } from 'vitest'
import { checkDescriptor } from './descriptor.js'
import { isInside } from './files.js'
import { MASK, maskSecrets } from './job.js'
import { LineSplitter, MAX_LINE_CHARS } from './output.js'

describe('checkDescriptor', () => {
  const good = { schemaVersion: '1.0', id: 'dec-poa', name: 'DEC', version: '1.2.0', enabled: true, command: ['node', 'index.mjs'] }

  it('reads a descriptor with its defaults', () => {
    expect(checkDescriptor(good, '/pkgs/dec')).toEqual({ ok: true, pkg: { ...good, timeoutMs: undefined, singleton: false, dir: '/pkgs/dec' } })
    expect(checkDescriptor({ ...good, timeoutMs: 600_000, singleton: true, description: 'extra fields are ignored' }, '/d')).toMatchObject({ ok: true, pkg: { timeoutMs: 600_000, singleton: true } })
  })

  it('names every problem of a broken descriptor', () => {
    const outcome = checkDescriptor({ schemaVersion: '2.0', id: '../x', enabled: 'yes', command: 'node x.js', timeoutMs: -1, singleton: 1 }, '/d')
    expect(outcome.ok).toBe(false)
    const problems = outcome.ok ? [] : outcome.problems
    expect(problems).toHaveLength(8)
    for (const field of ['schemaVersion', 'id', 'name', 'version', 'enabled', 'command', 'timeoutMs', 'singleton']) {
      expect(problems.some((p) => p.includes(`"${field}"`)), field).toBe(true)
    }
    expect(checkDescriptor([good], '/d').ok).toBe(false)
    expect(checkDescriptor({ ...good, command: [] }, '/d').ok).toBe(false)
    expect(checkDescriptor({ ...good, command: ['node', 3] }, '/d').ok).toBe(false)
  })
})

describe('maskSecrets', () => {
  it('masks senha and password at any depth and in arrays, leaving the rest and the original alone', () => {
    const input = { senha: 's', a: [{ Password: 'p', cnpj: '1' }, 'senha'], b: { c: { SENHA: 3, d: null } }, password: null }
    expect(maskSecrets(input)).toEqual({ senha: MASK, a: [{ Password: MASK, cnpj: '1' }, 'senha'], b: { c: { SENHA: MASK, d: null } }, password: null })
    expect(input.senha).toBe('s')
  })

  it('keeps a "__proto__" key as a plain field', () => {
    const masked = maskSecrets(JSON.parse('{"__proto__": {"senha": "x"}, "a": 1}') as Record<string, unknown>)
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype)
    expect(JSON.stringify(masked)).toBe('{"__proto__":{"senha":"********"},"a":1}')
  })
})

describe('LineSplitter', () => {
  it('joins lines split across chunks, strips CR, and flushes the last line', () => {
    const lines: string[] = []
    const s = new LineSplitter((l) => lines.push(l))
    s.push('AGENT_RES')
    s.push('ULT_JSON={"a":1}\r\nsecond\nthi')
    s.push('rd')
    s.end()
    expect(lines).toEqual(['AGENT_RESULT_JSON={"a":1}', 'second', 'third'])
  })

  it('drops a line past the cap whole and reads the next one', () => {
    const lines: string[] = []
    const s = new LineSplitter((l) => lines.push(l))
    const chunk = 'x'.repeat(1024 * 1024)
    for (let i = 0; i <= MAX_LINE_CHARS / chunk.length; i++) s.push(chunk)
    s.push('tail\nnext\n')
    expect(lines).toEqual(['next'])
  })
})

describe('isInside', () => {
  it('accepts paths strictly inside the root only', () => {
    expect(isInside('/a/b', '/a/b/c.pdf')).toBe(true)
    expect(isInside('/a/b', '/a/b')).toBe(false)
    expect(isInside('/a/b', '/a/bc/d')).toBe(false)
    expect(isInside('/a/b', '/a/x')).toBe(false)
    expect(isInside('/a/b', '/a/b/..x/y')).toBe(true)
  })
})
