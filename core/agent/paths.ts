import { isAbsolute, relative, sep } from 'node:path'

/** True when `path` lies strictly inside `root` (both already real, absolute paths). */
export function isInside (root: string, path: string): boolean {
  const rel = process.platform === 'win32' ? relative(root.toLowerCase(), path.toLowerCase()) : relative(root, path)
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)
}
