/**
 * The appended final page: a signature manifest with labelled rows and a QR code.
 * The page is a new object in the incremental update (only the page tree's /Kids and
 * /Count change in existing objects). The QR code is drawn as filled rectangles, one
 * per run of dark modules, so it needs no image and stays sharp at any zoom.
 *
 * The content is written as operator text here, not through pdf-lib's drawing calls: those
 * build an object per operator and compress the stream with a JavaScript deflate when the
 * file is written, which made the page cost as much as the rest of a one-page signature.
 * The page has two content streams (§7.8.2: one sequence of operators): the text, deflated
 * by zlib per signature, and the QR code, which is the same for every signature with the
 * same validator URL and so is deflated once per thread and reused.
 */
import { deflateSync } from 'node:zlib'
import { PDFName } from 'pdf-lib'
import type { PDFFont, PDFPage } from 'pdf-lib'
import QRCode from 'qrcode'
import type { Tracked } from './incremental.js'
import { encodedText, num, printable, wrapText } from './text.js'

export interface FinalPageContent {
  title: string
  subtitle: string
  rows: Array<[label: string, value: string]>
  /** A QR code and its caption; none for a signature the QR's validator would not accept. */
  qr: { text: string, caption: string } | undefined
  footer: string
}

/** A4 portrait, in points. */
const A4: [number, number] = [595.28, 841.89]
const MARGIN = 56
/** Fill colours as `rg` operands. */
const INK = '0.1 0.16 0.4'
const MUTED = '0.35 0.35 0.4'
const BLACK = '0 0 0'

/** Text operators in one BT/ET block: font /F1 (regular) or /F2 (bold), size, colour, position. */
class TextOps {
  private ops = 'BT'
  constructor (private readonly fonts: { regular: PDFFont, bold: PDFFont }) {}

  show (text: string, bold: boolean, size: number, color: string, x: number, y: number): void {
    const font = bold ? this.fonts.bold : this.fonts.regular
    this.ops += ` /${bold ? 'F2' : 'F1'} ${num(size)} Tf ${color} rg 1 0 0 1 ${num(x)} ${num(y)} Tm ${encodedText(font, text)} Tj`
  }

  toString (): string { return `${this.ops} ET` }
}

/** Appends the manifest page as the document's last page and returns it. */
export function appendFinalPage (tracked: Tracked, fonts: { regular: PDFFont, bold: PDFFont }, content: FinalPageContent): PDFPage {
  const { doc } = tracked.opened
  const { context } = doc
  const page = doc.addPage(A4)
  const { regular, bold } = fonts
  const width = A4[0] - 2 * MARGIN
  const text = new TextOps(fonts)
  let y = A4[1] - MARGIN - 18

  text.show(printable(bold, content.title), true, 18, INK, MARGIN, y)
  y -= 22
  for (const line of wrapText(regular, printable(regular, content.subtitle), 10, width)) {
    text.show(line, false, 10, MUTED, MARGIN, y)
    y -= 13
  }
  y -= 8
  const rule = `${INK} rg ${num(MARGIN)} ${num(y)} ${num(width)} 1 re f`
  y -= 24

  const labelWidth = 170
  for (const [label, value] of content.rows) {
    const lines = wrapText(regular, printable(regular, value), 10.5, width - labelWidth)
    text.show(printable(bold, label), true, 10.5, INK, MARGIN, y)
    for (const line of lines) {
      text.show(line, false, 10.5, BLACK, MARGIN + labelWidth, y)
      y -= 14
    }
    y -= 8
  }

  y -= 12
  const qrSide = 130
  const qr = content.qr === undefined ? undefined : qrStream(content.qr.text, MARGIN, y - qrSide, qrSide)
  let captionY = y - 12
  for (const line of content.qr === undefined ? [] : wrapText(regular, printable(regular, content.qr.caption), 10, width - qrSide - 20)) {
    text.show(line, false, 10, MUTED, MARGIN + qrSide + 20, captionY)
    captionY -= 13
  }

  let footerY = MARGIN
  for (const line of wrapText(regular, printable(regular, content.footer), 8, width).reverse()) {
    text.show(line, false, 8, MUTED, MARGIN, footerY)
    footerY += 10
  }

  const own = deflateSync(Buffer.from(`q ${rule} ${text.toString()} Q`, 'latin1'))
  page.node.set(PDFName.of('Resources'), context.obj({ Font: { F1: regular.ref, F2: bold.ref } }))
  page.node.set(PDFName.of('Contents'), context.obj([
    context.register(context.stream(own, { Filter: 'FlateDecode' })),
    ...(qr === undefined ? [] : [context.register(context.stream(qr, { Filter: 'FlateDecode' }))])
  ]))
  return page
}

/** A QR code's side in modules and its runs of dark modules per row: [row, first column, length]. */
interface QrRuns { size: number, runs: Array<[number, number, number]> }

function qrRuns (text: string): QrRuns {
  const qr = QRCode.create(text, { errorCorrectionLevel: 'M' })
  const n = qr.modules.size
  const runs: Array<[number, number, number]> = []
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < n; col++) {
      if (!qr.modules.get(row, col)) continue
      // Runs of dark modules in a row become one rectangle.
      let end = col
      while (end + 1 < n && Boolean(qr.modules.get(row, end + 1))) end++
      runs.push([row, col, end - col + 1])
      col = end
    }
  }
  return { size: n, runs }
}

/**
 * Deflated QR streams by text and place. Every final page of a server carries the same one
 * (the validator URL), and encoding it (Reed-Solomon, eight mask patterns scored) and
 * compressing its few hundred rectangles was a large part of a one-page signature.
 */
const qrStreams = new Map<string, Buffer>()

/**
 * The deflated operators that draw `text` as a QR code (error correction M, 4-module quiet
 * zone) in a `side`-point square at `x`, `y`: one path, filled once, in module units (a
 * `cm` scales them), so the rows meet exactly with no rounding between them.
 */
function qrStream (text: string, x: number, y: number, side: number): Buffer {
  const key = `${x} ${y} ${side} ${text}`
  let found = qrStreams.get(key)
  if (found === undefined) {
    const { size: n, runs } = qrRuns(text)
    const cell = side / (n + 8)
    let ops = `q ${BLACK} rg ${num(cell)} 0 0 ${num(cell)} ${num(x + 4 * cell)} ${num(y + 4 * cell)} cm`
    for (const [row, col, length] of runs) ops += ` ${col} ${n - 1 - row} ${length} 1 re`
    found = deflateSync(Buffer.from(`${ops} f Q`, 'latin1'))
    if (qrStreams.size >= 16) qrStreams.clear()
    qrStreams.set(key, found)
  }
  return found
}
