import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { Output } from './output.mjs'

function capture (): { out: Output, stdout: () => string, stderr: () => string } {
  const o = new PassThrough()
  const e = new PassThrough()
  let so = ''
  let se = ''
  o.on('data', (c: Buffer) => { so += c.toString() })
  e.on('data', (c: Buffer) => { se += c.toString() })
  return { out: new Output(o, e), stdout: () => so, stderr: () => se }
}

describe('dec-issqn-poa output', () => {
  it('masks a password quoted by an error, also when it holds a quote, in the result and the log', () => {
    const { out, stdout, stderr } = capture()
    out.addSecrets(['p"w-1', 'p"w-12'])
    out.log('step failed: portal said p"w-12 is wrong\nsecond line')
    out.result([{ success: false, cnpj: '11222333000181', competencia: '07/2026', download: null, mode: null, error: 'login: rejected p"w-12' }])
    expect(stderr()).toBe('[dec-issqn-poa] step failed: portal said *** is wrong second line\n')
    expect(stdout()).not.toContain('p\\"w-1')
    expect(JSON.parse(stdout().slice('AGENT_RESULT_JSON='.length)).items[0].error).toBe('login: rejected ***')
  })

  it('keeps the CNPJ of an item whole when the password is the CNPJ itself', () => {
    const { out, stdout } = capture()
    out.addSecrets(['11222333000181'])
    out.result([{ success: true, cnpj: '11222333000181', competencia: '07/2026', download: '/j/dec-11222333000181-2026-07.pdf', mode: 'REPRINT' }])
    expect(JSON.parse(stdout().slice('AGENT_RESULT_JSON='.length))).toEqual({
      success: true, total: 1, succeeded: 1, failed: 0,
      items: [{ success: true, cnpj: '11222333000181', competencia: '07/2026', download: '/j/dec-11222333000181-2026-07.pdf', mode: 'REPRINT' }]
    })
  })

  it('prints the result line once, with success false for a partial or empty run', () => {
    const { out, stdout } = capture()
    out.result([], 'stopped')
    out.result([])
    expect(stdout().match(/AGENT_RESULT_JSON=/g)).toHaveLength(1)
    expect(JSON.parse(stdout().slice('AGENT_RESULT_JSON='.length))).toEqual({ success: false, total: 0, succeeded: 0, failed: 0, items: [], error: 'stopped' })
  })
  it('prints intermediate results (masked, success false, with what is pending) and none after the final one', () => {
    const { out, stdout } = capture()
    out.addSecrets(['s3cr"t'])
    const failed = { success: false, cnpj: '11222333000181', competencia: '07/2026', download: null, mode: null, error: 'login: s3cr"t refused' }
    out.progress([failed], 3)
    out.result([failed, failed, failed])
    out.progress([failed], 3)
    const lines = stdout().trimEnd().split('\n').map((l) => JSON.parse(l.slice('AGENT_RESULT_JSON='.length)))
    expect(lines).toEqual([
      { success: false, total: 3, succeeded: 0, failed: 1, pending: 2, items: [{ ...failed, error: 'login: *** refused' }] },
      { success: false, total: 3, succeeded: 0, failed: 3, items: [1, 2, 3].map(() => ({ ...failed, error: 'login: *** refused' })) }
    ])
  })
})
