/** Where the suites find the built code and keep their cached inputs. */
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** Built JavaScript: children measure this, never the TypeScript sources. */
export const DIST_DIR = join(REPO_ROOT, 'dist')
/** Git-ignored: generated ledgers, transpiled child scripts, upload temp files. */
export const OUT_DIR = join(REPO_ROOT, 'bench', 'out')
export const CHILD_SRC_DIR = join(REPO_ROOT, 'bench', 'child')
export const CHILD_JS_DIR = join(OUT_DIR, 'child')
