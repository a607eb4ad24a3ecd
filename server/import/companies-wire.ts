import type { Company } from '../../core/db/companies.js'

/** A company as the CLI prints it; `empresa_codigo` is the code the gateway knows it by. */
export function toWireCompany (c: Company) {
  return { id: c.id, empresa_codigo: c.empresaCodigo, codigo_dominio: c.codigoDominio, nome: c.nome, cnpj: c.cnpj, ativo: c.ativo, criado_em: c.criadoEm, atualizado_em: c.atualizadoEm }
}
