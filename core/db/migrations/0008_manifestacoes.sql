-- Issue 35, item 3: the manifestação do destinatário events the gateway sends to the Ambiente
-- Nacional (NFeRecepcaoEvento4), one row per access key, event code and sequence number: the
-- triple the event's Id is made of ("ID" + tpEvento + chNFe + nSeqEvento), which is also what
-- the authority refuses as a duplicate (cStat 573). A retry after a failed or unknown outcome
-- reuses the row (and the Id), so a repeat can only ever be answered 573, never register twice.
--
-- status: enviando (sent, no answer yet, or the process died meanwhile), registrado (135, 136
-- or 573: done), rejeitado (the authority refused it: c_stat, x_motivo), falhou (no usable
-- answer: transport, timeout, an answer outside its schema; sending again is safe).
CREATE TABLE manifestacoes (
  id bigserial PRIMARY KEY,
  chave text NOT NULL CHECK (chave ~ '^[0-9]{44}$'),
  empresa_id uuid NOT NULL REFERENCES empresas (id),
  -- The event's author (CNPJ element): the recipient company's own CNPJ.
  cnpj text NOT NULL CHECK (cnpj ~ '^[0-9A-Z]{12}[0-9]{2}$'),
  tp_evento text NOT NULL CHECK (tp_evento IN ('210200', '210210', '210220', '210240')),
  n_seq_evento smallint NOT NULL CHECK (n_seq_evento BETWEEN 1 AND 20),
  status text NOT NULL CHECK (status IN ('enviando', 'registrado', 'rejeitado', 'falhou')),
  -- Sent by the automatic Ciência of the feed rather than asked for.
  automatica boolean NOT NULL DEFAULT false,
  justificativa text,
  c_stat text CHECK (c_stat ~ '^[0-9]{3}$'),
  x_motivo text,
  n_prot text CHECK (n_prot ~ '^[0-9]{15}$'),
  -- As the authority wrote it, with its offset.
  dh_reg_evento text,
  -- Why the last attempt failed, when it did (our sentence, never a secret).
  erro text,
  -- The signed evento of the last attempt, and procEventoNFe (evento + retEvento) once registered.
  evento_xml text NOT NULL,
  proc_evento_xml text,
  criado_em timestamptz NOT NULL DEFAULT now(),
  enviado_em timestamptz NOT NULL DEFAULT now(),
  respondido_em timestamptz,
  registrado_em timestamptz,
  UNIQUE (chave, tp_evento, n_seq_evento)
);

CREATE INDEX manifestacoes_empresa ON manifestacoes (empresa_id, criado_em);
