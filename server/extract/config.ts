/**
 * The extraction service's configuration (spec 3 part B), read once at start-up with the
 * shared EnvReader: a bad value stops the process naming the variable; the key is never echoed.
 */
import { DEFAULT_MAX_DOCUMENT_IMAGE_PIXELS, DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MAX_PAGE_IMAGE_PIXELS } from '../../core/extraction/ocr/image-bounds.js'
import { OCR_DPI } from '../../core/extraction/ocr/page-image.js'
import { EnvReader } from '../config.js'

export interface ExtractConfig {
  host: string
  port: number
  /** Undefined: generated once and kept in the data folder (`extract-api-key`). */
  apiKey: string | undefined
  /** Larger files get 413. */
  maxFileBytes: number
  /** Documents with more pages are refused (422). */
  maxPages: number
  /** Most processor time one document's reading may take, ms (its thread's, and its Tesseract worker's); the pool task is stopped a little after. */
  documentTimeoutMs: number
  /**
   * Longest one turn of a document may take in wall time, ms, however little processor time
   * it had (0: three times documentTimeoutMs): past it, a machine too busy to read the
   * document answers SERVICE_BUSY (503).
   */
  documentWallTimeoutMs: number
  /** Extraction requests let in at once (0: twice the pool size, at least 2); the rest wait before their bodies are read. */
  maxInFlight: number
  /** Longest a whole request may take to arrive, ms, so that a stalled upload cannot hold a place for ever. */
  requestTimeoutMs: number
  /** Longest an upload may send nothing while it holds a place, ms: past it the answer is 408 REQUEST_TIMEOUT. */
  bodyTimeoutMs: number
  /** Longest a document may wait for a pool thread, ms: past it the answer is 503 SERVICE_BUSY (the document deadline counts only from the thread's start). */
  queueTimeoutMs: number
  /** Whether pages without a usable text layer are read by OCR (`EXTRACT_OCR=off`: they stay without text). */
  ocr: boolean
  /** Resolution scanned pages are drawn at for OCR. */
  ocrDpi: number
  /**
   * Documents read by OCR at once (0: one fewer than the pool's threads, at least 1): the
   * other threads stay free for text-layer documents, which a scan can otherwise keep
   * waiting for its whole deadline.
   */
  ocrThreads: number
  /** Most pixels one image of a scanned document may have (its soft mask and mask on their own). */
  maxImagePixels: number
  /** Most pixels the images one scanned page draws may have together. */
  maxPageImagePixels: number
  /** Most pixels the images of all the scanned pages of one document may have together. */
  maxDocumentImagePixels: number
  /**
   * `EXTRACT_WARM=on`: every pool thread starts with the service, reads made-up documents
   * (and a scan of one, when OCR is on) before the first request, never ends idle, and
   * keeps its Tesseract worker: no request pays a cold thread, at the price of the
   * threads' memory for good.
   */
  warm: boolean
}

const MIB = 1024 * 1024

export function loadExtractConfig (env: NodeJS.ProcessEnv): ExtractConfig {
  const read = new EnvReader(env)
  const config: ExtractConfig = {
    host: read.string('EXTRACT_HOST', '127.0.0.1'),
    port: read.integer('EXTRACT_PORT', 8083, 0, 65_535),
    apiKey: read.optionalSecret('EXTRACT_API_KEY', 16),
    maxFileBytes: read.integer('EXTRACT_MAX_FILE_BYTES', 20 * MIB, 1024, 512 * MIB),
    maxPages: read.integer('EXTRACT_MAX_PAGES', 50, 1, 10_000),
    documentTimeoutMs: read.integer('EXTRACT_DOCUMENT_TIMEOUT_MS', 20_000, 100, 600_000),
    documentWallTimeoutMs: read.integer('EXTRACT_DOCUMENT_WALL_TIMEOUT_MS', 0, 0, 3_600_000),
    maxInFlight: read.integer('EXTRACT_MAX_IN_FLIGHT', 0, 0, 10_000),
    requestTimeoutMs: read.integer('EXTRACT_REQUEST_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    bodyTimeoutMs: read.integer('EXTRACT_BODY_TIMEOUT_MS', 30_000, 100, 3_600_000),
    queueTimeoutMs: read.integer('EXTRACT_QUEUE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    ocr: read.oneOf('EXTRACT_OCR', ['on', 'off'], 'on') === 'on',
    ocrDpi: read.integer('EXTRACT_OCR_DPI', OCR_DPI, 100, 600),
    ocrThreads: read.integer('EXTRACT_OCR_THREADS', 0, 0, 10_000),
    maxImagePixels: read.integer('EXTRACT_MAX_IMAGE_PIXELS', DEFAULT_MAX_IMAGE_PIXELS, 1_000_000, 1_000_000_000),
    maxPageImagePixels: read.integer('EXTRACT_MAX_PAGE_IMAGE_PIXELS', DEFAULT_MAX_PAGE_IMAGE_PIXELS, 1_000_000, 1_000_000_000),
    maxDocumentImagePixels: read.integer('EXTRACT_MAX_DOCUMENT_IMAGE_PIXELS', DEFAULT_MAX_DOCUMENT_IMAGE_PIXELS, 1_000_000, 10_000_000_000),
    warm: read.oneOf('EXTRACT_WARM', ['on', 'off'], 'off') === 'on'
  }
  read.throwIfInvalid()
  return config
}
