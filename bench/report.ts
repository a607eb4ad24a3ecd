/**
 * `npm run bench:report DIR [-- --out FILE]`: one self-contained HTML page of every
 * benchmark result (razao-bench/1) found in DIR, charted over time (bench/lib/report.ts).
 */
import { runReport } from './lib/report.js'

process.exitCode = await runReport(process.argv.slice(2), (text) => process.stdout.write(text), (text) => process.stderr.write(text))
