-- Issue 31: no movement counted twice, and one active company per CNPJ.
--
-- A movement's identity is its source row's `id` (the ledger's own identifier of the row,
-- spec 1 section 1). `movimentos_ativos` holds the ids of every VALIDADO import as runs of
-- consecutive ids (a ledger exported from one system numbers its rows mostly in sequence,
-- so 500,000 rows are usually a handful of runs), one row per run, with the company. Its
-- exclusion constraint makes two active runs of one company that share an id impossible,
-- whichever instance writes them and however they race. A load adds its runs in the
-- transaction that turns it VALIDADO; a REIMPORTAR removes the runs of the imports it
-- replaces in that same transaction. SUBSTITUIDO and FALHOU imports hold no runs; their
-- movements stay in `movimentos`, untouched.
--
-- Why runs and not one key per movement: a unique index of 500,000 (company, id) keys cost
-- 1.4-2.5 s per 500,000-row load here, as much as the load itself; the runs of the same
-- load cost one sort of its ids. `movimentos` stays shaped for COPY (no key, BRIN only).
-- btree_gist gives the constraint its `=` on the company; it is a trusted extension
-- (PostgreSQL 13+), so the database's owner may create it without a superuser.
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE movimentos_ativos (
  empresa_id     uuid      NOT NULL,
  -- [first id, last id + 1): the ids of one run, all active in the same import.
  ids            int8range NOT NULL CHECK (NOT isempty(ids) AND lower_inc(ids) AND NOT upper_inc(ids)),
  importacao_seq bigint    NOT NULL,
  CONSTRAINT movimentos_ativos_um_por_id EXCLUDE USING gist (empresa_id WITH =, ids WITH &&)
);
CREATE INDEX movimentos_ativos_por_importacao ON movimentos_ativos (importacao_seq);

-- Existing active imports get their runs. A database that already holds the same movement
-- in two active imports (possible before this migration) keeps it in the earliest import;
-- the later import stays VALIDADO with its movements, and a NOTICE says how many movements
-- that is, so the operator can replace the import that repeats them.
INSERT INTO movimentos_ativos (empresa_id, ids, importacao_seq)
SELECT empresa_id, int8range(min(id), max(id) + 1), seq
  FROM (SELECT empresa_id, seq, id, id - row_number() OVER (PARTITION BY empresa_id, seq ORDER BY id) AS run
          FROM (SELECT DISTINCT ON (i.empresa_id, m.id) i.empresa_id, i.seq, m.id
                  FROM importacoes i JOIN movimentos m ON m.importacao_seq = i.seq
                 WHERE i.status = 'VALIDADO' AND m.id IS NOT NULL
                 ORDER BY i.empresa_id, m.id, i.seq) earliest) numbered
 GROUP BY empresa_id, seq, run;

DO $$
DECLARE repeated bigint;
BEGIN
  SELECT count(*) - (SELECT coalesce(sum(upper(ids) - lower(ids)), 0) FROM movimentos_ativos) INTO repeated
    FROM importacoes i JOIN movimentos m ON m.importacao_seq = i.seq
   WHERE i.status = 'VALIDADO' AND m.id IS NOT NULL;
  IF repeated > 0 THEN
    RAISE NOTICE 'razao: % movements were already active in more than one import of the same company; the earliest import keeps them. Find the imports with docs/import.md, "Movements imported twice before".', repeated;
  END IF;
END $$;

-- One active company per CNPJ (a branch has a CNPJ of its own, so head office and branches
-- never collide). An inactive company may share the CNPJ of an active one: that is how a
-- company re-registered under a new code keeps its history.
DO $$
DECLARE clash text;
BEGIN
  SELECT string_agg(format('CNPJ %s: %s', cnpj, codes), '; ') INTO clash
    FROM (SELECT cnpj, string_agg(coalesce(codigo_dominio, empresa_codigo), ', ' ORDER BY criado_em) AS codes
            FROM empresas WHERE ativo AND cnpj IS NOT NULL
           GROUP BY cnpj HAVING count(*) > 1) d;
  IF clash IS NOT NULL THEN
    RAISE EXCEPTION 'Several active companies share a CNPJ (%). Deactivate all but one of each (razao companies deactivate --codigo-dominio CODE) and start again.', clash;
  END IF;
END $$;

CREATE UNIQUE INDEX empresas_um_cnpj_ativo ON empresas (cnpj) WHERE ativo AND cnpj IS NOT NULL;
