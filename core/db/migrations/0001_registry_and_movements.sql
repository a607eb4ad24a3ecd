-- Companies, importations and movements (spec 1, sections 1.4 and 3).
-- Statuses: PROCESSANDO (being written), VALIDADO (the active import of a company's
-- file), SUBSTITUIDO (replaced by a REIMPORTAR), FALHOU (failed; its movements were
-- rolled back). Only VALIDADO and SUBSTITUIDO reach API responses.

CREATE TABLE empresas (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  codigo_dominio text NOT NULL UNIQUE CHECK (codigo_dominio = btrim(codigo_dominio) AND codigo_dominio <> ''),
  nome           text NOT NULL CHECK (btrim(nome) <> ''),
  cnpj           text CHECK (cnpj ~ '^[0-9]{14}$'),
  ativo          boolean NOT NULL DEFAULT true,
  criado_em      timestamptz NOT NULL DEFAULT now(),
  atualizado_em  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE importacoes (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Compact key the movements carry (8 bytes per row instead of a 16-byte uuid).
  seq                 bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  empresa_id          uuid NOT NULL REFERENCES empresas (id),
  nome_arquivo        text NOT NULL,
  sha256              text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  modo                text NOT NULL CHECK (modo IN ('NORMAL', 'REIMPORTAR')),
  status              text NOT NULL CHECK (status IN ('PROCESSANDO', 'VALIDADO', 'SUBSTITUIDO', 'FALHOU')),
  batch_size          integer NOT NULL CHECK (batch_size BETWEEN 100 AND 10000),
  total_linhas        integer,
  linhas_inseridas    integer,
  total_debito        numeric(18, 2),
  total_credito       numeric(18, 2),
  -- The database session writing this importation; recovery marks PROCESSANDO rows
  -- whose session is gone (a killed process) as FALHOU.
  backend_pid         integer,
  substituida_por     uuid REFERENCES importacoes (id),
  erro                text,
  criado_em           timestamptz NOT NULL DEFAULT now(),
  atualizado_em       timestamptz NOT NULL DEFAULT now(),
  finalizado_em       timestamptz,
  CHECK (status <> 'SUBSTITUIDO' OR substituida_por IS NOT NULL)
);

-- At most one active import per company and file, whatever the application does.
CREATE UNIQUE INDEX importacoes_uma_ativa_por_arquivo ON importacoes (empresa_id, sha256) WHERE status = 'VALIDADO';
CREATE INDEX importacoes_em_processamento ON importacoes (status) WHERE status = 'PROCESSANDO';

-- Movements are insert-only and written by COPY, so this table is shaped for loading:
-- no primary key and no foreign key. Measured on 500k rows here: a foreign key to
-- importacoes makes COPY 2.3x slower (a trigger per row), a (uuid, row) primary key
-- another 1.4x. Integrity comes from the load itself instead: movements are only
-- written inside the transaction that validates their importation's count and totals,
-- and an importation that has movements is never deleted. Each load appends its rows
-- contiguously with an increasing importacao_seq, which is what a BRIN index needs.
CREATE TABLE movimentos (
  importacao_seq         bigint NOT NULL,
  linha_origem           integer NOT NULL,
  id                     bigint,
  id_movim_finan         bigint NOT NULL,
  data                   date,
  id_conta               bigint,
  planejamento_analitico text,
  id_planejamento        bigint,
  planejamento           text,
  tipo                   text,
  cod_planejamento       text,
  credito                numeric(18, 2) NOT NULL,
  debito                 numeric(18, 2) NOT NULL,
  historico              text
);
CREATE INDEX movimentos_por_importacao ON movimentos USING brin (importacao_seq) WITH (pages_per_range = 32, autosummarize = on);
