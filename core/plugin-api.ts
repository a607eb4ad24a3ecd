/**
 * Everything an extraction plugin may import from the engine (lint enforces it: a plugin
 * imports this file, its own folder and its family's shared modules under
 * plugins/_shared/). The engine owns confidence; a plugin declares rules, checks and a
 * parser, and reads values through the text API so each one has evidence.
 * Guide: docs/plugins.md.
 */
export type {
  Box,
  BuiltCollectionLine,
  CheckOutcome,
  CollectionLine,
  ConsistencyCheck,
  DataSchema,
  DetectionRule,
  Diagnostic,
  Evidence,
  ExpectedFields,
  ExtractorPlugin,
  Hit,
  Label,
  OrderedColumn,
  OrderedField,
  OrderedRow,
  OrderedTable,
  OrderedValues,
  ParseContext,
  PluginStatus,
  RowOptions,
  RuleKind,
  SearchOptions,
  TableRow,
  TextDocument,
  TextLine,
  TextRegion
} from './extraction/index.js'
export {
  /** The helpers a plugin declares the shape of its `data` with (`plugins/<id>/schema.ts`). */
  schema,
  /** Money text → integer cents (sums are made on these), or null. */
  moneyCents,
  /** Money text → JSON number, or null. */
  moneyNumber,
  /** Integer cents → JSON number. */
  centsToMoney,
  /** A JSON money number of data → integer cents, for checks that add values up. */
  numberToCents,
  /** `3,00 %`, `0,28`, `2.00%` → number, or null. */
  percentNumber,
  /** `dd/mm/aaaa` → ISO date, or null. */
  isoDate,
  /** `dd/mm/aaaa [às|-] hh:mm[:ss]` → ISO local date-time, or null. */
  isoDateTime,
  /** `MM/AAAA`, month names, `Mmm/AAAA` → `AAAA-MM`; `13/AAAA` → `AAAA-13`; `Anual/AAAA` → `AAAA`; or null. */
  competence,
  /** Printed text → one-spaced, trimmed string; empty → null. */
  textValue,
  /** The detection form of a text (accents stripped, upper case, collapsed spaces). */
  normalizeText,
  /** Digits of a printed number. */
  onlyDigits,
  /** Printed CNPJ (numeric or alphanumeric) → 14 bare characters, or null. */
  cnpjChars,
  /** CNPJ check digits (both forms). */
  isValidCnpj,
  /** The two check digits of a CNPJ's first 12 positions (fixture generators). */
  cnpjCheckDigits,
  /** Printed CPF → 11 digits, or null. */
  cpfDigits,
  /** CPF check digits. */
  isValidCpf,
  /** The two check digits of a CPF's first 9 digits (fixture generators). */
  cpfCheckDigits,
  /** FEBRABAN 48-digit collection line → barcode, amount, issuer and check-digit verdict. */
  readCollectionLine,
  /** A collection line that verifies, from a 44-digit code or its parts (fixture generators, tests). */
  buildCollectionLine,
  /** The 25-digit free field of an RFB guide: YYDDD due date, document number, 3 digits. */
  rfbFreeField,
  /** Pattern source of a Brazilian money value. */
  MONEY_PATTERN,
  /** Pattern source of a printed CNPJ. */
  CNPJ_PATTERN,
  /** Pattern source of a printed CPF. */
  CPF_PATTERN,
  /** A hit for readings that disagree, where one was read: `ctx.take` gives null and a warning saying why. */
  conflictHit
} from './extraction/index.js'
