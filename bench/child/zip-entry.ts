/** Finds one entry of a yauzl archive opened with lazyEntries (child and parent share it). */
import type yauzl from 'yauzl'

export function findEntry (zip: yauzl.ZipFile, name: string): Promise<yauzl.Entry> {
  return new Promise((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entry.fileName === name) resolve(entry)
      else zip.readEntry()
    })
    zip.once('end', () => reject(new Error(`the archive has no ${name}`)))
    zip.once('error', reject)
    zip.readEntry()
  })
}
