/**
 * The small parts of an XLSX package: relationships, workbook, styles and shared
 * strings. Relationships, workbook and styles are scanned as they inflate
 * (shallow-xml.ts), keeping only what the reader needs; shared strings are decoded on
 * demand (shared-strings.ts); the worksheet itself is streamed.
 */
import { openDocumentRefusal } from './detect.js'
import { posix } from 'node:path'
import { EngineError } from '../errors.js'
import { isBuiltinDateFormat, isDateFormatCode } from './number-format.js'
import { chooseSheet, sheetVisibility } from './choose-sheet.js'
import type { ListedSheet, SheetChoice } from './choose-sheet.js'
import { SharedStrings } from './shared-strings.js'
import { scanPart } from './shallow-xml.js'
import type { OnOpen, ShallowElement, ShallowName } from './shallow-xml.js'
import { MAIN_NAMESPACES } from './xml-text.js'
import type { ZipArchive } from './zip.js'

const REL_OFFICE_DOCUMENT = /\/officeDocument$/
const REL_WORKSHEET = /\/worksheet$/
const REL_SHARED_STRINGS = /\/sharedStrings$/
const REL_STYLES = /\/styles$/

/**
 * Cell formats (`cellXfs/xf`) a workbook may list. Excel keeps at most 65,430 (Microsoft's
 * notes on ECMA-376, [MS-OI29500] 2.1.700 on Part 1 18.8.10; "65,490 unique cell
 * formats/cell styles" in Excel's published limits) and other producers write fewer; four
 * times 65,536 leaves room for any producer we do not know while a file listing millions
 * (19 bytes each, compressing ~400 to 1) is refused after a fraction of a second. The same
 * bound applies to custom number formats (`numFmts`; Excel keeps 200 to 250) and to the
 * sheets a workbook lists (Excel limits them only by memory; workbooks hold tens, rarely
 * thousands).
 */
export const MAX_CELL_FORMATS = 4 * 65_536
export const MAX_SHEETS = MAX_CELL_FORMATS

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
  const root = await findRelationships(zip, '_rels/.rels', '', maxMetadataBytes, undefined, [REL_OFFICE_DOCUMENT])
  const workbookPart = root.byType[0]?.target ?? 'xl/workbook.xml'
  const workbook = await parseWorkbook(zip, workbookPart, maxMetadataBytes)
  if (workbook === undefined) {
    const mimetype = await zip.readPart('mimetype', 256)
    if (mimetype !== undefined && mimetype.toString('latin1').startsWith('application/vnd.oasis.opendocument.')) throw openDocumentRefusal(mimetype.toString('latin1'))
    throw new EngineError('SHEET_UNSUPPORTED_FORMAT', 'The file is a ZIP archive but not an Excel workbook (it has no workbook part). The import accepts XLSX and XLS workbooks and CSV/TXT text files: save the ledger as .xlsx, .xls or .csv.')
  }
  const chosen = workbook.sheets[chooseSheet(workbook.sheets, wanted)]!

  const dir = posix.dirname(workbookPart)
  const relsPart = posix.join(dir, '_rels', `${posix.basename(workbookPart)}.rels`)
  const rels = await findRelationships(zip, relsPart, dir, maxMetadataBytes, chosen.relId, [REL_STYLES, REL_SHARED_STRINGS])
  const sheetRel = rels.byId
  if (sheetRel === undefined || !zip.has(sheetRel.target)) {
    throw new EngineError('SHEET_NO_SHEETS', `The sheet "${chosen.name}" has no worksheet part in the file.`)
  }
  if (!REL_WORKSHEET.test(sheetRel.type)) {
    throw new EngineError('SHEET_NO_SHEETS', `The sheet "${chosen.name}" is a chart or dialog sheet, not a worksheet with cells.`)
  }
  const [stylesRel, sstRel] = rels.byType
  return {
    sheetName: chosen.name,
    sheets: workbook.sheets,
    sheetPart: sheetRel.target,
    date1904: workbook.date1904,
    dateStyles: stylesRel === undefined ? new Uint8Array(0) : await parseDateStyles(zip, stylesRel.target, maxMetadataBytes),
    sharedStrings: sstRel === undefined ? SharedStrings.none() : openSharedStrings(zip, sstRel.target, maxMetadataBytes)
  }
}

/** The table whole when it is small, else inflated as the sheet asks for items. */
function openSharedStrings (zip: ZipArchive, part: string, maxBytes: number): SharedStrings {
  const opened = zip.openPart(part, maxBytes)
  if (opened === undefined) return SharedStrings.none()
  return 'bytes' in opened ? SharedStrings.whole(part, opened.bytes) : SharedStrings.streamed(part, opened.declaredBytes, opened.chunks)
}

/**
 * Scans a part as it inflates (bounded by maxBytes); false when the archive lacks it.
 * Elements deeper than `maxDepth` are never handed over.
 */
async function scanXmlPart (zip: ZipArchive, part: string, maxBytes: number, maxDepth: number, onOpen: OnOpen): Promise<boolean> {
  const opened = zip.openPart(part, maxBytes)
  if (opened === undefined) return false
  await scanPart(part, 'bytes' in opened ? opened.bytes : opened.chunks, maxDepth, onOpen)
  return true
}

interface FoundRelationships {
  /** The relationship with the id asked for (the last one, when a file repeats an id). */
  byId: Relationship | undefined
  /** For each type asked for, the first relationship of that type. */
  byType: Array<Relationship | undefined>
}

/**
 * The relationships of a part the reader needs (ECMA-376 Part 2, 9.3), targets resolved to
 * archive paths: only those are kept, however many the part lists.
 */
async function findRelationships (zip: ZipArchive, part: string, baseDir: string, maxBytes: number, id: string | undefined, types: readonly RegExp[]): Promise<FoundRelationships> {
  const found: FoundRelationships = { byId: undefined, byType: types.map(() => undefined) }
  await scanXmlPart(zip, part, maxBytes, 2, (el) => {
    if (el.depth === 1) return true
    if (el.local !== 'Relationship' || !(el.uri === '' || el.uri === PACKAGE_REL_NAMESPACE)) return false
    const relId = plainAttribute(el, 'Id')
    const target = plainAttribute(el, 'Target')
    if (relId === undefined || target === undefined || plainAttribute(el, 'TargetMode') === 'External') return false
    const type = plainAttribute(el, 'Type') ?? ''
    const wantedType = types.findIndex((t, i) => found.byType[i] === undefined && t.test(type))
    if (relId === id || wantedType !== -1) {
      const rel = { type, target: resolveTarget(baseDir, target) }
      if (relId === id) found.byId = rel
      if (wantedType !== -1) found.byType[wantedType] = rel
    }
    return false
  })
  return found
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
async function parseWorkbook (zip: ZipArchive, part: string, maxBytes: number): Promise<WorkbookInfo | undefined> {
  const info: WorkbookInfo = { sheets: [], date1904: false }
  let seenWorkbookPr = false
  const present = await scanXmlPart(zip, part, maxBytes, 3, (el) => {
    if (!isMain(el)) return false
    if (el.depth === 1) return true
    if (el.depth === 2) {
      if (el.local === 'workbookPr' && el.ancestors[0]!.local === 'workbook' && !seenWorkbookPr) {
        seenWorkbookPr = true
        info.date1904 = isTrue(plainAttribute(el, 'date1904'))
      }
      return el.local === 'sheets'
    }
    if (el.local === 'sheet') {
      const relId = relationshipId(el)
      if (relId === undefined) return false
      if (info.sheets.length >= MAX_SHEETS) {
        throw new EngineError('SHEET_CORRUPT', `The workbook lists more than ${MAX_SHEETS.toLocaleString('en-US')} sheets, far more than any real workbook holds; the file is damaged or was built to overload the reader.`)
      }
      info.sheets.push({ name: plainAttribute(el, 'name') ?? '', visibility: sheetVisibility(plainAttribute(el, 'state')), relId })
    }
    return false
  })
  return present ? info : undefined
}

/** `xsd:boolean` (XML Schema part 2, 3.2.2): "1" and "true" are true, surrounding white space allowed. */
function isTrue (value: string | undefined): boolean {
  const v = value?.trim()
  return v === '1' || v === 'true'
}

/** The sheet's `r:id`: in the relationships namespace, else (a producer that bound it oddly) any prefixed `id`. */
function relationshipId (el: ShallowElement): string | undefined {
  const attrs = el.attributes()
  return (attrs.find((a) => a.local === 'id' && OFFICE_REL_NAMESPACES.has(a.uri)) ??
    attrs.find((a) => a.local === 'id' && a.prefix !== ''))?.value
}

/**
 * Which cell styles (`cellXfs` entries, in order) show dates (ECMA-376 Part 1, 18.8.10).
 * Number formats count only from the top-level `numFmts`: a differential format
 * (`dxfs/dxf/numFmt`, for conditional formatting) may reuse an id with another code.
 * Kept: whether each custom format shows dates, and each cell format's number format id
 * (a typed array, bounded by MAX_CELL_FORMATS), nothing of the rest of the part.
 */
async function parseDateStyles (zip: ZipArchive, part: string, maxBytes: number): Promise<Uint8Array> {
  const customIsDate = new Map<number, boolean>()
  let xfFormatIds = new Float64Array(64)
  let xfCount = 0
  await scanXmlPart(zip, part, maxBytes, 3, (el) => {
    if (!isMain(el)) return false
    if (el.depth === 1) return el.local === 'styleSheet'
    if (el.depth === 2) return el.local === 'numFmts' || el.local === 'cellXfs'
    const parent = el.ancestors[1]!
    if (el.local === 'numFmt' && parent.local === 'numFmts') {
      const id = plainAttribute(el, 'numFmtId')
      if (id === undefined) return false
      if (customIsDate.size >= MAX_CELL_FORMATS) throw tooManyFormats('number formats')
      customIsDate.set(Number(id), isDateFormatCode(plainAttribute(el, 'formatCode') ?? ''))
    } else if (el.local === 'xf' && parent.local === 'cellXfs') {
      if (xfCount >= MAX_CELL_FORMATS) throw tooManyFormats('cell formats')
      if (xfCount === xfFormatIds.length) {
        const grown = new Float64Array(Math.min(MAX_CELL_FORMATS, xfCount * 2))
        grown.set(xfFormatIds)
        xfFormatIds = grown
      }
      xfFormatIds[xfCount++] = Number(plainAttribute(el, 'numFmtId') ?? 0)
    }
    return false
  })
  const dates = new Uint8Array(xfCount)
  for (let i = 0; i < xfCount; i++) {
    const id = xfFormatIds[i]!
    dates[i] = (customIsDate.get(id) ?? isBuiltinDateFormat(id)) ? 1 : 0
  }
  return dates
}

function tooManyFormats (what: string): EngineError {
  return new EngineError('SHEET_CORRUPT', `The workbook's styles list more than ${MAX_CELL_FORMATS.toLocaleString('en-US')} ${what}; Excel keeps at most about 65,000, so the file is damaged or was built to overload the reader. It was not imported.`)
}

const OFFICE_REL_NAMESPACES = new Set([
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  'http://purl.oclc.org/ooxml/officeDocument/relationships'
])
/** ECMA-376 Part 2, 9.3 (Open Packaging Conventions). */
const PACKAGE_REL_NAMESPACE = 'http://schemas.openxmlformats.org/package/2006/relationships'

/**
 * A SpreadsheetML element, whatever prefix binds it (`x:` on the main namespace is
 * common in generated files). An element in no namespace at all is taken as one too:
 * some exporters omit the declaration, and extensions are always namespaced.
 */
function isMain (el: ShallowName): boolean {
  return el.uri === '' || MAIN_NAMESPACES.has(el.uri)
}

/** An unprefixed attribute (attributes take no default namespace: Namespaces in XML 1.0, 6.2). */
function plainAttribute (el: ShallowElement, local: string): string | undefined {
  return el.attribute(local)
}
