-- The tax-document gateway (spec 3 part A, issue 15) shares the one company registry:
-- a company registered by `razao companies` or the gateway's admin API is the same row.
--
-- * `nome` is the company's razão social: the admin API reads and writes it as
--   `razao_social`, the import service and the CLI as `nome`; one name, never two
--   that could disagree.
-- * `codigo_dominio` (the accounting system's code, how /v1/process finds a company)
--   becomes optional: the gateway registers companies the accounting system may not
--   know yet. Where it is set it stays unique.
-- * `empresa_codigo` is the gateway's own key, generated (never chosen by a client),
--   unique and immutable. Existing rows get one here: a volatile default is evaluated
--   per row when the column is added.
-- * CNPJs may be alphanumeric since July 2026 (IN RFB 2.229/2024): 12 characters
--   0-9/A-Z, then two numeric check digits, stored upper-case without punctuation.
ALTER TABLE empresas
  ALTER COLUMN codigo_dominio DROP NOT NULL,
  DROP CONSTRAINT empresas_cnpj_check,
  ADD CONSTRAINT empresas_cnpj_check CHECK (cnpj ~ '^[0-9A-Z]{12}[0-9]{2}$'),
  ADD COLUMN empresa_codigo text NOT NULL
    DEFAULT ('EMP' || upper(substr(replace(gen_random_uuid()::text, '-', ''), 1, 10)))
    CONSTRAINT empresas_empresa_codigo_key UNIQUE
    CONSTRAINT empresas_empresa_codigo_check CHECK (empresa_codigo ~ '^[A-Z0-9]{4,32}$'),
  -- A branch (filial) points at its head office (matriz); a head office points nowhere.
  -- One level only, checked by the gateway's registry code (a CHECK cannot see other rows).
  ADD COLUMN matriz_id uuid REFERENCES empresas (id),
  -- A branch that inherits queries with the head office's certificate and its own CNPJ.
  ADD COLUMN herda_certificado_matriz boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT empresas_matriz_nao_ela_mesma CHECK (matriz_id <> id),
  ADD CONSTRAINT empresas_heranca_exige_matriz CHECK (NOT herda_certificado_matriz OR matriz_id IS NOT NULL);

CREATE INDEX empresas_por_matriz ON empresas (matriz_id) WHERE matriz_id IS NOT NULL;

-- One A1 certificate per company (uploading again replaces it). The PKCS#12 file and its
-- password are each sealed with AES-256-GCM under the gateway's master key: a random
-- 96-bit IV per value, the 128-bit tag, and additional data naming the company's id and
-- the field, so a sealed value copied onto another company (or into the other column)
-- does not open. Layout of a sealed value: version byte 1 || IV (12) || tag (16) || ciphertext.
-- `chave_id` identifies the master key that sealed the row (a hash of it, never the key)
-- so a wrong key is reported as such instead of as a corrupt row. The rest is what the
-- admin screen shows, in clear: nothing in it opens the certificate.
CREATE TABLE certificados (
  empresa_id     uuid PRIMARY KEY REFERENCES empresas (id),
  pfx_cifrado    bytea NOT NULL,
  senha_cifrada  bytea NOT NULL,
  chave_id       text NOT NULL CHECK (chave_id ~ '^[0-9a-f]{16}$'),
  subject        text NOT NULL,
  cnpj           text NOT NULL CHECK (cnpj ~ '^[0-9A-Z]{12}[0-9]{2}$'),
  valid_from     timestamptz NOT NULL,
  valid_until    timestamptz NOT NULL,
  -- SHA-256 of the certificate's DER, upper-case hex as certificate viewers print it.
  fingerprint    text NOT NULL CHECK (fingerprint ~ '^[0-9A-F]{64}$'),
  criado_em      timestamptz NOT NULL DEFAULT now(),
  atualizado_em  timestamptz NOT NULL DEFAULT now()
);

-- Operational API keys, stored only as the SHA-256 of the key (hex); the key itself is
-- shown once, when it is generated or rotated.
CREATE TABLE chaves_api (
  servico        text PRIMARY KEY CHECK (servico IN ('gateway')),
  sha256         text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  atualizado_em  timestamptz NOT NULL DEFAULT now()
);
