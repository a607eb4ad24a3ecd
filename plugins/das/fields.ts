/**
 * What a DAS of the Simples Nacional (documents.md §4) prints: the fields every such document prints (a null one is a reading that
 * failed: the engine warns and lowers confidence) or prints only sometimes, and the labels
 * that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'
import { GUIDE_LABELS, guideFields } from '../_shared/simples-nacional/guide-fields.js'
import type { Das } from './parse.js'

export function fields (data: Das): ExpectedFields {
  const guide = guideFields()
  const installment = data.subtipo === 'PARCELAMENTO' ? ['parcelamento.numero', 'parcelamento.parcela', 'parcelamento.totalParcelas'] : []
  return { required: ['cnpj', 'razaoSocial', ...guide.required, ...installment], optional: guide.optional }
}

// `Número do Parcelamento:` is printed inside the observations, which are kept whole.
export const labels = GUIDE_LABELS
