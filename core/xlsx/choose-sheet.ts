/**
 * Which sheet of a workbook a read takes, for both formats. The spec's "first sheet" is
 * read as the first sheet a person sees: the first tab, in workbook order, that is not
 * hidden. A hidden sheet (`state="hidden"`, which the user can show again) and a
 * "very hidden" one (`state="veryHidden"`, shown only through VBA) are skipped, as Excel
 * shows neither as a tab (ECMA-376 Part 1, 18.2.19 and 18.18.68). Reading the hidden one
 * would import values nobody looking at the file sees.
 *
 * The only place that decides it. A caller may name the sheet instead (`sheet`: its name,
 * or its 1-based position among all the workbook's tabs, hidden ones counted); a sheet
 * named that way is read even when hidden, since someone asked for it.
 */
import { EngineError } from '../errors.js'
import type { Cell } from './cells.js'
import type { RowVisitor } from './types.js'

export type SheetVisibility = 'visible' | 'hidden' | 'veryHidden'

/** A sheet as the workbook lists it. */
export interface ListedSheet {
  name: string
  visibility: SheetVisibility
}

/** A sheet asked for by name, or by its 1-based position in workbook order. */
export type SheetChoice = string | number

/** Index (0-based, workbook order) of the sheet to read. */
export function chooseSheet (sheets: readonly ListedSheet[], wanted?: SheetChoice): number {
  if (sheets.length === 0) throw new EngineError('SHEET_NO_SHEETS', 'The workbook has no sheets.')
  if (wanted !== undefined) return namedSheet(sheets, wanted)
  const index = sheets.findIndex((s) => s.visibility === 'visible')
  if (index === -1) {
    throw new EngineError('SHEET_NO_SHEETS', `Every sheet of the workbook is hidden (${sheets.map((s) => `"${s.name}"`).join(', ')}); show the ledger's sheet in Excel or LibreOffice, save, and upload the file again.`)
  }
  return index
}

/** ST_SheetState (ECMA-376 Part 1, 18.18.68); absent means visible. An unknown value counts as hidden. */
export function sheetVisibility (state: string | undefined): SheetVisibility {
  const s = state?.trim()
  if (s === undefined || s === '' || s === 'visible') return 'visible'
  return s === 'veryHidden' ? 'veryHidden' : 'hidden'
}

function namedSheet (sheets: readonly ListedSheet[], wanted: SheetChoice): number {
  let index = -1
  if (typeof wanted === 'number') {
    if (Number.isInteger(wanted) && wanted >= 1 && wanted <= sheets.length) index = wanted - 1
  } else {
    index = sheets.findIndex((s) => s.name === wanted)
    // A name typed by a person: spaces around it and letter case are forgiven when that finds one sheet only.
    if (index === -1) {
      const loose = wanted.trim().toLocaleLowerCase('pt-BR')
      const matches = sheets.flatMap((s, i) => s.name.trim().toLocaleLowerCase('pt-BR') === loose ? [i] : [])
      if (matches.length === 1) index = matches[0]!
    }
  }
  if (index === -1) {
    const asked = typeof wanted === 'number' ? `no sheet number ${wanted}` : `no sheet named "${wanted.slice(0, 100)}"`
    throw new EngineError('REQUEST_INVALID', `The workbook has ${asked}; its sheets are ${describeSheets(sheets)}. Send the sheet field as one of those names or as a number from 1 to ${sheets.length}.`)
  }
  return index
}

/** "Razão" (1), "Resumo" (2, hidden), … for messages; the first 20. */
export function describeSheets (sheets: readonly ListedSheet[]): string {
  const listed = sheets.slice(0, 20).map((s, i) => `"${s.name}" (${i + 1}${s.visibility === 'visible' ? '' : ', hidden'})`)
  return listed.join(', ') + (sheets.length > 20 ? `, and ${sheets.length - 20} more` : '')
}

/**
 * The visitor, with the sheet named in a refusal of its header (LEDGER_MISSING_COLUMNS):
 * "the first row" alone leaves a person guessing which sheet was read, and what it held.
 */
export function naming (sheetName: string, sheets: readonly ListedSheet[], onRow: RowVisitor): RowVisitor {
  return (rowNumber: number, cells: Cell[]) => {
    try {
      return onRow(rowNumber, cells)
    } catch (err) {
      if (err instanceof EngineError && err.code === 'LEDGER_MISSING_COLUMNS') {
        const others = sheets.length > 1 ? ` The workbook's sheets: ${describeSheets(sheets)}; send the sheet field to read another one.` : ''
        throw new EngineError(err.code, `Sheet "${sheetName}", row ${rowNumber}: ${err.message.replace(/^The first row/, 'the header row')}${others}`, err.details)
      }
      throw err
    }
  }
}
