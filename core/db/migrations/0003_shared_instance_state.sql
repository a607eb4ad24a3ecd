-- State that must hold across gateway instances and restarts (issue 23).
--
-- The tax authority's waiting periods, per CNPJ and route ('nfe' NF-e distribution,
-- 'adn' national NFS-e distribution): after cStat 137, after ultNSU = maxNSU and after
-- 656, no NF-e query for that CNPJ may go out before `espera_ate`, or the authority
-- blocks the certificate for an hour. Every instance reads the row before an upstream
-- call and writes it in the statement that records the answer.
--
-- The same row is the cross-instance turn for that CNPJ: an instance takes it by setting
-- `em_curso_por` (a random token of its call) and `em_curso_ate` (when the turn lapses
-- if the instance dies mid-call: the call's deadline plus a margin), and gives it back
-- with the answer. A second instance waits for the turn instead of calling at once.
-- Times are the database's clock, so instances with skewed clocks agree.
CREATE TABLE esperas_consulta (
  servico        text NOT NULL CHECK (servico IN ('nfe', 'adn')),
  cnpj           text NOT NULL CHECK (cnpj ~ '^[0-9A-Z]{12}[0-9]{2}$'),
  espera_ate     timestamptz,
  motivo         text,
  cstat          text,
  em_curso_por   uuid,
  em_curso_ate   timestamptz,
  atualizado_em  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (servico, cnpj),
  CHECK ((espera_ate IS NULL) = (motivo IS NULL)),
  CHECK ((em_curso_por IS NULL) = (em_curso_ate IS NULL))
);
