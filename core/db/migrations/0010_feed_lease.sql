-- Issue 35, item 1: what the feed's scheduler needs beside the state of 0007.
--
-- The lease: the instance polling a company's feed writes its token and when its lease
-- lapses; another instance takes the row only once the lease has lapsed (claimed with
-- FOR UPDATE SKIP LOCKED). The cursor is also written compare-and-set (ult_nsu as it was
-- read), so an instance whose lease lapsed mid-poll can neither move it back nor store
-- twice.
ALTER TABLE feed_empresas
  ADD COLUMN lease_por uuid,
  ADD COLUMN lease_ate timestamptz,
  ADD CONSTRAINT feed_empresas_lease CHECK ((lease_por IS NULL) = (lease_ate IS NULL));

-- The claim looks for active feeds by due time.
CREATE INDEX feed_empresas_devidas ON feed_empresas (proxima_consulta) WHERE ativo;

-- A gap asked for in vain too often is given up: kept (the admin sees it), never asked again.
ALTER TABLE feed_lacunas
  ADD COLUMN desistida_em timestamptz,
  ADD COLUMN ultimo_erro text;

-- Point lookups (NF-e consNSU and consChNFe, ADN GET /DFe/{NSU}?lote=false), one row each,
-- per service and CNPJ: the authority allows 20 an hour per CNPJ for the NF-e, counted
-- across every instance. Rows older than an hour are deleted when the next one is taken.
CREATE TABLE consultas_pontuais (
  servico   text NOT NULL CHECK (servico IN ('nfe', 'adn')),
  cnpj      text NOT NULL,
  feita_em  timestamptz NOT NULL DEFAULT now(),
  motivo    text NOT NULL CHECK (motivo IN ('lacuna', 'chave'))
);
CREATE INDEX consultas_pontuais_por_cnpj ON consultas_pontuais (servico, cnpj, feita_em);
