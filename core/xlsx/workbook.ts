/**
 * The small parts of an XLSX package: relationships, workbook, styles and shared
 * strings. Everything here is read whole (bounded by maxMetadataBytes); only the
 * worksheet itself is streamed.
 */
import { openDocumentRefusal } from './detect.js'
import { posix } from 'node:path'
import sax from 'sax'
import type { QualifiedAttribute, QualifiedTag } from 'sax'
import { EngineError } from '../errors.js'
import { isBuiltinDateFormat, isDateFormatCode } from './number-format.js'
import { chooseSheet, sheetVisibility } from './choose-sheet.js'
import type { ListedSheet, SheetChoice } from './choose-sheet.js'
import { SharedStrings } from './shared-strings.js'
import { MAIN_NAMESPACES, hasDoctype } from './xml-text.js'
import type { ZipArchive } from './zip.js'

const REL_OFFICE_DOCUMENT = /\/officeDocument$/
const REL_WORKSHEET = /\/worksheet$/
const REL_SHARED_STRINGS = /\/sharedStrings$/
const REL_STYLES = /\/styles$/

export interface WorkbookParts {
  sheetName: string
  /** Every sheet, for messages that name them. */
  sheets: readonly ListedSheet[]
  sheetPart: string
  date1904: boolean
  /** Decoded on demand (shared-strings.ts); the reader closes it when done. */
  sharedStrings: SharedStrings
  /** 1 at index i when cell style (xf) i shows a date or time. */
  dateStyles: Uint8Array
}

interface Relationship { type: string, target: string }

/** Locates the sheet to read (choose-sheet.ts) and loads what the scanner needs to decode it. */
export async function loadWorkbookParts (zip: ZipArchive, maxMetadataBytes: number, wanted?: SheetChoice): Promise<WorkbookParts> {
  const rootRels = await readRels(zip, '_rels/.rels', '', maxMetadataBytes)
  const officeDoc = [...rootRels.values()].find((r) => REL_OFFICE_DOCUMENT.test(r.type))
  const workbookPart = officeDoc?.target ?? 'xl/workbook.xml'
  const workbookXml = await readXmlPart(zip, workbookPart, maxMetadataBytes)
  if (workbookXml === undefined) {
    const mimetype = await zip.readPart('mimetype', 256)
    if (mimetype !== undefined && mimetype.toString('latin1').startsWith('application/vnd.oasis.opendocument.')) throw openDocumentRefusal(mimetype.toString('latin1'))
    throw new EngineError('SHEET_UNSUPPORTED_FORMAT', 'The file is a ZIP archive but not an Excel workbook (it has no workbook part). The import accepts XLSX and XLS workbooks and CSV/TXT text files: save the ledger as .xlsx, .xls or .csv.')
  }
  const workbook = parseWorkbook(workbookXml)
  const chosen = workbook.sheets[chooseSheet(workbook.sheets, wanted)]!

  const dir = posix.dirname(workbookPart)
  const relsPart = posix.join(dir, '_rels', `${posix.basename(workbookPart)}.rels`)
  const rels = await readRels(zip, relsPart, dir, maxMetadataBytes)
  const sheetRel = rels.get(chosen.relId)
  if (sheetRel === undefined || !zip.has(sheetRel.target)) {
    throw new EngineError('SHEET_NO_SHEETS', `The sheet "${chosen.name}" has no worksheet part in the file.`)
  }
  if (!REL_WORKSHEET.test(sheetRel.type)) {
    throw new EngineError('SHEET_NO_SHEETS', `The sheet "${chosen.name}" is a chart or dialog sheet, not a worksheet with cells.`)
  }
  const relList = [...rels.values()]
  const stylesPart = relList.find((r) => REL_STYLES.test(r.type))?.target
  const sstPart = relList.find((r) => REL_SHARED_STRINGS.test(r.type))?.target

  const stylesXml = stylesPart === undefined ? undefined : await readXmlPart(zip, stylesPart, maxMetadataBytes)
  return {
    sheetName: chosen.name,
    sheets: workbook.sheets,
    sheetPart: sheetRel.target,
    date1904: workbook.date1904,
    dateStyles: stylesXml === undefined ? new Uint8Array(0) : parseDateStyles(stylesXml),
    sharedStrings: sstPart === undefined ? SharedStrings.none() : openSharedStrings(zip, sstPart, maxMetadataBytes)
  }
}

/** The table whole when it is small, else inflated as the sheet asks for items. */
function openSharedStrings (zip: ZipArchive, part: string, maxBytes: number): SharedStrings {
  const opened = zip.openPart(part, maxBytes)
  if (opened === undefined) return SharedStrings.none()
  return 'bytes' in opened ? SharedStrings.whole(part, opened.bytes) : SharedStrings.streamed(part, opened.declaredBytes, opened.chunks)
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
  forEachElement(xml, part, (el) => {
    if (el.local !== 'Relationship' || !(el.uri === '' || el.uri === PACKAGE_REL_NAMESPACE)) return
    const id = plainAttribute(el, 'Id')
    const target = plainAttribute(el, 'Target')
    if (id === undefined || target === undefined || plainAttribute(el, 'TargetMode') === 'External') return
    rels.set(id, { type: plainAttribute(el, 'Type') ?? '', target: resolveTarget(baseDir, target) })
  })
  return rels
}

function resolveTarget (baseDir: string, target: string): string {
  const path = target.startsWith('/') ? target.slice(1) : posix.join(baseDir, target)
  return posix.normalize(path)
}

interface WorkbookInfo { sheets: Array<ListedSheet & { relId: string }>, date1904: boolean }

/**
 * Sheets and the date system. Only SpreadsheetML elements count: Excel 2013+ writes a
 * second `x15:workbookPr` inside `extLst` without `date1904`, and reading it as the
 * main one put every date of a 1904-system file 1,462 days early.
 */
function parseWorkbook (xml: Buffer): WorkbookInfo {
  const info: WorkbookInfo = { sheets: [], date1904: false }
  let seenWorkbookPr = false
  forEachElement(xml, 'workbook', (el) => {
    if (!isMain(el) || el.parent === undefined || !isMain(el.parent)) return
    if (el.local === 'workbookPr' && el.parent.local === 'workbook' && !seenWorkbookPr) {
      seenWorkbookPr = true
      info.date1904 = isTrue(plainAttribute(el, 'date1904'))
    } else if (el.local === 'sheet' && el.parent.local === 'sheets') {
      const relId = relationshipId(el)
      if (relId !== undefined) info.sheets.push({ name: plainAttribute(el, 'name') ?? '', visibility: sheetVisibility(plainAttribute(el, 'state')), relId })
    }
  })
  return info
}

/** `xsd:boolean` (XML Schema part 2, 3.2.2): "1" and "true" are true, surrounding white space allowed. */
function isTrue (value: string | undefined): boolean {
  const v = value?.trim()
  return v === '1' || v === 'true'
}

/** The sheet's `r:id`: in the relationships namespace, else (a producer that bound it oddly) any prefixed `id`. */
function relationshipId (el: XmlElement): string | undefined {
  const attrs = Object.values(el.attributes)
  return (attrs.find((a) => a.local === 'id' && OFFICE_REL_NAMESPACES.has(a.uri)) ??
    attrs.find((a) => a.local === 'id' && a.prefix !== ''))?.value
}

/**
 * Which cell styles (`cellXfs` entries, in order) show dates (ECMA-376 Part 1, 18.8.10).
 * Number formats count only from the top-level `numFmts`: a differential format
 * (`dxfs/dxf/numFmt`, for conditional formatting) may reuse an id with another code.
 */
function parseDateStyles (xml: Buffer): Uint8Array {
  const customFormats = new Map<number, string>()
  const xfFormatIds: number[] = []
  forEachElement(xml, 'styles', (el) => {
    const parent = el.parent
    if (!isMain(el) || parent === undefined || !isMain(parent)) return
    if (el.local === 'numFmt' && parent.local === 'numFmts' && parent.parent?.local === 'styleSheet') {
      const id = plainAttribute(el, 'numFmtId')
      if (id !== undefined) customFormats.set(Number(id), plainAttribute(el, 'formatCode') ?? '')
    } else if (el.local === 'xf' && parent.local === 'cellXfs') {
      xfFormatIds.push(Number(plainAttribute(el, 'numFmtId') ?? 0))
    }
  })
  const dates = new Uint8Array(xfFormatIds.length)
  xfFormatIds.forEach((id, i) => {
    const code = customFormats.get(id)
    dates[i] = (code === undefined ? isBuiltinDateFormat(id) : isDateFormatCode(code)) ? 1 : 0
  })
  return dates
}

const OFFICE_REL_NAMESPACES = new Set([
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  'http://purl.oclc.org/ooxml/officeDocument/relationships'
])
/** ECMA-376 Part 2, 9.3 (Open Packaging Conventions). */
const PACKAGE_REL_NAMESPACE = 'http://schemas.openxmlformats.org/package/2006/relationships'

interface XmlElement {
  /** Namespace URI, resolved from the declarations in scope ('' for none). */
  uri: string
  local: string
  attributes: Record<string, QualifiedAttribute>
  parent: XmlElement | undefined
}

/**
 * A SpreadsheetML element, whatever prefix binds it (`x:` on the main namespace is
 * common in generated files). An element in no namespace at all is taken as one too:
 * some exporters omit the declaration, and extensions are always namespaced.
 */
function isMain (el: XmlElement): boolean {
  return el.uri === '' || MAIN_NAMESPACES.has(el.uri)
}

/** An unprefixed attribute (attributes take no default namespace: Namespaces in XML 1.0, 6.2). */
function plainAttribute (el: XmlElement, local: string): string | undefined {
  const a = el.attributes[local]
  return a !== undefined && a.prefix === '' ? a.value : undefined
}

/**
 * Walks the elements of a small XML part with sax, namespaces resolved, each with
 * its parent. Extension lists (`extLst`, ECMA-376 Part 1, 18.2.10) are skipped whole:
 * what they hold is for the application that wrote them.
 */
function forEachElement (xml: Buffer, part: string, onOpen: (el: XmlElement) => void): void {
  const parser = sax.parser(true, { trim: false, normalize: false, lowercase: false, xmlns: true, position: false })
  let current: XmlElement | undefined
  let extDepth = 0
  parser.onopentag = (tag) => {
    const t = tag as QualifiedTag
    const el: XmlElement = { uri: t.uri, local: t.local, attributes: t.attributes, parent: current }
    current = el
    if (extDepth > 0 || el.local === 'extLst') extDepth++
    else onOpen(el)
  }
  parser.onclosetag = () => {
    if (extDepth > 0) extDepth--
    current = current?.parent
  }
  parser.onerror = (err) => {
    // A prefix nobody declared (seen in hand-made exports): its element simply belongs to no known namespace.
    if (err.message.startsWith('Unbound namespace prefix')) {
      parser.error = null as unknown as Error
      return
    }
    throw new EngineError('SHEET_CORRUPT', `The workbook part "${part}" is not well-formed XML.`, undefined, { cause: err })
  }
  parser.write(xml.toString('utf8')).close()
}
