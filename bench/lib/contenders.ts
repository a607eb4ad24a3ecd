/** The rows of the read tables: who is measured, under which label and node flags. */
import type { ContenderId } from '../child/protocol.js'

export interface Contender {
  id: ContenderId
  label: string
  /** A library we compare against (dropped by --skip-peers). */
  isPeer: boolean
  /** What a pass must have seen: every byte of the sheet XML, every row, or every row and cell. */
  sees: 'bytes' | 'rows' | 'cells'
  nodeArgs: string[]
  /** See PassOptions.collectBetweenPasses: only for whole-workbook readers. */
  collectBetweenPasses: boolean
}

export const INFLATE: Contender = { id: 'inflate', label: 'inflate only (ZipArchive)', isPeer: false, sees: 'bytes', nodeArgs: [], collectBetweenPasses: false }

export const READ_CONTENDERS: readonly Contender[] = [
  INFLATE,
  { id: 'yauzl', label: 'inflate only (yauzl stream, 16 KiB)', isPeer: false, sees: 'bytes', nodeArgs: [], collectBetweenPasses: false },
  { id: 'reader', label: '**razao reader**', isPeer: false, sees: 'cells', nodeArgs: [], collectBetweenPasses: false },
  // The same two on zlib's plain stream, the path every Node line without a checked
  // native handle takes (core/xlsx/inflate.ts): is the handle still worth keeping?
  { id: 'inflate-stream', label: 'inflate only (ZipArchive, stream engine)', isPeer: false, sees: 'bytes', nodeArgs: [], collectBetweenPasses: false },
  { id: 'reader-stream', label: 'razao reader, stream engine', isPeer: false, sees: 'cells', nodeArgs: [], collectBetweenPasses: false },
  // readFile holds the whole workbook: ~2.3 GB at a million rows, past node's default heap.
  { id: 'sheetjs', label: 'SheetJS xlsx (readFile, dense)', isPeer: true, sees: 'cells', nodeArgs: ['--max-old-space-size=8192'], collectBetweenPasses: true },
  { id: 'exceljs', label: 'ExcelJS streaming reader', isPeer: true, sees: 'cells', nodeArgs: [], collectBetweenPasses: false },
  { id: 'sax', label: 'sax over inflated XML', isPeer: true, sees: 'cells', nodeArgs: [], collectBetweenPasses: false },
  { id: 'saxes', label: 'saxes over inflated XML', isPeer: true, sees: 'cells', nodeArgs: [], collectBetweenPasses: false }
]

export const HTTP_CONTENDERS: readonly Contender[] = [
  { id: 'reader', label: 'razao reader alone', isPeer: false, sees: 'cells', nodeArgs: [], collectBetweenPasses: false },
  { id: 'analyze', label: 'reader + analyzeLedger, in process', isPeer: false, sees: 'rows', nodeArgs: [], collectBetweenPasses: false },
  { id: 'http', label: 'POST /v1/analyze over HTTP', isPeer: false, sees: 'rows', nodeArgs: [], collectBetweenPasses: false }
]
