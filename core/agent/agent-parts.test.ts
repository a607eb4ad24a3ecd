import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { checkDescriptor } from './descriptor.js'
import type { AutomationPackage } from './descriptor.js'
import { packageEnvironment } from './environment.js'
import { placementProblem } from './file-check.js'
import { cleanFileName, MAX_NAME_BYTES } from './file-name.js'
import { isInside } from './paths.js'
import { depthWithin, MASK, maskSecrets } from './job.js'
import { LineSplitter, MAX_LINE_CHARS } from './output.js'

describe('checkDescriptor', () => {
  const good = { schemaVersion: '1.0', id: 'dec-poa', name: 'DEC', version: '1.2.0', enabled: true, command: ['node', 'index.mjs'] }

  it('reads a descriptor with its defaults', () => {
    expect(checkDescriptor(good, '/pkgs/dec')).toEqual({ ok: true, pkg: { ...good, timeoutMs: undefined, singleton: false, env: [], dir: '/pkgs/dec', inputSchema: undefined, checkInput: undefined } })
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

  it('reads the declared environment variables, refusing bad names and the services\' own settings', () => {
    expect(checkDescriptor({ ...good, env: ['DEC_PORTAL_URL', 'HTTPS_PROXY', 'DEC_PORTAL_URL'] }, '/d')).toMatchObject({ ok: true, pkg: { env: ['DEC_PORTAL_URL', 'HTTPS_PROXY'] } })
    for (const env of ['DEC_PORTAL_URL', ['A-B'], [''], [3], Array.from({ length: 101 }, (_, i) => `V${i}`)]) {
      expect(checkDescriptor({ ...good, env }, '/d'), JSON.stringify(env)).toMatchObject({ ok: false, problems: [expect.stringContaining('"env" must be an array')] })
    }
    const reserved = checkDescriptor({ ...good, env: ['GATEWAY_MASTER_KEY', 'SIGN_TSA_URL', 'DATABASE_URL', 'AGENT_API_KEY', 'OK_ONE'] }, '/d')
    expect(reserved).toEqual({ ok: false, problems: [expect.stringMatching(/GATEWAY_MASTER_KEY, SIGN_TSA_URL, DATABASE_URL, AGENT_API_KEY$/)] })
  })

  it('refuses an inputSchema that is not a JSON Schema the agent reads, naming the keyword', () => {
    for (const inputSchema of [[], 'object', { type: 'objekt' }, { type: 'object', propertys: {} }, { type: 'string', format: 'cnpj' }, { $schema: 'https://json-schema.org/draft/2020-12/schema' }]) {
      const outcome = checkDescriptor({ ...good, inputSchema }, '/d')
      expect(outcome, JSON.stringify(inputSchema)).toMatchObject({ ok: false, problems: [expect.stringContaining('"inputSchema"')] })
    }
    expect(checkDescriptor({ ...good, inputSchema: { type: 'object', propertys: {} } }, '/d')).toMatchObject({ ok: false, problems: [expect.stringContaining('propertys')] })
  })

  it('words the other refusals of a declared shape', () => {
    const outcome = checkDescriptor({ ...good, inputSchema: { type: 'object', additionalProperties: false, properties: { mode: { enum: ['a', 'b'] }, 'odd key': { type: ['string', 'null'], maxLength: 3 }, code: { type: 'string', const: 'x' } } } }, '/d')
    const check = outcome.ok ? outcome.pkg.checkInput! : () => 'not read'
    expect(check({ other: 1 })).toBe('input.other is not a field this automation reads.')
    expect(check({ mode: 'c' })).toBe('input.mode must be one of "a", "b".')
    expect(check({ 'odd key': 5 })).toBe('input["odd key"] must be a string or null.')
    expect(check({ 'odd key': 'long' })).toBe('input["odd key"] must be at most 3 characters long.')
    expect(check({ code: 'y' })).toBe('input.code is not valid: it must be equal to constant.')
    expect(check({ mode: 'a', 'odd key': null, code: 'x' })).toBeUndefined()
  })
})

describe('the DEC package\'s declared input shape', () => {
  // The descriptor as shipped: what the agent checks a DEC run against before queueing it.
  const descriptor = JSON.parse(readFileSync(new URL('../../plugins/automations/dec-issqn-poa/automation.json', import.meta.url), 'utf8')) as unknown
  const outcome = checkDescriptor(descriptor, '/d')
  const pkg = (outcome.ok ? outcome.pkg : undefined) as AutomationPackage
  const company = { razaoSocial: 'Clínica', cnpj: '11.222.333/0001-81', senha: 's3nh@', inscricaoMunicipal: '1', competenciaAno: '2026', competenciaMes: '7' }
  const check = (input: Record<string, unknown>): string | undefined => pkg.checkInput!(input)

  it('is read, and lets through every input the package runs', () => {
    expect(outcome.ok).toBe(true)
    expect(pkg.inputSchema).toMatchObject({ type: 'object', required: ['empresas'] })
    for (const input of [
      { empresas: [company] },
      { empresas: [{ ...company, cnpj: '12ABC34501DE35', competenciaAno: 2026, competenciaMes: 12 }], headless: false, slowMo: 250 },
      { empresas: [{ ...company, cnpj: '11222333000181', competenciaMes: '07', razaoSocial: undefined }], extra: 'ignored' }
    ]) expect(check(JSON.parse(JSON.stringify(input))), JSON.stringify(input)).toBeUndefined()
  })

  it('names the field of a bad input and says what it must be, never quoting the value', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'input.empresas is required (the companies to declare, 1 to 500).'],
      [{ empresas: [] }, 'input.empresas must hold at least 1 item(s) (the companies to declare, 1 to 500).'],
      [{ empresas: 'x' }, 'input.empresas must be an array (the companies to declare, 1 to 500).'],
      [{ empresas: [company], headless: 'yes' }, 'input.headless must be a boolean (false opens a browser window).'],
      [{ empresas: [company], slowMo: 9000 }, 'input.slowMo must be <= 5000 (milliseconds between browser actions, 0 to 5000).'],
      [{ empresas: [company, { ...company, senha: undefined }] }, 'input.empresas[1].senha is required (the company\'s portal password).'],
      [{ empresas: [{ ...company, senha: '' }] }, 'input.empresas[0].senha must not be empty (the company\'s portal password).'],
      [{ empresas: [{ ...company, cnpj: '1122233300018' }] }, 'input.empresas[0].cnpj is not valid (a CNPJ: 14 characters, digits or (alphanumeric CNPJ) letters then 2 digits, punctuation allowed).'],
      [{ empresas: [{ ...company, competenciaAno: '1999' }] }, 'input.empresas[0].competenciaAno is not valid (the year, 4 digits, 2000 or later: "2026" or 2026).'],
      [{ empresas: [{ ...company, competenciaMes: 13 }] }, 'input.empresas[0].competenciaMes is not valid (the month, 1 to 12: "7", "07" or 7).'],
      [{ empresas: [null] }, 'input.empresas[0] must be an object.']
    ]
    for (const [input, message] of cases) expect(check(JSON.parse(JSON.stringify(input))), JSON.stringify(input)).toBe(message)
    expect(check({ empresas: [{ ...company, senha: 7 }] })).not.toContain('7')
  })
})

describe('packageEnvironment', () => {
  const agentEnv = {
    PATH: '/bin', HOME: '/home/agent', LANG: 'pt_BR.UTF-8', LC_ALL: 'C', TMPDIR: '/tmp', TZ: 'America/Sao_Paulo',
    GATEWAY_MASTER_KEY: 'a'.repeat(64), SIGN_TSA_URL: 'https://user:senha@tsa.example/', DATABASE_URL: 'postgres://u:p@h/db',
    AGENT_API_KEY: 'k', AGENT_JOB_ID: 'forged', SOME_CLOUD_CREDENTIAL: 'x', DEC_PORTAL_URL: 'http://127.0.0.1:1/'
  }

  it('passes the allowed names, the declared ones and the job\'s own variables, nothing else', () => {
    const env = packageEnvironment(agentEnv, ['DEC_PORTAL_URL', 'NOT_SET'], { AGENT_JOB_ID: 'j1', AGENT_JOB_DIR: '/rt/jobs/j1' })
    expect(env).toEqual({
      PATH: '/bin', HOME: '/home/agent', LANG: 'pt_BR.UTF-8', LC_ALL: 'C', TMPDIR: '/tmp', TZ: 'America/Sao_Paulo',
      DEC_PORTAL_URL: 'http://127.0.0.1:1/', AGENT_JOB_ID: 'j1', AGENT_JOB_DIR: '/rt/jobs/j1'
    })
  })

  it('never passes a reserved name, even declared', () => {
    const env = packageEnvironment(agentEnv, ['GATEWAY_MASTER_KEY', 'SIGN_TSA_URL', 'DATABASE_URL', 'AGENT_API_KEY'], {})
    expect(Object.keys(env).sort()).toEqual(['HOME', 'LANG', 'LC_ALL', 'PATH', 'TMPDIR', 'TZ'])
  })
})

describe('depthWithin', () => {
  const nest = (levels: number): unknown => {
    let v: unknown = 1
    for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { a: v }
    return v
  }

  it('counts objects and arrays, without recursion even for very deep values', () => {
    expect(depthWithin(1, 0)).toBe(true)
    expect(depthWithin({}, 0)).toBe(false)
    expect(depthWithin(nest(64), 64)).toBe(true)
    expect(depthWithin(nest(65), 64)).toBe(false)
    expect(depthWithin({ a: [1, { b: nest(62) }] }, 64)).toBe(false)
    expect(depthWithin(nest(200_000), 64)).toBe(false)
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

describe('cleanFileName', () => {
  it('cuts between code points, within 200 characters and 255 bytes, keeping a short extension', () => {
    expect(cleanFileName('a'.repeat(199) + '📄')).toBe('a'.repeat(199) + '📄')
    expect(cleanFileName('a'.repeat(200) + '📄')).toBe('a'.repeat(200))
    expect(cleanFileName('a'.repeat(199) + '📄📄.pdf')).toBe('a'.repeat(196) + '.pdf')
    const wide = cleanFileName('ção'.repeat(100) + '.xlsx')!
    expect(Buffer.byteLength(wide)).toBeLessThanOrEqual(MAX_NAME_BYTES)
    expect(wide.endsWith('.xlsx')).toBe(true)
    expect(() => encodeURIComponent(wide)).not.toThrow()
    expect(cleanFileName('x'.repeat(300) + '.a-very-long-extension-indeed')).toBe('x'.repeat(200))
  })

  it('keeps the last segment, replaces half surrogates and drops control characters', () => {
    expect(cleanFileName('C:\\dir\\report.pdf')).toBe('report.pdf')
    expect(cleanFileName('../../etc/passwd')).toBe('passwd')
    expect(cleanFileName('half \ud83d.txt')).toBe('half \ufffd.txt')
    expect(cleanFileName('\udc04x')).toBe('\ufffdx')
    expect(cleanFileName('a\u0000b\nc.txt')).toBe('abc.txt')
    for (const empty of ['', ' ', '.', '..', '/', '\u0007']) expect(cleanFileName(empty), JSON.stringify(empty)).toBeUndefined()
    expect(cleanFileName(undefined)).toBeUndefined()
  })
})

describe('placementProblem', () => {
  const placement = { allowedRoots: ['/pkgs', '/rt'], jobsRoot: '/rt/jobs', privateRoots: ['/rt/inputs', '/rt/files'] }

  it('allows the job\'s own folder and the allowed roots, never another job\'s folder nor the agent\'s own', () => {
    expect(placementProblem('/rt/jobs/j1/a.pdf', 'j1', placement)).toBeUndefined()
    expect(placementProblem('/pkgs/dec/out/a.pdf', 'j1', placement)).toBeUndefined()
    expect(placementProblem('/rt/jobs/j2/a.pdf', 'j1', placement)).toBe('the file is in another job\'s folder')
    // /rt is an allowed root, yet the inputs (passwords) and the index under it are not.
    expect(placementProblem('/rt/inputs/j2.json', 'j1', placement)).toMatch(/agent's own folders/)
    expect(placementProblem('/rt/files/index.json', 'j1', placement)).toMatch(/agent's own folders/)
    expect(placementProblem('/etc/shadow', 'j1', placement)).toMatch(/outside FILE_ALLOWED_ROOTS/)
  })
})
