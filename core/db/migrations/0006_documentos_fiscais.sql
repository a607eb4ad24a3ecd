-- Issue 35, item 2: the documents the gateway receives from the NF-e distribution
-- (docZip) and the NFS-e national distribution (ADN), decoded and kept once each.
--
-- Identity: the access key, the schema the authority named (NF-e: the docZip's schema
-- attribute without its version, e.g. resNFe; ADN: NFSE or EVENTO) and, for events, the
-- event code and sequence (two events on one key share key and schema). The same document
-- received again (another company of the firm, a repeated NSU) is not stored twice; the
-- company that received it is added to `cnpjs`.
CREATE TABLE documentos_fiscais (
  id bigserial PRIMARY KEY,
  chave text NOT NULL CHECK (chave ~ '^[0-9]{44}$' OR chave ~ '^[0-9]{50}$'),
  esquema text NOT NULL CHECK (length(esquema) BETWEEN 1 AND 40),
  -- '' for a document; tpEvento || '-' || nSeqEvento for an event.
  evento text NOT NULL DEFAULT '',
  tipo text NOT NULL CHECK (tipo IN ('resNFe', 'procNFe', 'resEvento', 'procEventoNFe', 'NFS-e', 'eventoNFS-e')),
  -- The CNPJs whose distribution brought it (the client companies it concerns).
  cnpjs text[] NOT NULL,
  nsu text,
  emitente_cnpj text,
  emitente_nome text,
  destinatario_doc text,
  destinatario_nome text,
  -- As written in the document, with its offset; the date part (the date printed on the
  -- DANFE, at the issuer) is what desde/ate filter on.
  data_emissao timestamptz,
  data_emissao_local date,
  -- Exact: the XML's decimal text, two places.
  valor_total numeric(15, 2),
  situacao text NOT NULL CHECK (situacao IN ('autorizada', 'denegada', 'cancelada', 'registrado')),
  -- An event that cancels `chave` (NF-e 110111/110112 registered with 135/155; NFS-e 101101, 105102, 105104, 305101).
  cancela boolean NOT NULL DEFAULT false,
  xml text NOT NULL,
  recebido_em timestamptz NOT NULL DEFAULT now(),
  UNIQUE (chave, esquema, evento)
);

-- GET /v1/documents: newest received first (keyset on id), by company, by issue date.
CREATE INDEX documentos_fiscais_cnpjs ON documentos_fiscais USING gin (cnpjs);
CREATE INDEX documentos_fiscais_emissao ON documentos_fiscais (data_emissao_local, id);
CREATE INDEX documentos_fiscais_cancela ON documentos_fiscais (chave) WHERE cancela;
