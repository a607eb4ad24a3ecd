-- Issue 35, item 1: the managed feed. One row per company and distribution ('nfe' NF-e
-- distribution at the Ambiente Nacional, 'adn' national NFS-e distribution) once the feed
-- has been configured for it; a company without a row has its feed off.
--
-- The row is the feed's state, shared by every instance: the NSU cursor, the authority's
-- last maxNSU, when the next call may go out, the last answer and the last error. Waits
-- the authority imposes (137, ultNSU = maxNSU, 656) stay in `esperas_consulta` (0003),
-- which the one-off query routes obey too; `proxima_consulta` is the feed's own pace.
CREATE TABLE feed_empresas (
  empresa_id          uuid NOT NULL REFERENCES empresas (id) ON DELETE CASCADE,
  servico             text NOT NULL CHECK (servico IN ('nfe', 'adn')),
  ativo               boolean NOT NULL DEFAULT false,
  -- Item 3: send Ciência da Operação for each new resNFe summary (NF-e only).
  ciencia_automatica  boolean NOT NULL DEFAULT false,
  -- Every NSU up to here has been read and its documents stored, except the gaps listed
  -- in feed_lacunas.
  ult_nsu             bigint NOT NULL DEFAULT 0 CHECK (ult_nsu >= 0),
  max_nsu             bigint CHECK (max_nsu >= 0),
  proxima_consulta    timestamptz,
  ultima_consulta     timestamptz,
  ultimo_cstat        text,
  ultimo_erro_codigo  text,
  ultimo_erro         text,
  ultimo_erro_em      timestamptz,
  criado_em           timestamptz NOT NULL DEFAULT now(),
  atualizado_em       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (empresa_id, servico),
  CHECK (servico = 'nfe' OR NOT ciencia_automatica),
  CHECK ((ultimo_erro IS NULL) = (ultimo_erro_em IS NULL))
);

-- NSUs below the cursor the authority skipped in an answer, to be asked for one by one
-- (consNSU) until they arrive or are given up.
CREATE TABLE feed_lacunas (
  empresa_id          uuid NOT NULL,
  servico             text NOT NULL,
  nsu                 bigint NOT NULL CHECK (nsu > 0),
  detectada_em        timestamptz NOT NULL DEFAULT now(),
  tentativas          integer NOT NULL DEFAULT 0,
  ultima_tentativa    timestamptz,
  PRIMARY KEY (empresa_id, servico, nsu),
  FOREIGN KEY (empresa_id, servico) REFERENCES feed_empresas (empresa_id, servico) ON DELETE CASCADE
);
