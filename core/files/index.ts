export { FileRefusedError, readRegularFile } from './regular-file.js'
export { sha256File } from './sha256.js'
