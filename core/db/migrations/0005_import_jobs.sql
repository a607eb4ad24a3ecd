-- Issue 31, items 3 and 6: imports as jobs (POST /v1/imports), visible, cancellable and
-- followed from any instance, and the rejected cells of a refused load kept as a file.
--
-- Statuses: RECEBIDO (a job whose upload is stored on one instance, waiting for a worker
-- thread there) and CANCELADO (stopped on request; its movements were rolled back, it holds
-- no movement key) join PROCESSANDO, VALIDADO, SUBSTITUIDO and FALHOU. A job refused for its
-- content (unbalanced, invalid cells, overlap) keeps its row as FALHOU with `erro_codigo`;
-- /v1/process still deletes the row of a refused request, as the spec has it.
ALTER TABLE importacoes
  DROP CONSTRAINT importacoes_status_check,
  ADD CONSTRAINT importacoes_status_check CHECK (status IN ('RECEBIDO', 'PROCESSANDO', 'VALIDADO', 'SUBSTITUIDO', 'FALHOU', 'CANCELADO')),
  -- Who started it: /v1/process, /v1/imports or `razao import`. Only the last two can be
  -- cancelled (a /v1/process load ends with its request).
  ADD COLUMN origem text NOT NULL DEFAULT 'process' CHECK (origem IN ('process', 'imports', 'cli')),
  -- The phase of a running load; once it ended, the phase it ended in. A load reads and copies
  -- in one pass, so `carregando` covers both; `lendo` is the time before the first rows go
  -- to the database (opening the workbook, its shared strings), `validando` the checks of the
  -- file and of what was stored, `finalizando` the status change and the commit.
  ADD COLUMN fase text CHECK (fase IN ('recebido', 'lendo', 'carregando', 'validando', 'finalizando')),
  ADD COLUMN linhas_lidas integer NOT NULL DEFAULT 0,
  ADD COLUMN linhas_carregadas integer NOT NULL DEFAULT 0,
  -- Of the sheet's XML as the reader inflates it (the whole file for XLS), not of the upload.
  ADD COLUMN bytes_lidos bigint NOT NULL DEFAULT 0,
  ADD COLUMN bytes_total bigint,
  -- When a worker began the load (RECEBIDO -> PROCESSANDO); rates count from here.
  ADD COLUMN iniciado_em timestamptz,
  -- Set by DELETE /v1/imports/{id} or `razao imports cancel` on any instance; the instance
  -- running the load reads it with each progress write and stops the load.
  ADD COLUMN cancelamento_pedido_em timestamptz,
  -- The client's Idempotency-Key (draft-ietf-httpapi-idempotency-key-header), unique while
  -- set; a key older than its lifetime is cleared when it is used again (import-jobs.ts).
  ADD COLUMN idempotency_key text CHECK (length(idempotency_key) BETWEEN 1 AND 255),
  -- The sheet a job was asked to read (the `sheet` field: a name, or a position as digits); null, the first visible one.
  ADD COLUMN planilha text CHECK (length(planilha) BETWEEN 1 AND 200),
  -- The load's result once VALIDADO (core shape: the API answers it as ProcessResponse).
  ADD COLUMN resultado jsonb,
  -- Why it ended FALHOU or CANCELADO: the error catalog's code (erro keeps the sentence)
  -- and the error's details (the overlap report of IMPORT_OVERLAP).
  ADD COLUMN erro_codigo text,
  ADD COLUMN erro_detalhes jsonb,
  -- The instance that holds a RECEBIDO job: the key of the session advisory lock that
  -- instance holds while it lives (core/importer/instance-lock.ts). Recovery marks a RECEBIDO
  -- row whose instance lock is free, as it marks a PROCESSANDO row whose load lock is free.
  ADD COLUMN instancia integer,
  -- All the problem cells a refused load found; importacao_problemas lists the first ones.
  ADD COLUMN problemas_total integer;

CREATE UNIQUE INDEX importacoes_idempotency_key ON importacoes (idempotency_key) WHERE idempotency_key IS NOT NULL;
-- GET /v1/imports: newest first, for one company or all.
CREATE INDEX importacoes_por_empresa ON importacoes (empresa_id, criado_em DESC);
CREATE INDEX importacoes_por_data ON importacoes (criado_em DESC);
-- Recovery looks at running rows only.
DROP INDEX importacoes_em_processamento;
CREATE INDEX importacoes_em_andamento ON importacoes (status) WHERE status IN ('RECEBIDO', 'PROCESSANDO');

-- The rejected cells of a load refused for invalid cells, for GET /v1/imports/{id}/problems.csv:
-- at most the first 100,000 (importacoes.problemas_total counts them all). `valor` is the
-- cell as the analysis shows it (a formula as =..., a text over 200 characters shortened).
CREATE TABLE importacao_problemas (
  importacao_id uuid    NOT NULL REFERENCES importacoes (id) ON DELETE CASCADE,
  ordem         integer NOT NULL,
  linha         integer NOT NULL,
  coluna        text    NOT NULL,
  valor         text    NOT NULL,
  problema      text    NOT NULL,
  PRIMARY KEY (importacao_id, ordem)
);
