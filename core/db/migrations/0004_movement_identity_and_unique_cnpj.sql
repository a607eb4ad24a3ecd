-- Issue 31: no movement counted twice, and one active company per CNPJ.
--
-- A movement's identity is its source row's `id` (the ledger's own identifier of the row,
-- spec 1 section 1). `movimentos_ativos` holds one row per movement of every VALIDADO
-- import, keyed by company and that id: its primary key is what makes two active imports
-- of the same movement impossible, whichever instance writes them and however they race.
-- A load adds its keys in the transaction that turns it VALIDADO; a REIMPORTAR removes the
-- keys of the imports it replaces in that same transaction. SUBSTITUIDO and FALHOU imports
-- have no keys here; their movements stay in `movimentos`, untouched.
--
-- `movimentos` itself stays shaped for COPY (no key, no index but BRIN): the keys live in
-- this narrow table, which only the key step of a load writes (core/importer/process-ledger.ts).
CREATE TABLE movimentos_ativos (
  empresa_id     uuid   NOT NULL,
  id             bigint NOT NULL,
  importacao_seq bigint NOT NULL,
  PRIMARY KEY (empresa_id, id)
);

-- Existing active imports get their keys. A database that already holds the same movement
-- in two active imports (possible before this migration) keeps the earliest import's key;
-- the later import stays VALIDADO with its movements, and a NOTICE names how many such
-- movements there are so the operator can replace the import that repeats them.
INSERT INTO movimentos_ativos (empresa_id, id, importacao_seq)
SELECT DISTINCT ON (i.empresa_id, m.id) i.empresa_id, m.id, i.seq
  FROM importacoes i
  JOIN movimentos m ON m.importacao_seq = i.seq
 WHERE i.status = 'VALIDADO' AND m.id IS NOT NULL
 ORDER BY i.empresa_id, m.id, i.seq;

DO $$
DECLARE repeated bigint;
BEGIN
  SELECT count(*) - (SELECT count(*) FROM movimentos_ativos) INTO repeated
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
