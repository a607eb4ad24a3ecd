/**
 * The plain @signpdf baseline: its documented P12 signing (README of @signpdf/signpdf:
 * pdf-lib placeholder, `pdfDoc.save()`, `P12Signer`, `signpdf.sign`) of the same file.
 *
 * When @signpdf/placeholder-pdf-lib and @signpdf/signer-p12 are installed they are used
 * as published. Otherwise this file does what those two packages do, step by step, with
 * what is installed (@signpdf/signpdf, @signpdf/utils, pdf-lib, node-forge): the same
 * placeholder objects registered as a PDFInvalidObject and a whole-file pdf-lib save; a
 * signer that opens the PKCS#12 with forge on every call and signs with forge's PKCS#7
 * (content-type, signing-time, message-digest). The placeholder is 16384 hex digits:
 * the default 8192 is too small for a three-certificate chain.
 */
import forge from 'node-forge'
import { PDFDocument, PDFInvalidObject, PDFName, PDFString } from 'pdf-lib'
import { SignPdf } from '@signpdf/signpdf'
import { Signer } from '@signpdf/utils'

export const BASELINE_SIGNATURE_LENGTH = 16_384

interface PublishedPackages {
  pdflibAddPlaceholder: (o: Record<string, unknown>) => void
  P12Signer: new (p12: Buffer, options: { passphrase: string }) => Signer
}

let published: PublishedPackages | null | undefined

/** The published packages, when installed (imported by name so that the type check does not need them). */
async function publishedPackages (): Promise<PublishedPackages | null> {
  if (published !== undefined) return published
  try {
    const placeholderName = '@signpdf/placeholder-pdf-lib'
    const signerName = '@signpdf/signer-p12'
    const placeholder = await import(placeholderName) as { pdflibAddPlaceholder: PublishedPackages['pdflibAddPlaceholder'] }
    const signer = await import(signerName) as { P12Signer: PublishedPackages['P12Signer'] }
    published = { pdflibAddPlaceholder: placeholder.pdflibAddPlaceholder, P12Signer: signer.P12Signer }
  } catch {
    published = null
  }
  return published
}

export async function baselineKind (): Promise<'published packages' | 'same steps, installed packages'> {
  return (await publishedPackages()) === null ? 'same steps, installed packages' : 'published packages'
}

function addPlaceholder (pdfDoc: PDFDocument): void {
  const { context } = pdfDoc
  const signature = PDFInvalidObject.of(Buffer.from(
    `<<\n/Type /Sig\n/Filter /Adobe.PPKLite\n/SubFilter /adbe.pkcs7.detached\n/ByteRange [0 /********** /********** /**********]\n` +
    `/Contents <${'0'.repeat(BASELINE_SIGNATURE_LENGTH)}>\n/Reason (benchmark)\n/M ${PDFString.fromDate(new Date()).toString()}\n` +
    '/ContactInfo (bench@example.com)\n/Name (bench)\n/Location (bench)\n/Prop_Build << /Filter << /Name /Adobe.PPKLite >> >>\n>>'))
  const signatureRef = context.register(signature)
  const page = pdfDoc.getPages()[0]!
  const widget = context.register(context.obj({
    Type: 'Annot', Subtype: 'Widget', FT: 'Sig', Rect: [0, 0, 0, 0], V: signatureRef,
    T: PDFString.of('Signature1'), F: 4, P: page.ref
  }))
  page.node.addAnnot(widget)
  // The benchmark inputs have no form; the published package would merge into an existing one.
  pdfDoc.catalog.set(PDFName.of('AcroForm'), context.register(context.obj({ Type: 'AcroForm', SigFlags: 3, Fields: [widget] })))
}

/** What P12Signer does: parse the PFX on each call, forge PKCS#7 with signing-time. */
class ForgeP12Signer extends Signer {
  constructor (private readonly p12: Buffer, private readonly passphrase: string) { super() }

  override async sign (pdfBuffer: Buffer, signingTime?: Date): Promise<Buffer> {
    const p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(this.p12.toString('binary')), false, this.passphrase)
    const certBags = p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag!] ?? []
    const keyBags = p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag!] ?? []
    const privateKey = keyBags[0]!.key as forge.pki.rsa.PrivateKey
    const p7 = forge.pkcs7.createSignedData()
    p7.content = forge.util.createBuffer(pdfBuffer.toString('binary'))
    let certificate: forge.pki.Certificate | undefined
    for (const bag of certBags) {
      const cert = bag.cert!
      p7.addCertificate(cert)
      const pub = cert.publicKey as forge.pki.rsa.PublicKey
      if (pub.n.compareTo(privateKey.n) === 0 && pub.e.compareTo(privateKey.e) === 0) certificate = cert
    }
    p7.addSigner({
      key: privateKey,
      certificate: certificate!,
      digestAlgorithm: forge.pki.oids.sha256!,
      authenticatedAttributes: [
        { type: forge.pki.oids.contentType!, value: forge.pki.oids.data! },
        { type: forge.pki.oids.signingTime!, value: (signingTime ?? new Date()) as unknown as string },
        { type: forge.pki.oids.messageDigest! }
      ]
    })
    p7.sign({ detached: true })
    return Buffer.from(forge.asn1.toDer(p7.toAsn1()).getBytes(), 'binary')
  }
}

const signpdf = new SignPdf()

/** Signs `pdf` the @signpdf way; returns the signed bytes. */
export async function signWithBaseline (pdf: Uint8Array, p12: Buffer, passphrase: string): Promise<Buffer> {
  const pdfDoc = await PDFDocument.load(pdf)
  const packages = await publishedPackages()
  if (packages === null) addPlaceholder(pdfDoc)
  else packages.pdflibAddPlaceholder({ pdfDoc, reason: 'benchmark', contactInfo: 'bench@example.com', name: 'bench', location: 'bench', signatureLength: BASELINE_SIGNATURE_LENGTH })
  const withPlaceholder = Buffer.from(await pdfDoc.save())
  const signer = packages === null ? new ForgeP12Signer(p12, passphrase) : new packages.P12Signer(p12, { passphrase })
  return await signpdf.sign(withPlaceholder, signer)
}
