-- Issue 35, item 4: notifications.
--
-- `eventos_documentos` is the outbox: storeDocuments writes a row in the transaction that
-- keeps the document, so an event exists exactly when its document does, even if the
-- process dies right after the commit. A dispatcher (any instance) turns each row into one
-- delivery per matching endpoint and marks it dispatched; the admin screen's event stream
-- reads the same rows. Rows are kept a few days (GATEWAY_WEBHOOK_KEEP_DAYS), then pruned.
CREATE TABLE eventos_documentos (
  id              bigserial PRIMARY KEY,
  -- What receivers deduplicate on: the same id on every attempt and every endpoint.
  evento_id       uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  tipo            text NOT NULL CHECK (tipo IN ('documento.novo', 'documento.cancelado')),
  documento_id    bigint NOT NULL,
  -- The company whose distribution brought the document (documento.novo) or whose note
  -- was cancelled: the CNPJ the feed asked for.
  cnpj            text NOT NULL,
  -- The document was new to the gateway (not only to this company): global endpoints
  -- receive only these, so each document reaches them once.
  primeiro        boolean NOT NULL,
  criado_em       timestamptz NOT NULL DEFAULT now(),
  despachado_em   timestamptz
);
CREATE INDEX eventos_documentos_pendentes ON eventos_documentos (id) WHERE despachado_em IS NULL;
CREATE INDEX eventos_documentos_criado ON eventos_documentos (criado_em);

-- Where events go: one company's (empresa_id) or every company's (NULL: global). The
-- secret signs each body (HMAC-SHA256); it is kept sealed with the gateway's master key
-- (AES-256-GCM, as the certificates) and never answered again after its creation.
CREATE TABLE webhook_endpoints (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  url             text NOT NULL CHECK (url ~ '^https?://' AND length(url) <= 2000),
  empresa_id      uuid REFERENCES empresas (id) ON DELETE CASCADE,
  segredo_cifrado bytea NOT NULL,
  -- The last four characters, to tell secrets apart on the screen.
  segredo_dica    text NOT NULL,
  chave_id        text NOT NULL,
  ativo           boolean NOT NULL DEFAULT true,
  criado_em       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_empresa ON webhook_endpoints (empresa_id) WHERE ativo;

-- The delivery log: one row per event and endpoint, updated at each attempt. The queue
-- itself (when the next attempt runs, which instance holds it) is pg-boss's job table.
CREATE TABLE webhook_entregas (
  id              bigserial PRIMARY KEY,
  endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  evento_id       uuid NOT NULL,
  tipo            text NOT NULL,
  documento_id    bigint NOT NULL,
  cnpj            text NOT NULL,
  status          text NOT NULL DEFAULT 'pendente' CHECK (status IN ('pendente', 'entregue', 'falhou')),
  tentativas      integer NOT NULL DEFAULT 0,
  codigo_resposta integer,
  ultimo_erro     text,
  criado_em       timestamptz NOT NULL DEFAULT now(),
  ultima_tentativa_em timestamptz,
  entregue_em     timestamptz,
  UNIQUE (endpoint_id, evento_id)
);
CREATE INDEX webhook_entregas_recentes ON webhook_entregas (endpoint_id, id DESC);
