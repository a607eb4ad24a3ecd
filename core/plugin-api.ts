/**
 * Everything an extraction plugin may import (lint enforces it: plugins/ import only
 * this file and their own folder). The engine owns confidence; a plugin declares rules,
 * checks and a parser, and reads values through the text API so each one has evidence.
 * Guide: docs/plugins.md.
 */
export type {
  Box,
  CheckOutcome,
  ConsistencyCheck,
  DetectionRule,
  Diagnostic,
  Evidence,
  ExtractorPlugin,
  Hit,
  ParseContext,
  PluginStatus,
  RuleKind,
  SearchOptions,
  TextDocument,
  TextLine
} from './extraction/index.js'
/** The two CNPJ check digits of a 12-character base (both forms), for fixture generators. */
export { cnpjCheckDigits } from './cnpj.js'
export {
  /** Money text → integer cents (sums are made on these), or null. */
  moneyCents,
  /** Money text → JSON number, or null. */
  moneyNumber,
  /** Integer cents → JSON number. */
  centsToMoney,
  /** `dd/mm/aaaa` → ISO date, or null. */
  isoDate,
  /** `dd/mm/aaaa hh:mm[:ss]` → ISO local date-time, or null. */
  isoDateTime,
  /** `MM/AAAA`, month names, `Mmm/AAAA` → `AAAA-MM`, or null. */
  competence,
  /** The detection form of a text (accents stripped, upper case, collapsed spaces). */
  normalizeText,
  /** Digits of a printed number. */
  onlyDigits,
  /** Printed CNPJ (numeric or alphanumeric) → 14 bare characters, or null. */
  cnpjChars,
  /** CNPJ check digits (both forms). */
  isValidCnpj,
  /** FEBRABAN 48-digit collection line → barcode, amount, issuer and check-digit verdict. */
  readCollectionLine,
  /** Pattern source of a Brazilian money value. */
  MONEY_PATTERN,
  /** Pattern source of a printed CNPJ. */
  CNPJ_PATTERN
} from './extraction/index.js'
