/** The labels the PGDAS-D extract and declaration both print (documents.md §1, §2), for their plugins' `labels`. */
export const PGDAS_LABELS = [
  'Nome Empresarial', 'Nome empresarial:', 'Período de Apuração', 'Regime de Apuração:', 'Optante pelo Simples Nacional:',
  'Discriminativo de Receitas', 'Receita bruta acumulada nos doze meses anteriores ao PA', 'Receita bruta acumulada no ano-calendário corrente',
  'Receita bruta acumulada no ano-calendário anterior', 'Limite de receita bruta proporcionalizado', 'Total Geral da Empresa',
  'Informações da Apuração', 'Informações do Contribuinte', 'Identificação do Contribuinte'
]
