import type { Company } from '../../core/db/companies.js'

/** A company as the CLI prints it (and, later, the gateway's admin API returns it). */
export function toWireCompany (c: Company) {
  return { id: c.id, codigo_dominio: c.codigoDominio, nome: c.nome, cnpj: c.cnpj, ativo: c.ativo, criado_em: c.criadoEm, atualizado_em: c.atualizadoEm }
}
