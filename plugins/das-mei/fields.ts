/**
 * What a DAS-MEI (documents.md §5) prints: the fields every such document prints (a null one is a reading that
 * failed: the engine warns and lowers confidence) or prints only sometimes, and the labels
 * that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'
import { GUIDE_LABELS, guideFields } from '../_shared/simples-nacional/guide-fields.js'
import type { DasMei } from './parse.js'

export function fields (data: DasMei): ExpectedFields {
  // Every page is a guide of its own.
  const guides = data.guias.map((_, i) => guideFields(`guias.${i}.`))
  return {
    required: ['cnpj', 'razaoSocial', 'guias', ...guides.flatMap((g) => g.required)],
    optional: ['cpf', 'versaoPgmei', ...guides.flatMap((g) => g.optional)]
  }
}

export const labels = GUIDE_LABELS
