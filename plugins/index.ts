/**
 * The ordered registry of extraction plugins. The engine scores every active plugin and
 * takes the highest confidence; on a tie the earlier entry wins, so list the more
 * specific document first. No directory scanning, no registration side effects: adding a
 * document type is adding its folder and one line here (docs/plugins.md).
 */
import type { ExtractorPlugin } from '../core/plugin-api.js'
import { darf } from './darf/index.js'
import { das } from './das/index.js'
import { dasMei } from './das-mei/index.js'
import { decIssqnPoa } from './dec-issqn-poa/index.js'
import { nfseDanfse } from './nfse-danfse/index.js'
import { pgdasDeclaracao } from './pgdas-declaracao/index.js'
import { pgdasExtrato } from './pgdas-extrato/index.js'
import { pgdasRecibo } from './pgdas-recibo/index.js'
import { relatorioSimples } from './relatorio-simples/index.js'

// Grouped by family, the more specific document before its neighbour (DAS-MEI before DAS).
// One entry per line with a trailing comma, so that two new plugins merge without a conflict.
export const plugins: readonly ExtractorPlugin[] = [
  pgdasExtrato,
  pgdasDeclaracao,
  pgdasRecibo,
  relatorioSimples,
  dasMei,
  das,
  darf,
  nfseDanfse,
  decIssqnPoa,
]
