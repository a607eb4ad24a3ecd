/**
 * Which sheet of a workbook a read takes, for both formats. The spec's "first sheet" is
 * read as the first sheet a person sees: the first tab, in workbook order, that is not
 * hidden. A hidden sheet (`state="hidden"`, which the user can show again) and a
 * "very hidden" one (`state="veryHidden"`, shown only through VBA) are skipped, as Excel
 * shows neither as a tab (ECMA-376 Part 1, 18.2.19 and 18.18.68). Reading the hidden one
 * would import values nobody looking at the file sees.
 *
 * The only place that decides it: a later option to name the sheet (by name or 1-based
 * index) belongs here.
 */
import { EngineError } from '../errors.js'

export type SheetVisibility = 'visible' | 'hidden' | 'veryHidden'

/** A sheet as the workbook lists it. */
export interface ListedSheet {
  name: string
  visibility: SheetVisibility
}

/** Index (0-based, workbook order) of the sheet to read. */
export function chooseSheet (sheets: readonly ListedSheet[]): number {
  if (sheets.length === 0) throw new EngineError('SHEET_NO_SHEETS', 'The workbook has no sheets.')
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
