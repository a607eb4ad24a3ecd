/**
 * The small parts of an XLSX package: relationships, workbook, styles and shared
 * strings. Everything here is read whole (bounded by maxMetadataBytes); only the
 * worksheet itself is streamed.
 */
import { posix } from 'node:path'
import sax from 'sax'
import { EngineError } from '../errors.js'
import { isBuiltinDateFormat, isDateFormatCode } from './number-format.js'
import { LT, SLASH, closingTag, hasDoctype, isName, localStart, nameEnd, richText, tagEnd } from './xml-text.js'
import type { ZipArchive } from './zip.js'

const REL_OFFICE_DOCUMENT = /\/officeDocument$/
const REL_WORKSHEET = /\/worksheet$/
const REL_SHARED_STRINGS = /\/sharedStrings$/
const REL_STYLES = /\/styles$/

export interface WorkbookParts {
  sheetName: string
  sheetPart: string
  date1904: boolean
  sharedStrings: string[]
  /** 1 at index i when cell style (xf) i shows a date or time. */
  dateStyles: Uint8Array
}

interface Relationship { type: string, target: string }

/** Locates the first sheet in workbook order and loads what the scanner needs to decode it. */
export async function loadWorkbookParts (zip: ZipArchive, maxMetadataBytes: number): Promise<WorkbookParts> {
  const rootRels = await readRels(zip, '_rels/.rels', '', maxMetadataBytes)
  const officeDoc = [...rootRels.values()].find((r) => REL_OFFICE_DOCUMENT.test(r.type))
  const workbookPart = officeDoc?.target ?? 'xl/workbook.xml'
  const workbookXml = await readXmlPart(zip, workbookPart, maxMetadataBytes)
  if (workbookXml === undefined) {
    throw new EngineError('SHEET_UNSUPPORTED_FORMAT', 'The file is a ZIP archive but not an Excel workbook (it has no workbook part). Upload an XLSX or XLS file.')
  }
  const workbook = parseWorkbook(workbookXml)
  const first = workbook.sheets[0]
  if (first === undefined) throw new EngineError('SHEET_NO_SHEETS', 'The workbook has no sheets.')

  const dir = posix.dirname(workbookPart)
  const relsPart = posix.join(dir, '_rels', `${posix.basename(workbookPart)}.rels`)
  const rels = await readRels(zip, relsPart, dir, maxMetadataBytes)
  const sheetRel = rels.get(first.relId)
  if (sheetRel === undefined || !zip.has(sheetRel.target)) {
    throw new EngineError('SHEET_NO_SHEETS', `The first sheet ("${first.name}") has no worksheet part in the file.`)
  }
  if (!REL_WORKSHEET.test(sheetRel.type)) {
    throw new EngineError('SHEET_NO_SHEETS', `The first sheet ("${first.name}") is a chart or dialog sheet, not a worksheet with cells.`)
  }
  const relList = [...rels.values()]
  const stylesPart = relList.find((r) => REL_STYLES.test(r.type))?.target
  const sstPart = relList.find((r) => REL_SHARED_STRINGS.test(r.type))?.target

  const stylesXml = stylesPart === undefined ? undefined : await readXmlPart(zip, stylesPart, maxMetadataBytes)
  const sstXml = sstPart === undefined ? undefined : await readXmlPart(zip, sstPart, maxMetadataBytes)
  return {
    sheetName: first.name,
    sheetPart: sheetRel.target,
    date1904: workbook.date1904,
    dateStyles: stylesXml === undefined ? new Uint8Array(0) : parseDateStyles(stylesXml),
    sharedStrings: sstXml === undefined ? [] : parseSharedStrings(sstXml)
  }
}

async function readXmlPart (zip: ZipArchive, part: string, maxBytes: number): Promise<Buffer | undefined> {
  const xml = await zip.readPart(part, maxBytes)
  if (xml !== undefined && hasDoctype(xml)) {
    throw new EngineError('XLSX_DTD_FORBIDDEN', `The part "${part}" declares a DTD or XML entities, which workbooks never need; the file is refused.`)
  }
  return xml
}

/** Relationships of a part, targets resolved to archive paths (ECMA-376 Part 2, 9.3). */
async function readRels (zip: ZipArchive, part: string, baseDir: string, maxBytes: number): Promise<Map<string, Relationship>> {
  const rels = new Map<string, Relationship>()
  const xml = await readXmlPart(zip, part, maxBytes)
  if (xml === undefined) return rels
  forEachElement(xml, part, (name, attrs) => {
    if (name !== 'Relationship' || attrs.Id === undefined || attrs.Target === undefined) return
    if (attrs.TargetMode === 'External') return
    rels.set(attrs.Id, { type: attrs.Type ?? '', target: resolveTarget(baseDir, attrs.Target) })
  })
  return rels
}

function resolveTarget (baseDir: string, target: string): string {
  const path = target.startsWith('/') ? target.slice(1) : posix.join(baseDir, target)
  return posix.normalize(path)
}

interface WorkbookInfo { sheets: Array<{ name: string, relId: string }>, date1904: boolean }

function parseWorkbook (xml: Buffer): WorkbookInfo {
  const info: WorkbookInfo = { sheets: [], date1904: false }
  forEachElement(xml, 'workbook', (name, attrs) => {
    if (name === 'workbookPr') {
      info.date1904 = attrs.date1904 === '1' || attrs.date1904 === 'true'
    } else if (name === 'sheet') {
      const relId = attrs['r:id'] ?? Object.entries(attrs).find(([k]) => k.endsWith(':id'))?.[1]
      if (relId !== undefined) info.sheets.push({ name: attrs.name ?? '', relId })
    }
  })
  return info
}

/** Which cell styles (`cellXfs` entries, in order) show dates (ECMA-376 Part 1, 18.8.10). */
function parseDateStyles (xml: Buffer): Uint8Array {
  const customFormats = new Map<number, string>()
  const xfFormatIds: number[] = []
  let inCellXfs = false
  forEachElement(xml, 'styles', (name, attrs) => {
    if (name === 'numFmt' && attrs.numFmtId !== undefined) {
      customFormats.set(Number(attrs.numFmtId), attrs.formatCode ?? '')
    } else if (name === 'cellXfs') {
      inCellXfs = true
    } else if (name === 'xf' && inCellXfs) {
      xfFormatIds.push(Number(attrs.numFmtId ?? 0))
    }
  }, (name) => { if (name === 'cellXfs') inCellXfs = false })
  const dates = new Uint8Array(xfFormatIds.length)
  xfFormatIds.forEach((id, i) => {
    const code = customFormats.get(id)
    dates[i] = (code === undefined ? isBuiltinDateFormat(id) : isDateFormatCode(code)) ? 1 : 0
  })
  return dates
}

/**
 * The shared string table, in order (ECMA-376 Part 1, 18.4.9). Scanned with the
 * same byte helpers as the sheet because it can hold millions of items.
 */
export function parseSharedStrings (xml: Buffer): string[] {
  const strings: string[] = []
  let pos = 0
  const end = xml.length
  while (pos < end) {
    const lt = xml.indexOf(LT, pos)
    if (lt === -1) break
    if (xml[lt + 1] === SLASH) { pos = lt + 2; continue }
    const ne = nameEnd(xml, lt + 1, end)
    const ls = localStart(xml, lt + 1, ne)
    const gt = tagEnd(xml, ne, end)
    if (gt === -1) break
    if (!isName(xml, ls, ne, 'si')) { pos = gt + 1; continue }
    if (xml[gt - 1] === SLASH) { strings.push(''); pos = gt + 1; continue }
    const close = xml.indexOf(closingTag(xml, lt + 1, ne), gt + 1)
    if (close === -1) throw new EngineError('SHEET_CORRUPT', 'The shared strings part of the workbook is truncated.')
    strings.push(richText(xml, gt + 1, close))
    pos = close
  }
  return strings
}

type Attributes = Record<string, string | undefined>

/** Walks the elements of a small XML part with sax, giving local names and raw attributes. */
function forEachElement (xml: Buffer, part: string, onOpen: (name: string, attrs: Attributes) => void, onClose?: (name: string) => void): void {
  const parser = sax.parser(true, { trim: false, normalize: false, lowercase: false, xmlns: false, position: false })
  parser.onopentag = (tag) => onOpen(localName(tag.name), tag.attributes as Attributes)
  if (onClose !== undefined) parser.onclosetag = (name) => onClose(localName(name))
  parser.onerror = (err) => {
    throw new EngineError('SHEET_CORRUPT', `The workbook part "${part}" is not well-formed XML.`, undefined, { cause: err })
  }
  parser.write(xml.toString('utf8')).close()
}

function localName (name: string): string {
  const colon = name.indexOf(':')
  return colon === -1 ? name : name.slice(colon + 1)
}

