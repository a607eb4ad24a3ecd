/**
 * The appended final page: a signature manifest with labelled rows and a QR code.
 * The page is a new object in the incremental update (only the page tree's /Kids and
 * /Count change in existing objects). The QR code is drawn as filled rectangles, one
 * per dark module, so it needs no image and stays sharp at any zoom.
 */
import QRCode from 'qrcode'
import { fill, popGraphicsState, pushGraphicsState, rectangle, rgb, setFillingRgbColor } from 'pdf-lib'
import type { PDFFont, PDFPage } from 'pdf-lib'
import type { Tracked } from './incremental.js'
import { printable, wrapText } from './text.js'

export interface FinalPageContent {
  title: string
  subtitle: string
  rows: Array<[label: string, value: string]>
  qr: { text: string, caption: string }
  footer: string
}

/** A4 portrait, in points. */
const A4: [number, number] = [595.28, 841.89]
const MARGIN = 56
const INK = rgb(0.1, 0.16, 0.4)
const MUTED = rgb(0.35, 0.35, 0.4)

/** Appends the manifest page as the document's last page and returns it. */
export function appendFinalPage (tracked: Tracked, fonts: { regular: PDFFont, bold: PDFFont }, content: FinalPageContent): PDFPage {
  const page = tracked.opened.doc.addPage(A4)
  const { regular, bold } = fonts
  const width = A4[0] - 2 * MARGIN
  let y = A4[1] - MARGIN - 18

  page.drawText(printable(bold, content.title), { x: MARGIN, y, size: 18, font: bold, color: INK })
  y -= 22
  for (const line of wrapText(regular, printable(regular, content.subtitle), 10, width)) {
    page.drawText(line, { x: MARGIN, y, size: 10, font: regular, color: MUTED })
    y -= 13
  }
  y -= 8
  page.drawRectangle({ x: MARGIN, y, width, height: 1, color: INK })
  y -= 24

  const labelWidth = 170
  for (const [label, value] of content.rows) {
    const lines = wrapText(regular, printable(regular, value), 10.5, width - labelWidth)
    page.drawText(printable(bold, label), { x: MARGIN, y, size: 10.5, font: bold, color: INK })
    for (const line of lines) {
      page.drawText(line, { x: MARGIN + labelWidth, y, size: 10.5, font: regular, color: rgb(0, 0, 0) })
      y -= 14
    }
    y -= 8
  }

  y -= 12
  const qrSide = 130
  drawQrCode(page, content.qr.text, MARGIN, y - qrSide, qrSide)
  let captionY = y - 12
  for (const line of wrapText(regular, printable(regular, content.qr.caption), 10, width - qrSide - 20)) {
    page.drawText(line, { x: MARGIN + qrSide + 20, y: captionY, size: 10, font: regular, color: MUTED })
    captionY -= 13
  }

  let footerY = MARGIN
  for (const line of wrapText(regular, printable(regular, content.footer), 8, width).reverse()) {
    page.drawText(line, { x: MARGIN, y: footerY, size: 8, font: regular, color: MUTED })
    footerY += 10
  }
  return page
}

/** A QR code as runs of dark modules per row: [row, first column, length]. */
interface QrRuns { size: number, runs: Array<[number, number, number]> }

/**
 * QR codes by text. Every final page of a server carries the same one (the validator URL),
 * and encoding it (Reed-Solomon, eight mask patterns scored) was a tenth of a one-page
 * STAMP_AND_PAGE signature.
 */
const qrCache = new Map<string, QrRuns>()

function qrRuns (text: string): QrRuns {
  let found = qrCache.get(text)
  if (found === undefined) {
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
    found = { size: n, runs }
    if (qrCache.size >= 16) qrCache.clear()
    qrCache.set(text, found)
  }
  return found
}

/** Draws `text` as a QR code (error correction M, 4-module quiet zone) in a `side`-point square. */
export function drawQrCode (page: PDFPage, text: string, x: number, y: number, side: number): void {
  const { size: n, runs } = qrRuns(text)
  const cell = side / (n + 8)
  const ops = [pushGraphicsState(), setFillingRgbColor(0, 0, 0)]
  for (const [row, col, length] of runs) {
    ops.push(rectangle(x + (col + 4) * cell, y + side - (row + 5) * cell, length * cell, cell))
  }
  ops.push(fill(), popGraphicsState())
  page.pushOperators(...ops)
}
