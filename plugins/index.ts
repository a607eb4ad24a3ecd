/**
 * The ordered registry of extraction plugins. The engine scores every active plugin and
 * takes the highest confidence; on a tie the earlier entry wins, so list the more
 * specific document first. No directory scanning, no registration side effects: adding a
 * document type is adding its folder and one line here (docs/plugins.md).
 */
import type { ExtractorPlugin } from '../core/plugin-api.js'
import { pgdasExtrato } from './pgdas-extrato/index.js'
import { pgdasDeclaracao } from './pgdas-declaracao/index.js'
import { pgdasRecibo } from './pgdas-recibo/index.js'

export const plugins: readonly ExtractorPlugin[] = [
  pgdasExtrato,
  pgdasDeclaracao,
  pgdasRecibo
]
