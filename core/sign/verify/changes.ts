/**
 * What the incremental updates after a signature changed (ISO 32000-1 §7.5.6): every
 * object defined in the bytes after the signed revision is compared with the revision's
 * own definition and sorted into the classes pyHanko's difference analysis uses, from
 * harmless to fatal: LTA_UPDATES (a DSS, document time-stamps), FORM_FILLING (field
 * values, new fields, more signatures), ANNOTATIONS (comments, stamps), OTHER (pages
 * added or removed, page content, anything not recognised). A certification signature's
 * DocMDP permission (ISO 32000-1 §12.8.2.2) says which classes it allows: P=1 only
 * LTA_UPDATES, P=2 up to FORM_FILLING, P=3 up to ANNOTATIONS.
 */
import { Name, RawObjects, Ref, Str, isName } from '../../pdf/index.js'
import type { Dict, ObjectDefinition, Value } from '../../pdf/index.js'

export const MODIFICATION_LEVELS = ['NONE', 'LTA_UPDATES', 'FORM_FILLING', 'ANNOTATIONS', 'OTHER'] as const
export type ModificationLevel = typeof MODIFICATION_LEVELS[number]

export interface ChangesAfter {
  /** Incremental updates appended after the signed revision. */
  updates: number
  pagesAdded: number
  pagesRemoved: number
  annotationsAddedOrChanged: number
  formFieldsAddedOrChanged: number
  signaturesAdded: number
  documentTimestampsAdded: number
  securityStoreAdded: boolean
  /** Sentences for the changes of class OTHER. */
  other: string[]
  level: ModificationLevel
}

export const NO_CHANGES: ChangesAfter = Object.freeze({
  updates: 0, pagesAdded: 0, pagesRemoved: 0, annotationsAddedOrChanged: 0, formFieldsAddedOrChanged: 0, signaturesAdded: 0, documentTimestampsAdded: 0, securityStoreAdded: false, other: [], level: 'NONE'
}) as ChangesAfter

const rank = (level: ModificationLevel): number => MODIFICATION_LEVELS.indexOf(level)
export const worse = (a: ModificationLevel, b: ModificationLevel): ModificationLevel => rank(a) >= rank(b) ? a : b
export const allowedBy = (docMdp: 1 | 2 | 3): ModificationLevel => docMdp === 1 ? 'LTA_UPDATES' : docMdp === 2 ? 'FORM_FILLING' : 'ANNOTATIONS'
export const exceeds = (level: ModificationLevel, allowed: ModificationLevel): boolean => rank(level) > rank(allowed)

const ANNOTATION_SUBTYPES = new Set(['Text', 'Link', 'FreeText', 'Line', 'Square', 'Circle', 'Polygon', 'PolyLine', 'Highlight', 'Underline', 'Squiggly', 'StrikeOut', 'Stamp', 'Caret', 'Ink', 'Popup', 'FileAttachment', 'Sound', 'Movie', 'Widget', 'Screen', 'PrinterMark', 'TrapNet', 'Watermark', '3D', 'Redact'])
/** Catalog entries a later update may add or change, and the class of that change. */
const CATALOG_KEYS: Record<string, ModificationLevel> = { DSS: 'LTA_UPDATES', Extensions: 'LTA_UPDATES', AcroForm: 'FORM_FILLING', Metadata: 'LTA_UPDATES' }
/** Page entries a later update may change: its annotations. */
const PAGE_KEYS: Record<string, ModificationLevel> = { Annots: 'ANNOTATIONS' }

const dictOf = (value: Value | undefined): Dict | undefined => value instanceof Map ? value : undefined
const typeOf = (dict: Dict | undefined): string | undefined => { const t = dict?.get('Type'); return t instanceof Name ? t.name : undefined }

/** Deep equality of two parsed values (strings compare equal: their bytes are not kept by the reader). */
function same (a: Value | undefined, b: Value | undefined): boolean {
  if (a === b) return true
  if (a instanceof Ref && b instanceof Ref) return a.num === b.num && a.gen === b.gen
  if (a instanceof Name && b instanceof Name) return a.name === b.name
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]))
  if (a instanceof Map && b instanceof Map) return a.size === b.size && [...a].every(([k, v]) => b.has(k) && same(v, b.get(k)))
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') return a.constructor === b.constructor && !(a instanceof Map) && !Array.isArray(a) && !(a instanceof Ref) && !(a instanceof Name)
  return false
}

const changedKeys = (before: Dict, after: Dict): string[] =>
  [...new Set([...before.keys(), ...after.keys()])].filter((k) => !same(before.get(k), after.get(k)))

/** Compares the revision ending at `signedEnd` with the whole file. */
export function changesAfter (bytes: Uint8Array, signedEnd: number): ChangesAfter {
  const tail = bytes.subarray(signedEnd)
  const tailText = Buffer.from(tail.buffer, tail.byteOffset, tail.byteLength).toString('latin1')
  if (tailText.trim() === '') return NO_CHANGES
  const out: ChangesAfter = { ...NO_CHANGES, other: [], updates: (tailText.match(/%%EOF/g) ?? []).length }
  let level: ModificationLevel = 'NONE'
  const raise = (l: ModificationLevel): void => { level = worse(level, l) }
  const other = (sentence: string): void => { if (!out.other.includes(sentence)) out.other.push(sentence); raise('OTHER') }
  let added: RawObjects
  let before: RawObjects
  try {
    added = new RawObjects(tail)
    before = new RawObjects(bytes.subarray(0, signedEnd))
  } catch {
    other('The updates after the signature cannot be read.')
    return { ...out, level }
  }
  if (added.incomplete) other('An object stream of the later updates cannot be read.')
  // The last definition in the signed revision of each number, and the last one after it.
  const last = (objects: RawObjects, num: number): ObjectDefinition | undefined => objects.definitions(num).at(-1)
  const newest = new Map<number, ObjectDefinition>()
  for (const def of added.all()) newest.set(def.num, def)

  // Widgets (fields) whose value is a document time-stamp added after the signature: adding
  // them, and listing them in a page's /Annots or the form's /Fields, is an LTA update.
  const timestampWidgets = new Set<number>()
  for (const [num, def] of newest) {
    const value = dictOf(def.value)?.get('V')
    const target = value instanceof Ref ? newest.get(value.num) : undefined
    const targetDict = dictOf(target?.value)
    if (targetDict !== undefined && (typeOf(targetDict) === 'DocTimeStamp' || isName(targetDict.get('SubFilter'), 'ETSI.RFC3161'))) timestampWidgets.add(num)
  }
  /** The class of a list (/Annots, /Fields) that gained entries: LTA when they are all time-stamp widgets. */
  const listChange = (oldList: Value | undefined, newList: Value | undefined, otherwise: ModificationLevel): ModificationLevel => {
    const refs = (v: Value | undefined): number[] => (Array.isArray(v) ? v : []).flatMap((x) => x instanceof Ref ? [x.num] : [])
    const kept = new Set(refs(oldList))
    const gained = refs(newList).filter((n) => !kept.has(n))
    const lost = [...kept].filter((n) => !refs(newList).includes(n))
    return lost.length === 0 && gained.length > 0 && gained.every((n) => timestampWidgets.has(n)) ? 'LTA_UPDATES' : otherwise
  }

  for (const [num, def] of newest) {
    const old = last(before, num)
    const dict = dictOf(def.value)
    const type = typeOf(dict)
    if (type === 'XRef' || type === 'ObjStm') continue
    // Strings are not kept by the reader, so a field or annotation rewritten with the same
    // structure may hold another value (a form field's /V): it counts as changed.
    const mayHideText = dict !== undefined && hasString(dict) && (isAnnotation(dict) || dict.has('FT'))
    if (old !== undefined && same(old.value, def.value) && sameData(before, old, added, def) && !mayHideText) continue
    const oldDict = dictOf(old?.value)
    if (dict !== undefined && (dict.has('ByteRange') || type === 'Sig' || type === 'DocTimeStamp')) {
      if (old !== undefined) { other(`An existing signature dictionary (object ${num}) was rewritten.`); continue }
      if (type === 'DocTimeStamp' || isName(dict.get('SubFilter'), 'ETSI.RFC3161')) { out.documentTimestampsAdded++; raise('LTA_UPDATES') } else { out.signaturesAdded++; raise('FORM_FILLING') }
      continue
    }
    if (type === 'DSS' || type === 'VRI' || (dict !== undefined && (dict.has('OCSPs') || dict.has('CRLs') || dict.has('VRI')))) {
      out.securityStoreAdded = true
      raise('LTA_UPDATES')
      continue
    }
    if (type === 'Catalog') {
      if (oldDict === undefined) { other('The document catalog was replaced.'); continue }
      for (const key of changedKeys(oldDict, dict!)) {
        const allowed = CATALOG_KEYS[key]
        if (allowed === undefined) other(`The document catalog's /${key} was changed.`)
        else raise(allowed)
      }
      continue
    }
    if (type === 'Pages') {
      const count = (d: Dict | undefined): number => typeof d?.get('Count') === 'number' ? d.get('Count') as number : 0
      if (oldDict !== undefined && !isName(oldDict.get('Type'), 'Pages')) { other(`Object ${num} became a page tree node.`); continue }
      const delta = count(dict) - count(oldDict)
      if (oldDict === undefined || dict?.get('Parent') === undefined) {
        if (delta > 0) out.pagesAdded += delta
        if (delta < 0) out.pagesRemoved -= delta
      }
      if (delta !== 0 || oldDict === undefined || changedKeys(oldDict, dict!).some((k) => k !== 'Count')) other('Pages were added, removed or reordered.')
      continue
    }
    if (type === 'Page') {
      if (oldDict === undefined) { other('Pages were added, removed or reordered.'); continue }
      for (const key of changedKeys(oldDict, dict!)) {
        const allowed = PAGE_KEYS[key]
        if (allowed === undefined) other(`The content or resources of a page were changed (/${key}).`)
        else raise(listChange(oldDict.get('Annots'), dict!.get('Annots'), annotationsOnlyWidgets(added, dict!.get('Annots')) ? 'FORM_FILLING' : allowed))
      }
      continue
    }
    if (timestampWidgets.has(num)) { raise('LTA_UPDATES'); continue }
    if (dict !== undefined && isAnnotation(dict)) {
      const widget = isName(dict.get('Subtype'), 'Widget') || dict.has('FT')
      if (widget) { out.formFieldsAddedOrChanged++; raise('FORM_FILLING') } else { out.annotationsAddedOrChanged++; raise('ANNOTATIONS') }
      continue
    }
    if (dict !== undefined && (dict.has('FT') || (dict.has('T') && dict.has('Kids')))) { out.formFieldsAddedOrChanged++; raise('FORM_FILLING'); continue }
    if (dict !== undefined && dict.has('Fields')) {
      const keys = oldDict === undefined ? ['Fields'] : changedKeys(oldDict, dict)
      raise(keys.every((k) => k === 'Fields' || k === 'SigFlags') ? listChange(oldDict?.get('Fields'), dict.get('Fields'), 'FORM_FILLING') : 'FORM_FILLING')
      continue
    }
    if (old === undefined) continue // a new font, image, appearance stream or array: only counts when something above uses it
    if (dict !== undefined && (type === 'Metadata' || isInfo(dict))) { raise('LTA_UPDATES'); continue }
    // A changed array: what it is depends on who points at it.
    if (Array.isArray(def.value)) {
      const key = referringKey(before, num)
      if (key === 'Annots') { raise(listChange(old.value, def.value, 'ANNOTATIONS')); continue }
      if (key === 'Fields') { raise(listChange(old.value, def.value, 'FORM_FILLING')); continue }
      if (key === 'Certs' || key === 'OCSPs' || key === 'CRLs') { out.securityStoreAdded = true; raise('LTA_UPDATES'); continue }
      if (key === 'Kids') { other('Pages were added, removed or reordered.'); continue }
    }
    other(`An existing object (${num}${type === undefined ? '' : `, /${type}`}) was changed.`)
  }
  return { ...out, level }
}

function sameData (beforeObjects: RawObjects, old: ObjectDefinition, addedObjects: RawObjects, def: ObjectDefinition): boolean {
  if (old.data === undefined && def.data === undefined) return true
  const a = old.data === undefined ? undefined : beforeObjects.rawData(old)
  const b = def.data === undefined ? undefined : addedObjects.rawData(def)
  return a !== undefined && b !== undefined && Buffer.from(a).equals(Buffer.from(b))
}

function hasString (value: Value): boolean {
  if (value instanceof Str) return true
  if (Array.isArray(value)) return value.some(hasString)
  if (value instanceof Map) return [...value.values()].some(hasString)
  return false
}

function isAnnotation (dict: Dict): boolean {
  const subtype = dict.get('Subtype')
  return (typeOf(dict) === 'Annot' || dict.has('Rect')) && subtype instanceof Name && ANNOTATION_SUBTYPES.has(subtype.name)
}

function isInfo (dict: Dict): boolean {
  return typeOf(dict) === undefined && ['Producer', 'ModDate', 'Creator', 'CreationDate', 'Title', 'Author'].some((k) => dict.has(k)) && ![...dict.keys()].some((k) => ['Subtype', 'Rect', 'Kids', 'FT', 'Filter', 'Length'].includes(k))
}

/** True when every annotation the array lists (as defined after the signature) is a form widget. */
function annotationsOnlyWidgets (added: RawObjects, annots: Value | undefined): boolean {
  const list = Array.isArray(annots) ? annots : []
  return list.length > 0 && list.every((item) => {
    const def = item instanceof Ref ? added.definitions(item.num).at(-1) : undefined
    const dict = dictOf(def?.value)
    return dict === undefined || isName(dict.get('Subtype'), 'Widget')
  })
}

/** The key under which some dictionary of the signed revision refers to object `num`. */
function referringKey (objects: RawObjects, num: number): string | undefined {
  for (const def of objects.all()) {
    const dict = dictOf(def.value)
    if (dict === undefined) continue
    for (const [key, value] of dict) {
      if (value instanceof Ref && value.num === num) return key
    }
  }
  return undefined
}
