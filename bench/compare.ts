/**
 * `npm run bench:compare OLD.json NEW.json [-- --floor 5]`: what changed between two
 * benchmark runs; exit 1 when a ratio of ours got worse beyond its spread (bench/lib/compare.ts).
 */
import { runCompare } from './lib/compare.js'

process.exitCode = await runCompare(process.argv.slice(2), (text) => process.stdout.write(text), (text) => process.stderr.write(text))
