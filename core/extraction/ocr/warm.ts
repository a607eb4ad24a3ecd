/**
 * What a pool thread reads to warm up (EXTRACT_WARM): a form-like page of labels, dates,
 * tax ids and amounts, once with a text layer and once as an image-only scan of itself.
 *
 * Why reading is what warms: pdf.js, the plugins and Tesseract's WebAssembly all start
 * slow and get fast as V8 optimises what runs hot. A thread's first scanned page costs
 * about twice the CPU of its second (measured on a generated DARF at 300 dpi: 5.0 s
 * against 2.4 s), and a small image warms only part of that (a strip of a few lines:
 * 3.1 s for the page after it). So the warm-up reads a whole page, drawn here with no
 * tool outside the thread: pdf-lib writes the text page, pdf.js draws it at the service's
 * resolution (page-image.ts) into a JPEG, and that becomes the one image of a second PDF,
 * which then takes the service's own path (no text layer, an image: OCR).
 *
 * The values are made up; nothing is read from them.
 */
import { PDFDocument, rgb, StandardFonts } from 'pdf-lib'
import { openWithPdfJs } from '../../pdf/index.js'
import { renderPageJpeg } from './page-image.js'

/** A4, in points. */
const PAGE = { width: 595, height: 842 }

/** Label and value pairs in the shape tax documents print them. */
const FIELDS: Array<[string, string]> = [
  ['CNPJ', '11.222.333/0001-81'],
  ['Razão Social', 'EXEMPLO DE AQUECIMENTO LTDA'],
  ['Período de Apuração', '31/10/2026'],
  ['Data de Vencimento', '20/11/2026'],
  ['Número do Documento', '07.20.26305.1234567-8'],
  ['Código da Receita', '1708'],
  ['Competência', 'Outubro/2026'],
  ['Valor do Principal', '1.234,56'],
  ['Valor da Multa', '24,69'],
  ['Valor dos Juros', '12,35'],
  ['Valor Total', '1.271,60'],
  ['Município', 'PORTO ALEGRE / RS'],
  ['Inscrição Municipal', '123.456-7'],
  ['Base de Cálculo', '10.500,00'],
  ['Alíquota', '2,00%'],
  ['Valor do ISSQN', '210,00']
]

const COLLECTION_LINE = '85890000012 7 71600328262 5 60730526305 0 12345678202 6'

export interface WarmUpPdfs {
  /** The page with a text layer. */
  text: Uint8Array
  /** The same page as a scan: one grey image, no text. */
  scan: Uint8Array
}

const made = new Map<number, Promise<WarmUpPdfs>>()

/** The two warm-up PDFs, the scan drawn at `dpi`; made once per thread and resolution. */
export async function warmUpPdfs (dpi: number): Promise<WarmUpPdfs> {
  let pdfs = made.get(dpi)
  if (pdfs === undefined) {
    pdfs = makeWarmUpPdfs(dpi)
    made.set(dpi, pdfs)
    pdfs.catch(() => made.delete(dpi))
  }
  return await pdfs
}

async function makeWarmUpPdfs (dpi: number): Promise<WarmUpPdfs> {
  const text = await textPage()
  return { text, scan: await scanOf(text, dpi) }
}

async function textPage (): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const page = doc.addPage([PAGE.width, PAGE.height])
  const regular = await doc.embedFont(StandardFonts.Helvetica)
  const bold = await doc.embedFont(StandardFonts.HelveticaBold)
  page.drawText('DOCUMENTO DE ARRECADAÇÃO - EXEMPLO', { x: 48, y: 790, size: 14, font: bold })
  let y = 750
  FIELDS.forEach(([label, value], i) => {
    // Two columns of boxes, label over value, as the forms draw them.
    const x = i % 2 === 0 ? 48 : 310
    page.drawRectangle({ x: x - 4, y: y - 22, width: 250, height: 36, borderWidth: 0.6, borderColor: rgb(0, 0, 0) })
    page.drawText(label, { x, y: y + 2, size: 8, font: regular })
    page.drawText(value, { x, y: y - 14, size: 11, font: bold })
    if (i % 2 === 1) y -= 44
  })
  y -= 20
  page.drawText('Autenticação mecânica', { x: 48, y, size: 8, font: regular })
  page.drawText(COLLECTION_LINE, { x: 48, y: y - 18, size: 12, font: bold })
  return await doc.save({ useObjectStreams: false })
}

/** JPEG quality of the warm-up scan: what scanners and phones commonly store. */
const JPEG_QUALITY = 75

/**
 * `pdf`'s first page drawn at `dpi` as a JPEG, the one image of a page of the same size:
 * most scans store JPEG, and pdf.js's JPEG decoder (JavaScript here) is warmed with the rest.
 */
async function scanOf (pdf: Uint8Array, dpi: number): Promise<Uint8Array> {
  // The outlines of Helvetica: without them pdf.js draws the letters as boxes.
  const source = await (await openWithPdfJs(pdf, { standardFontData: true })).promise
  let jpeg
  try {
    jpeg = await renderPageJpeg(await source.getPage(1), dpi, PAGE.width * PAGE.height * (dpi / 72) ** 2 + 1, JPEG_QUALITY)
  } finally {
    await source.destroy()
  }
  const doc = await PDFDocument.create()
  const page = doc.addPage([PAGE.width, PAGE.height])
  page.drawImage(await doc.embedJpg(jpeg), { x: 0, y: 0, width: PAGE.width, height: PAGE.height })
  return await doc.save({ useObjectStreams: false })
}
