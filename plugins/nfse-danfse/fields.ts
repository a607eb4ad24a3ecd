/**
 * What a DANFSe (documents.md §7), both layout versions prints: the fields every such document prints (a null one is a reading that
 * failed: the engine warns and lowers confidence) or prints only sometimes, and the labels
 * that bound every value read (docs/plugins.md).
 */
import type { ExpectedFields } from '../../core/plugin-api.js'

export function fields (): ExpectedFields {
  return {
    required: ['chaveAcesso', 'numeroNfse', 'competencia', 'dataHoraEmissao', 'prestador.documento', 'prestador.nome', 'servico.descricao', 'valores.valorServico', 'valores.valorLiquido'],
    optional: ['numeroDps', 'serieDps', 'dataHoraEmissaoDps', 'tomador.documento', 'tomador.nome', 'servico.codigoTributacaoNacional', 'issqn.tributacao', 'issqn.baseCalculo', 'issqn.aliquota', 'issqn.valorApurado']
  }
}

export const labels = [
  'Documento Auxiliar da NFS-e', 'Chave de Acesso da NFS-e', 'Número da NFS-e', 'Competência da NFS-e', 'Data e Hora da emissão da NFS-e',
  'Número da DPS', 'Série da DPS', 'Número do DPS', 'Série do DPS', 'Data e Hora da emissão da DPS', 'Situação da NFS-e', 'Finalidade',
  'Emitente da NFS-e', 'Prestador do Serviço', 'Tomador do Serviço', 'Intermediário do Serviço', 'Destinatário da Operação',
  'CNPJ / CPF / NIF', 'Inscrição Municipal', 'Indicador Municipal', 'Nome / Nome Empresarial', 'E-mail', 'Endereço', 'Município / Sigla UF',
  'Código IBGE / CEP', 'Simples Nacional na Data de Competência', 'Regime de Apuração Tributária pelo SN',
  'Serviço Prestado', 'Código de Tributação Nacional', 'Código de Tributação Municipal', 'Código da NBS', 'Descrição do Serviço',
  'Local da Prestação', 'País da Prestação', 'Tributação Municipal', 'Tipo de Tributação do ISSQN', 'Tributação do ISSQN', 'Município de Incidência do ISSQN',
  'Regime Especial de Tributação', 'Tipo de Imunidade', 'Suspensão da Exigibilidade do ISSQN', 'Benefício Municipal',
  'Base de Cálculo do ISSQN', 'Alíquota Aplicada', 'Retenção do ISSQN', 'ISSQN Apurado', 'Tributação Federal', 'Valor Total da NFS-e',
  'Valor do Serviço', 'Desconto Condicionado', 'Desconto Incondicionado', 'ISSQN Retido', 'Total das Retenções', 'Valor Líquido da NFS-e',
  'Totais Aproximados dos Tributos', 'Informações Complementares', 'Tributação IBS/CBS',
  // Longer names some third-party drawings print for the same cells.
  'Tributação IBS / CBS', 'Local da Prestação / Sigla UF / País', 'Município / Sigla UF / País de Incidência do ISSQN',
  'Regime Especial de Tributação do ISSQN', '*Endereço',
  // The whole names of cells whose shorter name is above: a value never starts with the rest of its label.
  'Indicador Municipal (Inscrição)', 'Total das Retenções Federais', 'Total das Retenções (ISSQN / Federais)',
  'Valor Líquido da NFS-e + IBS/CBS', 'Valor da Operação / Serviço', 'Total do IBS/CBS',
  // Cells the parser reads (or prints beside those it reads) by their whole names.
  'Código de Tributação Nacional / Municipal', 'CST / cClassTrib', 'Alíquota - IBS UF / IBS Mun', 'Nº NFS-e / CHAVE NFS-e',
  'Contribuição Previdenciária - Retida', 'Contribuições Sociais - Retidas', 'PIS/COFINS - Débito Apur. Própria',
  'PIS - Débito Apuração Própria', 'COFINS - Débito Apuração Própria', 'Valor Total Apurado - IBS', 'Alíquota - CBS',
  'Valor Total Apurado - CBS', 'País Resultado da Prestação do Serviço', 'Cálculo do BM', 'Número Processo Suspensão',
  'Total Deduções/Reduções', 'BC ISSQN',
  // Whole names third-party drawings print beside the cells read (BrazilFiscalReport, FalubaLuan/GerarDanfse).
  'Tipo de Imunidade do ISSQN', 'Descrição Contrib. Sociais - Retidas', 'Ind. Operação / Cód. IBGE / Município / UF',
  'Indicador de Operação / Código IBGE Incidência / Município Incidência / Sigla UF', 'Alíquota Efetiva - CBS', 'Alíquota Efetiva – CBS',
  'Valor Total Apurado – IBS', 'Valor Total Apurado – CBS', 'Tipo de Ambiente', 'Ambiente Gerador',
  // v2.0's party titles: a cell's value never starts with one.
  'Prestador / Fornecedor', 'Tomador / Adquirente', 'Intermediário da Operação',
  // The portal's v1.0 federal and totals cells, not read: labels of a row all the same.
  'Retenção do PIS/COFINS', 'Total Tributação Federal', 'IRRF, CP,CSLL - Retidos', 'PIS/COFINS Retidos'
]

/**
 * The v1.0 grid's one-word cells: labels only as a cell of their own. They bound no value
 * (an address may hold `CEP`, a description `município` or `IRRF`), and a cell whose first
 * run is one of them is empty.
 */
export const cellLabels = ['Telefone', 'Município', 'CEP', 'IRRF', 'CP', 'CSLL', 'PIS', 'COFINS', 'Federais', 'Estaduais', 'Municipais']
