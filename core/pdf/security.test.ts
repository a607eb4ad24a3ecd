/**
 * The standard security handler against files qpdf (an independent writer) encrypted
 * here, one per revision: the empty user password opens each, a real user password is
 * refused, and the permission rules follow ISO 32000-1 Table 22.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PDFDict, PDFDocument, PDFName } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makePdf, qpdf } from '../../fixtures/pdf/samples.js'
import { toolsAvailable } from '../../fixtures/pdf/verify.js'
import { firstId, missingPermissions, openSecurity, rc4 } from './security.js'
import type { SecurityHandler } from './security.js'

let dir: string
let plain: Uint8Array
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'razao-security-'))
  plain = await makePdf([{}])
})
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

/** Opens the handler of a file qpdf encrypted with `args` (between --encrypt and --). */
async function handlerOf (args: string[], name: string): Promise<SecurityHandler> {
  const encrypted = await qpdf(dir, plain, ['--allow-weak-crypto', '--encrypt', ...args, '--'], name)
  const doc = await PDFDocument.load(encrypted, { ignoreEncryption: true, updateMetadata: false })
  const encrypt = doc.context.lookup(doc.context.trailerInfo.Encrypt)
  if (!(encrypt instanceof PDFDict)) throw new Error('no encryption dictionary')
  return openSecurity(encrypt, firstId(doc.context.trailerInfo.ID))
}

describe('rc4', () => {
  it('gives the published test vectors ("Key"/"Plaintext", "Wiki"/"pedia") and undoes itself', () => {
    expect(rc4(Buffer.from('Key'), Buffer.from('Plaintext')).toString('hex')).toBe('bbf316e8d940af0ad3')
    expect(rc4(Buffer.from('Wiki'), Buffer.from('pedia')).toString('hex')).toBe('1021bf0420')
    expect(rc4(Buffer.from('Key'), rc4(Buffer.from('Key'), Buffer.from('texto'))).toString()).toBe('texto')
  })
})

describe.skipIf(!toolsAvailable('qpdf'))('openSecurity', () => {
  it.each([
    ['RC4 40-bit', ['', 'dono', '40'], 2, 'rc4', 5],
    ['RC4 128-bit', ['', 'dono', '128', '--use-aes=n'], 3, 'rc4', 16],
    ['RC4 128-bit in a V 4 handler', ['', 'dono', '128', '--use-aes=n', '--force-V4'], 4, 'rc4', 16],
    ['AES-128', ['', 'dono', '128', '--use-aes=y'], 4, 'aesv2', 16],
    ['AES-256, Adobe\'s deprecated revision 5', ['', 'dono', '256', '--force-R5'], 5, 'aesv3', 32],
    ['AES-256', ['', 'dono', '256'], 6, 'aesv3', 32]
  ] as const)('opens %s with the empty user password', async (_label, args, revision, method, keyBytes) => {
    const handler = await handlerOf([...args], `open-r${revision}-${method}`)
    expect(handler).toMatchObject({ revision, strings: method, streams: method, encryptMetadata: true })
    expect(handler.fileKey).toHaveLength(keyBytes)
  })

  it.each([['40'], ['128'], ['256']])('refuses a %s-bit file that needs a user password, saying a password is needed', async (bits) => {
    await expect(handlerOf(['usuario', 'dono', bits], `user-${bits}`)).rejects.toMatchObject({ code: 'SIGN_PDF_UNSUPPORTED', message: expect.stringMatching(/needs a password to be opened/) })
  })

  it('reads a /P written unsigned (4294967292) as the signed -4 the key algorithm hashes', async () => {
    const encrypted = Buffer.from(await qpdf(dir, plain, ['--allow-weak-crypto', '--encrypt', '', 'dono', '128', '--use-aes=n', '--'], 'unsigned-p')).toString('latin1')
    expect(encrypted).toContain('/P -4')
    const doc = await PDFDocument.load(Buffer.from(encrypted.replace('/P -4', '/P 4294967292'), 'latin1'), { ignoreEncryption: true, updateMetadata: false })
    const handler = openSecurity(doc.context.lookup(doc.context.trailerInfo.Encrypt, PDFDict), firstId(doc.context.trailerInfo.ID))
    expect(handler.permissions).toBe(-4)
  })

  it('keeps the XMP metadata stream in clear when /EncryptMetadata is false', async () => {
    const handler = await handlerOf(['', 'dono', '256', '--cleartext-metadata'], 'clear-metadata')
    expect(handler.encryptMetadata).toBe(false)
  })

  it('refuses a handler other than the standard one (certificate encryption) by name', async () => {
    const doc = await PDFDocument.create()
    const dict = doc.context.obj({ Filter: PDFName.of('Adobe.PubSec'), V: 4, R: 4 })
    expect(() => openSecurity(dict, Buffer.alloc(0))).toThrow(/Adobe\.PubSec/)
  })
})

describe('missingPermissions (ISO 32000-1 Table 22)', () => {
  const handler = (permissions: number, revision = 6): SecurityHandler => ({ revision, permissions, strings: 'aesv3', streams: 'aesv3', encryptMetadata: true, fileKey: Buffer.alloc(32), label: 'AES-256 (revision 6)' })
  const bit = (n: number): number => 1 << (n - 1)
  const all = -4

  it('allows everything when every permission bit is set', () => {
    expect(missingPermissions(handler(all), { stamps: true, page: true })).toEqual([])
  })

  it('needs bits 4 and 6 for the signature field alone: bit 9 (fill existing fields) is not enough to create one', () => {
    expect(missingPermissions(handler(all & ~bit(4)), { stamps: false, page: false })).toEqual([expect.stringMatching(/bit 4/)])
    expect(missingPermissions(handler(all & ~bit(6)), { stamps: false, page: false })).toEqual([expect.stringMatching(/bit 6/)])
    expect(missingPermissions(handler(all & ~bit(9)), { stamps: true, page: true })).toEqual([])
  })

  it('needs bit 11 for the final page from revision 3 on, and only bit 4 in revision 2', () => {
    expect(missingPermissions(handler(all & ~bit(11)), { stamps: true, page: false })).toEqual([])
    expect(missingPermissions(handler(all & ~bit(11)), { stamps: false, page: true })).toEqual([expect.stringMatching(/bit 11/)])
    expect(missingPermissions(handler(all & ~bit(11), 2), { stamps: false, page: true })).toEqual([])
  })

  it('names the stamp among what bit 6 forbids when stamps are asked for', () => {
    expect(missingPermissions(handler(all & ~bit(6)), { stamps: true, page: false })[0]).toMatch(/stamp/)
  })
})
