/**
 * JSON schemas of the gateway's routes (spec 3 §2 A, §4 A, and the admin API of
 * wire.ts): Fastify serializes the answers with them and /openapi.json is written from
 * them (server/openapi.ts). Bodies are read by wire.ts and query-wire.ts field by field
 * (a 400 names the field); `jsonBody` only describes them. Every failure is
 * `{ "detail": "...", "code": "...", "requestId": "..." }`; a refused NF-e query adds the SEFAZ answer's fields.
 */
import { answers, bool, failuresOf, int, list, openObject, orNull, record, str } from '../openapi.js'
import type { JsonSchema } from '../openapi.js'

const detail = record({
  detail: str('What went wrong, for a person.'),
  code: str('The stable code of the error, for programs to branch on (e.g. UNAUTHORIZED, GATEWAY_CERT_EXPIRED).'),
  requestId: str('The request id (also in the X-Request-Id header), to quote when reporting a problem.')
})
const when = {
  400: 'A field is missing or invalid (the detail names it), or the body is not a JSON object.',
  401: 'The credential is missing or invalid.',
  404: 'No such company (or it is inactive).',
  409: 'Another active company already has this CNPJ; the detail names it (one active company per CNPJ).',
  413: 'The body is larger than this route accepts.',
  422: 'Refused: a codigo_dominio already taken, an unusable certificate or none to remove, or a query the tax service refused.',
  500: 'Internal error: quote the request id the detail names.',
  503: 'The database (or the store\'s master key) is unavailable; try again shortly.'
} as const
const failures = failuresOf(detail, when)

const admin = [{ adminToken: [] }]
const operational = [{ apiKey: [] }]
// Examples are the README's company (as `razao companies add` registers it in step 1), so
// /docs' "Try it out" sends values the gateway accepts. An empresa_codigo is made at
// registration: the example shows its shape; GET /admin/empresas lists the real ones.
const EXAMPLE_CODE = 'EMP00A1B2C3D4'
const companyCodeField = (description: string): JsonSchema => ({ ...str(description), examples: [EXAMPLE_CODE] })
const codeParam = { type: 'object', required: ['empresa_codigo'], properties: { empresa_codigo: companyCodeField('The company\'s code in the registry (`empresa_codigo`, as GET /admin/empresas lists it).') } }

const certificateStatus = { type: 'string', enum: ['VALIDO', 'VENCE_EM_BREVE', 'VENCIDO'] }
const certificateProperties = {
  subject: str(),
  cnpj: orNull(str()),
  valid_from: str(),
  valid_until: str(),
  days_to_expiry: int(),
  fingerprint: str('SHA-256 of the certificate, hex.'),
  status: certificateStatus
}

const company = record({
  empresa_codigo: str(),
  razao_social: str(),
  cnpj: orNull(str()),
  codigo_dominio: orNull(str()),
  matriz_empresa_codigo: orNull(str()),
  herda_certificado_matriz: bool(),
  ativo: bool(),
  criado_em: str(),
  atualizado_em: str(),
  certificado_status: { type: 'string', enum: ['VALIDO', 'VENCE_EM_BREVE', 'VENCIDO', 'AUSENTE'] },
  certificado: orNull(record({ origem: { type: 'string', enum: ['PROPRIO', 'MATRIZ'], description: 'MATRIZ: the head office\'s, inherited.' }, ...certificateProperties }))
})
const storedCertificate = record({ empresa_codigo: str(), ...certificateProperties })
const listedCertificate = record({ empresa_codigo: str(), razao_social: str(), ...certificateProperties })

const companyFields = {
  razao_social: { ...str(), examples: ['Padaria Pão Quente Ltda'] },
  cnpj: { ...str('14 characters; punctuation allowed.'), examples: ['11.222.333/0001-81'] },
  codigo_dominio: { ...orNull(str()), examples: ['4521'] },
  matriz_empresa_codigo: { ...orNull(str('The head office, for a branch; null for a head office.')), examples: [null] },
  herda_certificado_matriz: { ...bool('A branch queries with its head office\'s certificate.'), examples: [false] }
}

export const healthSchema = {
  summary: 'Availability and the database',
  tags: ['service'],
  response: answers(record({
    status: { type: 'string', enum: ['UP', 'DOWN'] },
    service: str(),
    environment: str(),
    ambiente: { type: 'string', enum: ['producao', 'homologacao'], description: 'GATEWAY_TP_AMB.' },
    database: { type: 'string', enum: ['UP', 'DOWN'] },
    timestamp: str()
  }), { 200: 'The gateway and its database are up.', 503: 'The database cannot be reached.' })
}

export const listCompaniesSchema = {
  summary: 'Every registered company', tags: ['admin'], security: admin,
  response: { 200: list(company, 'The companies.'), ...failures(401, 500, 503) }
}

export const createCompanySchema = {
  summary: 'Register a company', tags: ['admin'], security: admin,
  jsonBody: { type: 'object', required: ['razao_social', 'cnpj'], additionalProperties: false, properties: companyFields },
  response: { 201: { ...company, description: 'The company, registered.' }, ...failures(400, 401, 404, 409, 413, 422, 500, 503) }
}

export const getCompanySchema = {
  summary: 'One company', tags: ['admin'], security: admin, params: codeParam,
  response: { 200: { ...company, description: 'The company.' }, ...failures(401, 404, 500, 503) }
}

export const updateCompanySchema = {
  summary: 'Change fields of a company', tags: ['admin'], security: admin, params: codeParam,
  jsonBody: { type: 'object', minProperties: 1, additionalProperties: false, properties: { ...companyFields, ativo: { ...bool(), examples: [true] } } },
  response: { 200: { ...company, description: 'The company, changed.' }, ...failures(400, 401, 404, 409, 413, 422, 500, 503) }
}

export const deactivateCompanySchema = {
  summary: 'Deactivate a company (it stays registered)', tags: ['admin'], security: admin, params: codeParam,
  response: { 200: { ...company, description: 'The company, inactive.' }, ...failures(401, 404, 500, 503) }
}

const feedServiceParam = {
  type: 'object', required: ['empresa_codigo', 'servico'],
  properties: {
    empresa_codigo: companyCodeField('The company\'s code in the registry (`empresa_codigo`, as GET /admin/empresas lists it).'),
    servico: { ...str('nfe: NF-e distribution (Ambiente Nacional); adn: national NFS-e distribution.'), examples: ['nfe'] }
  }
}
const counts = { type: 'object', additionalProperties: int(), description: 'Documents kept for the company\'s CNPJ.' }
const feed = record({
  empresa_codigo: str(),
  cnpj: orNull(str()),
  razao_social: str(),
  servico: { type: 'string', enum: ['nfe', 'adn'] },
  ativo: bool('The scheduler polls this feed.'),
  ciencia_automatica: bool('NF-e only: Ciência da Operação is sent for each new summary.'),
  ult_nsu: str('The cursor: every NSU up to this one has been read (gaps excepted). Text: 15 digits.'),
  max_nsu: orNull(str('The authority\'s maxNSU at the last answer.')),
  proxima_consulta: orNull(str('Not before this time (UTC): the feed\'s pace or the authority\'s wait, whichever is later.')),
  ultima_consulta: orNull(str()),
  ultimo_cstat: orNull(str()),
  ultimo_erro: orNull(record({ codigo: orNull(str()), mensagem: str(), em: str() })),
  lacunas: int('NSUs the authority skipped, still to be fetched one by one.'),
  documentos: record({ por_tipo: counts, por_situacao: counts }),
  atualizado_em: str()
})

export const listFeedsSchema = {
  summary: 'The managed feeds: per company and service, on or off, cursor, next call, last error, documents kept',
  tags: ['admin'], security: admin,
  response: { 200: list(feed, 'Every configured feed; a company without one has its feeds off.'), ...failures(401, 500, 503) }
}

export const setFeedSchema = {
  summary: 'Turn a company\'s feed on or off',
  description: 'Turning a feed on makes it due at once; turning it off keeps its cursor.',
  tags: ['admin'], security: admin, params: feedServiceParam,
  jsonBody: {
    type: 'object', minProperties: 1, additionalProperties: false,
    properties: { ativo: { ...bool(), examples: [true] }, ciencia_automatica: { ...bool('NF-e only.'), examples: [false] } }
  },
  response: { 200: { ...feed, description: 'The feed, changed.' }, ...failures(400, 401, 404, 413, 500, 503) }
}

export const listCertificatesSchema = {
  summary: 'Every stored certificate, with its expiry', tags: ['admin'], security: admin,
  response: { 200: list(listedCertificate, 'The certificates.'), ...failures(401, 500, 503) }
}

export const storeCertificateSchema = {
  summary: 'Store a company\'s A1 certificate (PKCS#12), encrypted with the master key', tags: ['admin'], security: admin,
  jsonBody: {
    type: 'object',
    required: ['empresa_codigo', 'pfx_base64', 'senha'],
    additionalProperties: false,
    properties: {
      empresa_codigo: companyCodeField('The company the certificate is for.'),
      // No example file: a certificate is the company's own (`base64 -w0 empresa.pfx`).
      pfx_base64: { ...str('The .pfx file in Base64 (`base64 -w0 empresa.pfx`), at most 256 KiB.'), examples: [''] },
      senha: { ...str('The file\'s password; never stored in clear, never answered.'), examples: [''] }
    }
  },
  response: { 201: { ...storedCertificate, description: 'The certificate, stored.' }, ...failures(400, 401, 404, 413, 422, 500, 503) }
}

export const removeCertificateSchema = {
  summary: 'Remove a company\'s certificate', tags: ['admin'], security: admin, params: codeParam,
  response: { 204: { type: 'null', description: 'Removed.' }, ...failures(401, 404, 422, 500, 503) }
}

export const rotateKeySchema = {
  summary: 'Make a new operational API key; the old one stops working at once', tags: ['admin'], security: admin,
  response: { 201: record({ api_key: str('Shown this once; only its hash is kept.') }, 'The new key.'), ...failures(401, 500, 503) }
}

const refusedQueryBody: JsonSchema = {
    type: 'object',
    required: ['detail', 'code', 'requestId'],
    properties: {
      ...(detail.properties as Record<string, unknown>),
      cStat: str('NF-e only: the SEFAZ status code.'),
      xMotivo: str('NF-e only.'),
      ultNSU: str('NF-e only.'),
      maxNSU: str('NF-e only.'),
      code: str('The stable code of the error; for a distributed document refused with 503 (nothing of the answer kept): DOCZIP_BASE64, DOCZIP_TOO_LARGE, DOCZIP_BOMB, DOCZIP_NOT_GZIP, DOCZIP_DTD or DOCZIP_XML.'),
      nsu: orNull(str('503, a document refused: its NSU (null when the authority gave none).'))
    }
}
const queryFailures = {
  ...failures(400, 401, 404, 413, 500),
  ...answers(refusedQueryBody, {
    422: 'The certificate cannot be used for this CNPJ, the tax service refused the query (NF-e: its cStat and xMotivo), or (NF-e) the CNPJ\'s managed feed is on (GATEWAY_FEED_ACTIVE: read GET /v1/documents instead).',
    429: 'This CNPJ must wait (the tax service asked for a pause, or is limiting the rate); see Retry-After.',
    503: 'The tax service is unavailable, paused or slow, or sent a document outside the gateway\'s bounds (code, nsu), or the database is unavailable; try again later.'
  })
}

export const nfeSchema = {
  summary: 'NF-e distribution (NFeDistribuicaoDFe, distNSU) for a company, from ult_nsu',
  tags: ['queries'], security: operational,
  jsonBody: {
    type: 'object',
    required: ['empresa_codigo', 'cnpj_consulta', 'ult_nsu'],
    properties: { empresa_codigo: companyCodeField('The company whose certificate queries.'), cnpj_consulta: { ...str('14 characters, of the certificate\'s CNPJ root.'), examples: ['11222333000181'] }, ult_nsu: { ...str('15 digits, zero-padded; 000000000000000 to start.'), examples: ['000000000000000'] } }
  },
  response: {
    200: record({
      success: bool(),
      cStat: str(),
      xMotivo: str(),
      ultNSU: str(),
      maxNSU: str(),
      documentos: list(record({ docZip: str('The document, gzip then Base64, as SEFAZ sent it.'), nsu: orNull(str()), schema: str() }))
    }, 'SEFAZ answered (cStat 137: nothing new; 138: documents).'),
    ...queryFailures
  }
}

export const adnSchema = {
  summary: 'NFS-e distribution (ADN) for a company, from nsu',
  tags: ['queries'], security: operational,
  jsonBody: {
    type: 'object',
    required: ['empresa_codigo', 'cnpj_consulta', 'nsu'],
    properties: { empresa_codigo: companyCodeField('The company whose certificate queries.'), cnpj_consulta: { ...str('14 characters, of the certificate\'s CNPJ root.'), examples: ['11222333000181'] }, nsu: { ...int('0 or more.'), examples: [0] } }
  },
  response: {
    200: record({
      sucesso: bool(),
      empresa_codigo: str(),
      nsu: int(),
      data: record({ documentos: list(openObject('One LoteDFe item as the ADN sent it.')) })
    }, 'The ADN answered.'),
    ...queryFailures
  }
}

// Issue 35, item 2: the documents kept (document-routes.ts).
const documentFields = {
  id: str('Its row number; the list pages by it.'),
  chave: str('The access key: 44 digits (NF-e) or 50 (NFS-e).'),
  tipo: { type: 'string', enum: ['resNFe', 'procNFe', 'resEvento', 'procEventoNFe', 'NFS-e', 'eventoNFS-e'] },
  esquema: str('The schema the authority named: the docZip schema without its version (resNFe, procNFe, resEvento, procEventoNFe) or the ADN TipoDocumento (NFSE, EVENTO).'),
  evento: str('Events: tpEvento-nSeqEvento (e.g. 110111-1); documents: empty.'),
  cnpjs: list(str(), 'The companies whose distribution brought it.'),
  nsu: orNull(str()),
  emitente_cnpj: orNull(str('The issuer (an event: its author).')),
  emitente_nome: orNull(str()),
  destinatario_doc: orNull(str('The recipient\'s CNPJ, CPF or foreign id (NFS-e: the tomador); a summary (resNFe) has none.')),
  destinatario_nome: orNull(str()),
  data_emissao: orNull(str('Issue date-time (an event: its date-time), UTC.')),
  data_emissao_local: orNull(str('The issue date as written in the document (YYYY-MM-DD); desde/ate filter on it.')),
  valor_total: orNull(str('Exact decimal text, two places (vNF; NFS-e: vLiq).')),
  situacao: { type: 'string', enum: ['autorizada', 'denegada', 'cancelada', 'registrado'], description: 'autorizada, denegada or cancelada for a document (cancelada once a cancellation event is kept, whichever arrived first); registrado for an event.' },
  cancela: bool('An event that cancels its key.'),
  recebido_em: str('When the gateway first kept it, UTC.')
}
const documentRecord = record(documentFields)
const documentFailures = {
  ...failures(400, 401, 500),
  ...answers(detail, { 404: 'No document is kept under this key.', 503: 'The gateway database is unavailable; try again shortly.' })
}
const chaveParam = { type: 'object', required: ['chave'], properties: { chave: { ...str('44 digits (NF-e) or 50 (NFS-e).'), examples: ['35261199999090910270550010000000011000000100'] } } }

export const documentListSchema = {
  summary: 'The documents kept, newest received first (keyset paging)',
  tags: ['documents'], security: operational,
  querystring: {
    type: 'object',
    properties: {
      cnpj: { description: 'Only those this company received (its distribution brought them).', examples: [''] },
      desde: { description: 'Issue date from (YYYY-MM-DD, inclusive).', examples: [''] },
      ate: { description: 'Issue date up to (YYYY-MM-DD, inclusive).', examples: [''] },
      tipo: { description: 'resNFe, procNFe, resEvento, procEventoNFe, NFS-e or eventoNFS-e.', examples: [''] },
      situacao: { description: 'autorizada, denegada, cancelada or registrado.', examples: [''] },
      limite: { description: 'Page size, 1 to 500 (default 50).', examples: ['50'] },
      apos: { description: 'The previous page\'s proximo.', examples: [''] }
    }
  },
  response: {
    200: record({ documentos: list(documentRecord), proximo: orNull(str('Pass as apos for the next page; null on the last.')) }, 'A page.'),
    ...documentFailures
  }
}

export const documentSchema = {
  summary: 'The document of an access key, with its events',
  description: 'The full document before its summary (procNFe, then resNFe; NFS-e); when only events are kept for the key, the latest event.',
  tags: ['documents'], security: operational,
  params: chaveParam,
  response: {
    200: record({ ...documentFields, eventos: list(documentRecord, 'The events kept for this key, newest first.') }, 'The document.'),
    ...documentFailures
  }
}

export const documentXmlSchema = {
  summary: 'The XML of the document GET /v1/documents/{chave} returns',
  tags: ['documents'], security: operational,
  params: chaveParam,
  response: {
    200: { description: 'The XML as inflated from the docZip / ArquivoXml.', content: { 'application/xml': { schema: { type: 'string' } } } },
    ...documentFailures
  }
}

// Issue 35, item 3: the manifestação do destinatário (manifestacao-routes.ts).
const tpEventoField = { type: 'string', enum: ['210200', '210210', '210220', '210240'], description: '210200 Confirmação da Operação, 210210 Ciência da Operação, 210220 Desconhecimento da Operação, 210240 Operação não Realizada.' }
const manifestOutcome = record({
  chave: str('The NF-e access key.'),
  tp_evento: tpEventoField,
  n_seq_evento: int('The event\'s sequence number: 1, or 2 for a conclusive event registered again after another one.'),
  situacao: { type: 'string', enum: ['registrado', 'rejeitado'], description: 'registrado: the authority registered it (135, 136) or already had it (573); rejeitado: refused (cStat).' },
  cStat: orNull(str('The authority\'s status for this event (null: answered from the record, or no result came for it).')),
  xMotivo: orNull(str()),
  nProt: orNull(str('The event\'s protocol number, 15 digits, when registered.')),
  dhRegEvento: orNull(str('When the authority registered it, as it wrote it.')),
  repetido: bool('True: already registered; answered from the record, nothing was sent.')
})

export const manifestacaoSchema = {
  summary: 'Manifestação do destinatário: 1 to 20 events of one company, in one batch (NFeRecepcaoEvento4)',
  description: 'Each event is signed with the company\'s certificate and sent to the Ambiente Nacional. A repeat of an event already registered is answered from the record (repetido: true); an event the authority already has (573) counts as registered.',
  tags: ['documents'], security: operational,
  jsonBody: {
    type: 'object',
    required: ['empresa_codigo', 'eventos'],
    additionalProperties: false,
    properties: {
      empresa_codigo: companyCodeField('The recipient company: its CNPJ is the event\'s author, its certificate signs.'),
      eventos: {
        type: 'array', minItems: 1, maxItems: 20, description: 'One event per NF-e and event code.',
        items: {
          type: 'object', required: ['chave', 'tp_evento'], additionalProperties: false,
          properties: {
            chave: { ...str('The NF-e access key, 44 digits.'), examples: ['35261199999090910270550010000000011000000100'] },
            tp_evento: { ...tpEventoField, examples: ['210210'] },
            justificativa: { ...str('210240: required; 210220: optional; others: leave out. 15 to 255 characters on one line (Latin-1).'), examples: ['Mercadoria nao foi entregue ao destinatario'] }
          }
        },
        examples: [[{ chave: '35261199999090910270550010000000011000000100', tp_evento: '210210' }]]
      }
    }
  },
  response: {
    200: record({ empresa_codigo: str(), eventos: list(manifestOutcome, 'One result per event asked, in order.') }, 'The batch was processed: each event\'s result.'),
    ...failures(400, 401, 404, 413, 500),
    ...answers({
      type: 'object',
      required: ['detail', 'code', 'requestId'],
      properties: {
        ...(detail.properties as Record<string, unknown>),
        cStat: orNull(str('The authority\'s status (the first refused event\'s, or the batch\'s).')),
        xMotivo: orNull(str()),
        eventos: list(manifestOutcome, '422 when every event was refused: each one\'s result.')
      }
    }, {
      422: 'Refused: the certificate cannot sign for this company, the authority refused the batch or every event (cStat, xMotivo), or a conclusive event is already registered twice.',
      503: 'The authority is unavailable, paused (108/109), slow or answered outside its schema; sending the same events again is safe.'
    })
  }
}

export const manifestacaoListSchema = {
  summary: 'The manifestação events sent for an access key, oldest first',
  tags: ['documents'], security: operational,
  params: chaveParam,
  response: {
    200: record({
      manifestacoes: list(record({
        chave: str(),
        empresa_codigo: str(),
        tp_evento: tpEventoField,
        n_seq_evento: int(),
        situacao: { type: 'string', enum: ['enviando', 'registrado', 'rejeitado', 'falhou'], description: 'falhou: no usable answer (sending again is safe); enviando: sent, no answer yet.' },
        automatica: bool('Sent by the automatic Ciência.'),
        cStat: orNull(str()),
        xMotivo: orNull(str()),
        nProt: orNull(str()),
        dhRegEvento: orNull(str()),
        erro: orNull(str('Why the last attempt failed.')),
        criado_em: str(),
        enviado_em: str(),
        respondido_em: orNull(str()),
        registrado_em: orNull(str())
      }))
    }, 'The events recorded for the key (an empty list when none was sent).'),
    ...failures(400, 401, 500),
    ...answers(detail, { 503: 'The gateway database is unavailable; try again shortly.' })
  }
}
// Issue 35, item 1: "fetch this key" (feed-routes.ts).
export const documentFetchSchema = {
  summary: 'Fetch an NF-e by its access key from the authority (consChNFe) and keep it',
  description: 'For a note the feed has only as a summary (resNFe) or not at all. Answers the document as GET /v1/documents/{chave} does. ' +
    'A key whose full note (procNFe) is already kept is answered without asking the authority. Each company\'s CNPJ may make 20 lookups an hour ' +
    '(consChNFe and the feed\'s gap refills together, across every gateway instance; the authority blocks the CNPJ for an hour past that).',
  tags: ['documents'], security: operational,
  params: { type: 'object', required: ['chave'], properties: { chave: { ...str('44 digits: an NF-e access key.'), examples: ['35261199999090910270550010000000011000000100'] } } },
  jsonBody: {
    type: 'object',
    required: ['empresa_codigo'],
    properties: { empresa_codigo: companyCodeField('The company that received the note: its certificate and CNPJ ask.') }
  },
  response: {
    200: record({ ...documentFields, eventos: list(documentRecord, 'The events kept for this key, newest first.') }, 'The document, now kept.'),
    ...failures(400, 401, 404, 500),
    ...answers(refusedQueryBody, {
      422: 'The authority refused the lookup (cStat and xMotivo in the detail: 217 key unknown, 632 older than 90 days, 640/641 not available to this company, 653/654 cancelled or denied), or the company\'s certificate cannot be used.',
      429: 'Held back: the CNPJ\'s 20 lookups of the last hour are used (GATEWAY_LOOKUP_LIMIT), or the CNPJ is blocked by a 656 (GATEWAY_COOLDOWN); Retry-After says when.',
      503: 'The authority or the database is unavailable; try again later.'
    })
  }
}

// Issue 35, item 4: the notifications (notification-routes.ts).
const webhook = record({
  id: str('The endpoint\'s id.'),
  url: str(),
  empresa_codigo: orNull(str('The company whose events it receives; null: global (every document the gateway keeps, once).')),
  segredo_dica: str('The secret\'s last four characters; the secret itself is answered only when the endpoint is made.'),
  ativo: bool(),
  criado_em: str()
})
const webhookIdParam = { type: 'object', required: ['id'], properties: { id: { ...str('The endpoint\'s id (GET /admin/webhooks lists them).'), examples: ['0b6f3c1e-6a4f-4a8e-9a53-2f1d0c7b9e11'] } } }
const delivery = record({
  id: str(),
  endpoint_id: str(),
  evento_id: str('The event\'s id, the same in X-Razao-Evento-Id on every attempt: receivers deduplicate on it.'),
  tipo: { type: 'string', enum: ['documento.novo', 'documento.cancelado'] },
  documento_id: str(),
  cnpj: str('The company the event concerns.'),
  status: { type: 'string', enum: ['pendente', 'entregue', 'falhou'], description: 'pendente: waiting for an attempt or a retry; entregue: a 2xx answer; falhou: given up (ultimo_erro says why).' },
  tentativas: int('Attempts made.'),
  codigo_resposta: orNull(int('The HTTP status of the last answer; null when none came.')),
  ultimo_erro: orNull(str('Why the last attempt failed.')),
  criado_em: str(),
  ultima_tentativa_em: orNull(str()),
  entregue_em: orNull(str())
})
const notificationFailures = {
  ...failures(400, 401, 404, 413, 500, 503)
}

export const listWebhooksSchema = {
  summary: 'The webhook endpoints', tags: ['notifications'], security: admin,
  response: { 200: list(webhook, 'Every endpoint, newest first.'), ...failures(401, 500, 503) }
}

export const createWebhookSchema = {
  summary: 'Add a webhook endpoint (one company\'s, or global); answers its secret once',
  description: 'Each event is POSTed as JSON, signed with HMAC-SHA256 (X-Razao-Assinatura: t=<unix seconds>,v1=<hex of HMAC(secret, "<t>.<raw body>")>); see docs/gateway.md, "Notifications".',
  tags: ['notifications'], security: admin,
  jsonBody: {
    type: 'object', required: ['url'], additionalProperties: false,
    properties: {
      url: { ...str('Where events are POSTed: an absolute http or https URL (https in production).'), examples: ['https://erp.example.com.br/razao/eventos'] },
      empresa_codigo: { ...orNull(str('Only this company\'s events; absent or null: global.')), examples: [null] },
      segredo: { ...str('Your own secret, 24 to 200 characters; left out, the gateway makes one.'), examples: ['troque-por-um-segredo-longo-e-aleatorio'] }
    }
  },
  response: {
    201: record({ ...(webhook.properties as Record<string, JsonSchema>), segredo: str('The signing secret: shown this once.') }, 'The endpoint, with its secret.'),
    ...notificationFailures
  }
}

export const deleteWebhookSchema = {
  summary: 'Remove a webhook endpoint (its log and its pending deliveries with it)', tags: ['notifications'], security: admin, params: webhookIdParam,
  response: { 204: { type: 'null', description: 'Removed.' }, ...failures(400, 401, 404, 500, 503) }
}

export const updateWebhookSchema = {
  summary: 'Pause or resume a webhook endpoint',
  description: 'A paused endpoint is given no new events; its attempts still due end as falhou.',
  tags: ['notifications'], security: admin, params: webhookIdParam,
  jsonBody: { type: 'object', required: ['ativo'], additionalProperties: false, properties: { ativo: { ...bool(), examples: [false] } } },
  response: { 200: { ...webhook, description: 'The endpoint, changed.' }, ...failures(400, 401, 404, 413, 500, 503) }
}

export const listDeliveriesSchema = {
  summary: 'The webhook delivery log, newest first', tags: ['notifications'], security: admin,
  querystring: {
    type: 'object',
    properties: {
      endpoint_id: { description: 'Only this endpoint\'s.', examples: [''] },
      status: { description: 'pendente, entregue or falhou.', examples: [''] },
      limite: { description: '1 to 500 (default 50).', examples: ['50'] }
    }
  },
  response: { 200: list(delivery, 'The deliveries.'), ...failures(400, 401, 500, 503) }
}

export const eventSessionSchema = {
  summary: 'Open a session for the event stream (a cookie EventSource sends)',
  description: 'Sets the HttpOnly cookie razao_eventos (Path=/admin/eventos, SameSite=Strict, 5 minutes): a browser\'s EventSource cannot send the Bearer header. The cookie only opens GET /admin/eventos.',
  tags: ['notifications'], security: admin,
  response: { 200: record({ expira_em: str('When the cookie stops opening streams (an open stream goes on).') }, 'The cookie is set.'), ...failures(401, 500) }
}

export const eventStreamSchema = {
  summary: 'Server-Sent Events: documents kept or cancelled, feed states that changed',
  description: 'text/event-stream. Events: pronto (connected: what is written from then on is shown), documento (a document kept or a note cancelled), feed (a feed\'s state, as GET /admin/feed answers it). Authenticated by Authorization: Bearer or by the razao_eventos cookie of POST /admin/eventos/sessao.',
  tags: ['notifications'], security: admin,
  response: {
    200: { description: 'The stream; it stays open.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
    ...failures(401, 503)
  }
}
