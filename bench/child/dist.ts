/**
 * Loads the built modules by absolute URL. Children run on plain node, and the
 * types come from the sources (erased when the child is transpiled), so the
 * benchmark measures exactly the JavaScript that production runs.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type * as LedgerModule from '../../core/ledger/index.js'
import type * as XlsxModule from '../../core/xlsx/index.js'
// zip.ts is private to core/xlsx; the inflate-only baseline must drive it directly.
import type * as ZipModule from '../../core/xlsx/zip.js'
import type * as AppModule from '../../server/import/app.js'
import type * as ConfigModule from '../../server/config.js'
import type * as PoolModule from '../../workers/pool.js'

export type Xlsx = typeof XlsxModule
export type Zip = typeof ZipModule
export type Ledger = typeof LedgerModule
export type App = typeof AppModule
export type Config = typeof ConfigModule
export type Pool = typeof PoolModule

export function importDist<T> (distDir: string, relativePath: string): Promise<T> {
  return import(pathToFileURL(join(distDir, relativePath)).href) as Promise<T>
}

/** The service's default IMPORT_MAX_INFLATED_BYTES (2 GiB): far above any sheet here. */
export const MAX_INFLATED_BYTES = 2048 * 1024 * 1024
