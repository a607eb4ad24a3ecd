export { sha256File } from './sha256.js'
