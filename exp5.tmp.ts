import { scanOf } from './fixtures/extraction/scans.js'
import { generateRelatorio } from './plugins/relatorio-simples/fixtures/generate.js'
import { readPdfText } from './core/extraction/pdf-text.js'
import { TextDocument } from './core/extraction/text.js'
import { releaseTesseract } from './core/extraction/ocr/index.js'
const { pdf, truth } = await generateRelatorio({ seed: 11 })
console.log((truth as any).identificacao)
const plain = new TextDocument(await readPdfText(pdf, { maxPages: 5, deadlineMs: 600000, maxRunsPerPage: 50000, ocr: false }))
console.log(plain.lines.filter(l => /CNPJ/i.test(l.text)).map(l => l.text))
const scan = await scanOf(pdf, { dpi: 200, skew: 1.5, noise: 0.001, quality: 70, seed: 11 })
const doc = new TextDocument(await readPdfText(scan, { maxPages: 5, deadlineMs: 600000, maxRunsPerPage: 50000 }))
console.log(doc.lines.slice(0, 15).map(l => l.text))
await releaseTesseract()
