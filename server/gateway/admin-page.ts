/**
 * The administration screen (issue 15): one static page, its script and its style,
 * served by the gateway itself (no CDN, no build step). The page holds no data and
 * loads without the token; it asks for the token, keeps it in sessionStorage (gone
 * when the tab closes) and sends it as `Authorization: Bearer` on every call to the
 * admin API. Data is written with textContent only, never parsed as HTML.
 *
 * The screen speaks Portuguese throughout (issue 36): a refusal of the API, whose `detail`
 * is English, is told in Portuguese from its status, its `code` when the answer carries one,
 * and the field or fact the detail names (wire names, which do not change); the service's own
 * sentence stays in the message's tooltip for whoever reports the problem.
 */

export const ADMIN_PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

export const ADMIN_HTML = `<!doctype html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>razao · gateway · administração</title>
<link rel="stylesheet" href="/admin-ui/app.css">
<script src="/admin-ui/app.js" defer></script>
</head>
<body>
<header><h1>Gateway de documentos fiscais</h1><button id="logout" type="button" hidden>Sair</button></header>
<p id="message" role="status" aria-live="polite"></p>

<section id="login">
  <h2>Entrar</h2>
  <form id="token-form" autocomplete="off">
    <label>Token de administração
      <input id="token" name="token" type="password" required autocomplete="off" aria-describedby="token-hint"></label>
    <button type="submit">Entrar</button>
  </form>
  <p id="token-hint" class="hint">O token é o conteúdo do arquivo <code>.data/gateway-admin-api-key</code>, criado na primeira
    execução do gateway (num terminal, na pasta do repositório: <code>cat .data/gateway-admin-api-key</code>; a variável
    <code>RAZAO_DATA_DIR</code> muda a pasta <code>.data/</code>). Se a variável <code>GATEWAY_ADMIN_TOKEN</code> estiver definida,
    o token é o valor dela.</p>
</section>

<main id="app" hidden>
  <section>
    <h2>Empresas</h2>
    <p class="search"><label>Buscar <input id="search" type="search" autocomplete="off" placeholder="razão social, CNPJ, empresa_codigo ou código domínio"></label>
      <span id="search-count" aria-live="polite"></span></p>
    <table id="companies">
      <thead><tr><th>Razão social</th><th>CNPJ</th><th>empresa_codigo</th><th>Código domínio</th><th>Matriz</th><th>Ativa</th><th>Certificado</th><th>Dias até vencer</th><th>Ações</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>

  <section>
    <h2 id="company-title">Nova empresa</h2>
    <form id="company-form" autocomplete="off">
      <input type="hidden" name="empresa_codigo">
      <label>Razão social <input name="razao_social" required maxlength="200"></label>
      <label>CNPJ <input name="cnpj" required maxlength="18" placeholder="12.ABC.345/01DE-35"></label>
      <label>Código domínio <input name="codigo_dominio" maxlength="64"></label>
      <label>Matriz <select name="matriz_empresa_codigo"><option value="">(é matriz)</option></select></label>
      <label class="check"><input type="checkbox" name="herda_certificado_matriz"> Usa o certificado da matriz</label>
      <label class="check" id="ativo-label" hidden><input type="checkbox" name="ativo"> Ativa</label>
      <button type="submit">Salvar</button>
      <button type="button" id="company-cancel">Limpar</button>
    </form>
  </section>

  <section>
    <h2>Certificado A1</h2>
    <form id="cert-form" autocomplete="off">
      <label>Empresa <select name="empresa_codigo" required></select></label>
      <label>Arquivo (.pfx / .p12) <input name="pfx" type="file" accept=".pfx,.p12,application/x-pkcs12" required></label>
      <label>Senha do certificado <input name="senha" type="password" autocomplete="off"></label>
      <button type="submit">Enviar certificado</button>
    </form>
  </section>

  <section id="feed-panel">
    <h2>Distribuição de documentos por empresa</h2>
    <p class="hint">NF-e (distribuição do Ambiente Nacional) e NFS-e (ADN). A tabela se atualiza sozinha: <span id="live-status">desconectada</span>.</p>
    <table id="feeds">
      <thead><tr><th>Empresa</th><th>CNPJ</th><th>Serviço</th><th>Distribuição</th><th>Ciência automática</th><th>Último NSU</th><th>maxNSU</th><th>Próxima consulta</th><th>Documentos por tipo</th><th>Documentos por situação</th><th>Último erro</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>

  <section id="webhooks-panel">
    <h2>Notificações (webhooks)</h2>
    <form id="webhook-form" autocomplete="off">
      <label>URL de destino <input name="url" type="url" required maxlength="2000" placeholder="https://erp.exemplo.com.br/razao/eventos"></label>
      <label>Empresa <select name="empresa_codigo"><option value="">(todas: global)</option></select></label>
      <button type="submit">Adicionar</button>
    </form>
    <p id="webhook-secret-box" hidden>Segredo de assinatura (copie agora; ele não será mostrado de novo): <code id="webhook-secret"></code></p>
    <table id="webhooks">
      <thead><tr><th>URL</th><th>Empresa</th><th>Segredo</th><th>Situação</th><th>Criado em</th><th>Ações</th></tr></thead>
      <tbody></tbody>
    </table>
    <h3>Entregas recentes <button id="deliveries-refresh" type="button">Atualizar</button></h3>
    <table id="deliveries">
      <thead><tr><th>Quando</th><th>Evento</th><th>CNPJ</th><th>Destino</th><th>Situação</th><th>Tentativas</th><th>Resposta</th><th>Último erro</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>

  <section>
    <h2>Chave operacional (X-API-Key)</h2>
    <p>Gerar uma nova chave invalida a atual imediatamente. A nova chave aparece uma única vez.</p>
    <button id="rotate" type="button">Gerar nova chave</button>
    <p id="new-key-box" hidden>Nova chave (copie agora): <code id="new-key"></code></p>
  </section>
</main>
</body>
</html>
`

export const ADMIN_CSS = `body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1d2733; }
header { display: flex; justify-content: space-between; align-items: center; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #d5dbe2; padding: 0.35rem 0.5rem; text-align: left; vertical-align: top; }
form { display: flex; flex-wrap: wrap; gap: 0.6rem 1rem; align-items: flex-end; }
label { display: flex; flex-direction: column; font-size: 0.85rem; gap: 0.2rem; }
label.check { flex-direction: row; align-items: center; }
button { padding: 0.3rem 0.7rem; cursor: pointer; }
td button { margin: 0 0.2rem 0.2rem 0; font-size: 0.8rem; }
/* The hidden attribute must win over the display rules above (label, form): without this the
   "Ativa" box of the new-company form showed although hidden. */
[hidden] { display: none !important; }
#message { min-height: 1.2rem; font-weight: 600; }
.hint { font-size: 0.85rem; color: #4a5866; max-width: 48rem; line-height: 1.8; }
.search { display: flex; align-items: center; }
.search label { flex-direction: row; align-items: center; gap: 0.5rem; }
td[data-field=cnpj] { white-space: nowrap; }
#search { min-width: 24rem; }
#search-count { font-size: 0.85rem; color: #4a5866; margin-left: 0.8rem; }
#message.error { color: #a1221a; } #message.ok { color: #1e6b30; }
.VALIDO { color: #1e6b30; } .VENCE_EM_BREVE { color: #9a6700; } .VENCIDO, .AUSENTE { color: #a1221a; }
h3 { font-size: 1rem; margin-top: 1.2rem; }
#live-status.on { color: #1e6b30; font-weight: 600; }
.ligado { color: #1e6b30; } .desligado { color: #4a5866; } .falhou { color: #a1221a; } .entregue { color: #1e6b30; } .pendente { color: #9a6700; }
td.counts { font-size: 0.8rem; }
code { background: #eef1f4; padding: 0.2rem 0.4rem; user-select: all; word-break: break-all; }
`

// Plain ES2017 without template literals (this file is itself a template literal).
export const ADMIN_JS = `'use strict';
(function () {
  var TOKEN_KEY = 'razao-gateway-admin-token';
  var companies = [];
  var feeds = [];
  var webhooks = [];
  var events = null;
  var reloadTimer = null;
  var SERVICES = { nfe: 'NF-e', adn: 'NFS-e' };
  function $(id) { return document.getElementById(id); }
  function token() { return sessionStorage.getItem(TOKEN_KEY); }
  function say(text, ok, detail) {
    var m = $('message'); m.textContent = text; m.className = ok ? 'ok' : 'error';
    if (detail) m.title = 'Resposta do serviço: ' + detail; else m.removeAttribute('title');
  }
  /** A CNPJ as people read it: 11.222.333/0001-81 (the alphanumeric one the same way). */
  function formatCnpj(cnpj) {
    if (!cnpj || cnpj.length !== 14) return cnpj || '';
    return cnpj.slice(0, 2) + '.' + cnpj.slice(2, 5) + '.' + cnpj.slice(5, 8) + '/' + cnpj.slice(8, 12) + '-' + cnpj.slice(12);
  }
  /** Text for the search: no accents, no case; a CNPJ also without its punctuation. */
  function fold(text) {
    return String(text || '').normalize('NFD').replace(/[\\u0300-\\u036f]/g, '').toLowerCase();
  }
  function bare(text) { return fold(text).replace(/[^0-9a-z]/g, ''); }
  /**
   * A refusal of the admin API, in Portuguese. "what" is the action: 'empresa' (save),
   * 'certificado' (upload or removal), or another. The detail is English; it is read only
   * for the field or fact it names, and kept in the tooltip.
   */
  function explain(status, data, what, requestId) {
    var d = String(data.detail || ''); var code = data.code || '';
    var has = function (re) { return re.test(d); };
    if (status === 401) return 'Token recusado. Use o conteúdo de .data/gateway-admin-api-key (ou o valor de GATEWAY_ADMIN_TOKEN, se estiver definida) e entre de novo.';
    if (status === 413) return 'O envio é grande demais: o arquivo do certificado tem no máximo 256 KiB.';
    if (status === 409 || code === 'COMPANY_CNPJ_EXISTS') {
      var other = /EMP[0-9A-F]{6,}/.exec(d);
      return 'Já existe uma empresa ativa com este CNPJ' + (other ? ' (' + other[0] + ')' : '') + '. Edite aquela empresa ou desative-a antes.';
    }
    if (status === 404 && (code === 'WEBHOOK_NOT_FOUND' || what === 'webhook')) return code === 'WEBHOOK_NOT_FOUND' ? 'Este destino de notificações já foi removido.' : 'Empresa não encontrada: ela não está mais cadastrada.';
    if (status === 404) return what === 'certificado' || what === 'empresa' || what === 'feed' ? 'Empresa não encontrada: ela não está mais cadastrada. A lista foi recarregada.' : 'Não encontrado.';
    if (status === 503) {
      if (code === 'GATEWAY_STORE_KEY_MISMATCH' || has(/master key|decrypt|sealed|layout/i)) return 'O certificado guardado não abre com a chave mestra atual (GATEWAY_MASTER_KEY mudou?). Restaure a chave ou envie o certificado de novo.';
      return 'O banco de dados do gateway não responde agora. Tente de novo em instantes.';
    }
    if (status >= 500) return 'Erro interno do gateway' + (requestId ? ' (requisição ' + requestId + ')' : '') + '. Tente de novo; se persistir, informe este código a quem mantém o sistema.';
    if (status === 422) {
      if (code === 'COMPANY_EXISTS' || has(/codigo_dominio/)) return 'Já existe uma empresa com este código domínio.';
      if (code === 'GATEWAY_CERT_MISSING' || has(/no certificate/)) return 'Esta empresa não tem certificado próprio para remover.';
      if (code === 'GATEWAY_CERT_EXPIRED' || has(/expired|not valid before/)) return 'O certificado está fora da validade (vencido, ou ainda não vale). Envie um certificado vigente.';
      if (code === 'GATEWAY_CERT_CNPJ_MISMATCH' || has(/root|no CNPJ to match/)) {
        if (has(/no CNPJ to match/)) return 'A empresa não tem CNPJ para conferir o certificado: informe o CNPJ dela antes.';
        return what === 'empresa'
          ? 'O novo CNPJ tem outra raiz (8 primeiros caracteres) que o certificado guardado desta empresa: remova o certificado antes.'
          : 'O certificado é de outro CNPJ: a raiz (8 primeiros caracteres) não é a da empresa escolhida.';
      }
      if (has(/password/)) return 'O certificado não abriu com esta senha.';
      if (has(/private key/)) return 'O arquivo não traz a chave privada: exporte o certificado A1 junto com a chave.';
      if (has(/names no CNPJ/)) return 'O certificado não traz CNPJ: o gateway precisa de um certificado e-CNPJ A1.';
      if (has(/check digits/)) return 'O CNPJ que o certificado traz tem dígitos verificadores inválidos.';
      if (has(/iterations|too long/)) return 'O arquivo do certificado pede processamento demais para ser aberto; exporte-o de novo.';
      return what === 'certificado' ? 'O arquivo não é um certificado PKCS#12 (.pfx/.p12) legível.' : 'O gateway recusou o pedido.';
    }
    if (status === 400) {
      if (has(/distribution asks by CNPJ/)) return 'A empresa não tem CNPJ: a distribuição consulta pelo CNPJ. Cadastre o CNPJ antes.';
      if (has(/field "url"/)) return has(/user or password/) ? 'A URL não pode levar usuário e senha: o segredo assina cada envio.' : 'Informe uma URL completa, começando por https:// (ou http://).';
      if (has(/herda_certificado_matriz needs/)) return 'Só uma filial usa o certificado da matriz: escolha a matriz.';
      if (has(/names the company itself/)) return 'Uma empresa não pode ser matriz de si mesma.';
      if (has(/names no registered/)) return 'A matriz escolhida não está cadastrada.';
      if (has(/is itself a branch/)) return 'A matriz escolhida é uma filial: escolha uma matriz.';
      if (has(/branches of its own/)) return 'Esta empresa tem filiais, então não pode virar filial.';
      if (has(/branches/)) return 'O novo CNPJ tem outra raiz (8 primeiros caracteres) que as filiais desta empresa.';
      if (has(/head office|CNPJ root/)) return 'Uma filial tem a mesma raiz de CNPJ (8 primeiros caracteres) que a matriz.';
      if (has(/cnpj|CNPJ/)) return 'CNPJ inválido: são 14 caracteres (números, ou letras e números no CNPJ alfanumérico) com os dígitos verificadores corretos.';
      if (has(/razao_social|name/)) return 'Informe a razão social (de 1 a 200 caracteres).';
      if (has(/codigo_dominio/)) return 'O código domínio tem no máximo 64 caracteres.';
      if (has(/pfx_base64/)) return 'Escolha o arquivo do certificado (.pfx ou .p12).';
      if (has(/senha/)) return 'Informe a senha do certificado.';
      return 'O gateway recusou os dados enviados.';
    }
    return 'O gateway recusou o pedido (erro ' + status + ').';
  }
  function showApp(on) {
    $('login').hidden = on; $('app').hidden = !on; $('logout').hidden = !on;
  }
  function refusal(text, detail) { var err = new Error(text); err.detail = detail; return err; }
  function api(method, path, body, what) {
    var headers = { 'Authorization': 'Bearer ' + token() };
    var init = { method: method, headers: headers };
    if (body !== undefined) { headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(path, init).catch(function () {
      throw refusal('Sem resposta do gateway: confira se ele está rodando e tente de novo.');
    }).then(function (res) {
      if (res.status === 204) return null;
      return res.json().catch(function () { return {}; }).then(function (data) {
        if (res.status === 401) { sessionStorage.removeItem(TOKEN_KEY); showApp(false); }
        if (!res.ok) throw refusal(explain(res.status, data, what, data.requestId || res.headers.get('x-request-id')), data.detail);
        return data;
      });
    });
  }
  function cell(tr, text, cls) {
    var td = document.createElement('td'); td.textContent = text === null || text === undefined ? '' : String(text);
    if (cls) td.className = cls; tr.appendChild(td); return td;
  }
  function button(td, label, action, handler) {
    var b = document.createElement('button'); b.type = 'button'; b.textContent = label; b.dataset.action = action;
    b.addEventListener('click', handler); td.appendChild(b);
  }
  function render() {
    var body = $('companies').tBodies[0]; body.textContent = '';
    companies.forEach(function (c) {
      var tr = document.createElement('tr'); tr.dataset.empresaCodigo = c.empresa_codigo;
      cell(tr, c.razao_social); cell(tr, formatCnpj(c.cnpj)).dataset.field = 'cnpj'; cell(tr, c.empresa_codigo); cell(tr, c.codigo_dominio);
      tr.dataset.search = fold([c.razao_social, c.empresa_codigo, c.codigo_dominio].join(' ')) + ' ' + bare(c.cnpj);
      cell(tr, c.matriz_empresa_codigo ? c.matriz_empresa_codigo + (c.herda_certificado_matriz ? ' (herda certificado)' : '') : '');
      cell(tr, c.ativo ? 'sim' : 'não');
      var cert = c.certificado;
      var status = c.certificado_status + (cert && cert.origem === 'MATRIZ' ? ' (matriz)' : '');
      cell(tr, status, c.certificado_status).dataset.field = 'certificado_status';
      cell(tr, cert ? cert.days_to_expiry : '').dataset.field = 'days_to_expiry';
      var actions = cell(tr, '');
      button(actions, 'Editar', 'edit', function () { edit(c); });
      if (cert && cert.origem === 'PROPRIO') button(actions, 'Remover certificado', 'remove-cert', function () { removeCertificate(c); });
      if (c.ativo) button(actions, 'Desativar', 'deactivate', function () { deactivate(c); });
      body.appendChild(tr);
    });
    filter();
    var matriz = document.querySelector('#company-form [name=matriz_empresa_codigo]');
    var certCompany = document.querySelector('#cert-form [name=empresa_codigo]');
    var keepMatriz = matriz.value; var keepCert = certCompany.value;
    matriz.length = 1; certCompany.length = 0;
    companies.forEach(function (c) {
      if (!c.matriz_empresa_codigo) matriz.add(new Option(c.razao_social + ' — ' + c.empresa_codigo, c.empresa_codigo));
      certCompany.add(new Option(c.razao_social + ' — ' + c.empresa_codigo, c.empresa_codigo));
    });
    matriz.value = keepMatriz; if (keepCert) certCompany.value = keepCert;
  }
  /** Shows the rows the search box finds: every word of it in the name, codes or CNPJ (the feed panel's too). */
  function filter() {
    var words = fold($('search').value).split(/\\s+/).filter(function (w) { return w !== ''; });
    var feedRows = $('feeds').tBodies[0].rows;
    for (var j = 0; j < feedRows.length; j++) {
      var ft = feedRows[j].dataset.search;
      feedRows[j].hidden = !words.every(function (w) { return ft.indexOf(w) >= 0 || (bare(w) !== '' && ft.indexOf(bare(w)) >= 0); });
    }
    var rows = $('companies').tBodies[0].rows; var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var text = rows[i].dataset.search;
      var hit = words.every(function (w) { return text.indexOf(w) >= 0 || (bare(w) !== '' && text.indexOf(bare(w)) >= 0); });
      rows[i].hidden = !hit; if (hit) shown++;
    }
    $('search-count').textContent = words.length === 0 ? '' : (shown === 0 ? 'Nenhuma empresa encontrada.' : shown + ' de ' + rows.length + (rows.length === 1 ? ' empresa' : ' empresas'));
  }
  function load() {
    return api('GET', '/admin/empresas').then(function (list) { companies = list; showApp(true); render(); return loadNotifications(); })
      .then(function () { if (!events) listen(); });
  }
  /** The feed table, the webhook endpoints and their recent deliveries. */
  function loadNotifications() {
    return Promise.all([api('GET', '/admin/feed'), api('GET', '/admin/webhooks'), api('GET', '/admin/webhooks/entregas?limite=20')]).then(function (r) {
      feeds = r[0]; webhooks = r[1]; renderFeeds(); renderWebhooks(r[2]);
    });
  }
  function when(iso) {
    if (!iso) return '';
    var d = new Date(iso);
    return d.toLocaleString('pt-BR', { dateStyle: 'short', timeStyle: 'medium' });
  }
  function counts(map) {
    return Object.keys(map || {}).sort().map(function (k) { return k + ': ' + map[k]; }).join(' · ');
  }
  /** Every active company with a CNPJ, each service: its feed state, or "desligada" when none is configured. */
  function renderFeeds() {
    var body = $('feeds').tBodies[0]; body.textContent = '';
    companies.filter(function (c) { return c.ativo && c.cnpj; }).forEach(function (c) {
      Object.keys(SERVICES).forEach(function (servico) {
        var f = feeds.filter(function (x) { return x.empresa_codigo === c.empresa_codigo && x.servico === servico; })[0];
        var on = !!(f && f.ativo);
        var tr = document.createElement('tr'); tr.dataset.empresaCodigo = c.empresa_codigo; tr.dataset.servico = servico;
        tr.dataset.search = fold([c.razao_social, c.empresa_codigo, c.codigo_dominio].join(' ')) + ' ' + bare(c.cnpj);
        cell(tr, c.razao_social); cell(tr, formatCnpj(c.cnpj)); cell(tr, SERVICES[servico]);
        var toggle = cell(tr, on ? 'ligada ' : 'desligada ', on ? 'ligado' : 'desligado'); toggle.dataset.field = 'ativo';
        button(toggle, on ? 'Desligar' : 'Ligar', 'toggle-feed', function () { setFeed(c, servico, { ativo: !on }, 'Distribuição ' + SERVICES[servico] + ' de ' + c.razao_social + (on ? ' desligada.' : ' ligada.')); });
        // NF-e only: a Ciência da Operação sent for each new summary (the NFS-e has no manifestação).
        var ciencia = !!(f && f.ciencia_automatica);
        var auto = cell(tr, servico === 'nfe' ? (ciencia ? 'ligada ' : 'desligada ') : '—', servico === 'nfe' ? (ciencia ? 'ligado' : 'desligado') : ''); auto.dataset.field = 'ciencia_automatica';
        if (servico === 'nfe') {
          button(auto, ciencia ? 'Desligar' : 'Ligar', 'toggle-ciencia', function () { setFeed(c, servico, { ciencia_automatica: !ciencia }, 'Ciência automática de ' + c.razao_social + (ciencia ? ' desligada.' : ' ligada.')); });
        }
        cell(tr, f ? f.ult_nsu : '').dataset.field = 'ult_nsu';
        cell(tr, f ? f.max_nsu : '').dataset.field = 'max_nsu';
        var next = cell(tr, f && on ? when(f.proxima_consulta) : ''); next.dataset.field = 'proxima_consulta';
        if (f && f.proxima_consulta) next.dataset.iso = f.proxima_consulta;
        cell(tr, f ? counts(f.documentos.por_tipo) : '', 'counts').dataset.field = 'por_tipo';
        cell(tr, f ? counts(f.documentos.por_situacao) : '', 'counts').dataset.field = 'por_situacao';
        var err = cell(tr, f && f.ultimo_erro ? (f.ultimo_erro.codigo ? f.ultimo_erro.codigo + ': ' : '') + f.ultimo_erro.mensagem + ' (' + when(f.ultimo_erro.em) + ')' : '', 'falhou');
        err.dataset.field = 'ultimo_erro';
        body.appendChild(tr);
      });
    });
    filter();
  }
  /** Feed events come in bursts (a scheduler round): the table is drawn once for a burst. */
  var feedsTimer = null;
  function renderFeedsSoon() {
    if (feedsTimer) return;
    feedsTimer = setTimeout(function () { feedsTimer = null; renderFeeds(); }, 200);
  }
  function setFeed(c, servico, change, done) {
    api('PUT', '/admin/empresas/' + encodeURIComponent(c.empresa_codigo) + '/feed/' + servico, change, 'feed').then(function (f) {
      feeds = feeds.filter(function (x) { return !(x.empresa_codigo === f.empresa_codigo && x.servico === f.servico); }).concat([f]);
      renderFeeds();
      say(done, true);
    }).catch(fail);
  }
  var STATUS = { pendente: 'pendente (nova tentativa agendada)', entregue: 'entregue', falhou: 'falhou (desistiu)' };
  function renderWebhooks(deliveries) {
    var body = $('webhooks').tBodies[0]; body.textContent = '';
    var byId = {};
    webhooks.forEach(function (w) {
      byId[w.id] = w;
      var tr = document.createElement('tr'); tr.dataset.webhookId = w.id;
      cell(tr, w.url); cell(tr, w.empresa_codigo || '(todas: global)'); cell(tr, w.segredo_dica);
      cell(tr, w.ativo ? 'ativo' : 'pausado', w.ativo ? 'ligado' : 'desligado').dataset.field = 'ativo';
      cell(tr, when(w.criado_em));
      var actions = cell(tr, '');
      button(actions, w.ativo ? 'Pausar' : 'Retomar', 'pause-webhook', function () { pauseWebhook(w, !w.ativo); });
      button(actions, 'Remover', 'remove-webhook', function () { removeWebhook(w); });
      body.appendChild(tr);
    });
    var select = document.querySelector('#webhook-form [name=empresa_codigo]'); var keep = select.value;
    select.length = 1;
    companies.filter(function (c) { return c.ativo; }).forEach(function (c) { select.add(new Option(c.razao_social + ' — ' + c.empresa_codigo, c.empresa_codigo)); });
    select.value = keep;
    var log = $('deliveries').tBodies[0]; log.textContent = '';
    deliveries.forEach(function (d) {
      var tr = document.createElement('tr'); tr.dataset.eventoId = d.evento_id;
      cell(tr, when(d.ultima_tentativa_em || d.criado_em)); cell(tr, d.tipo); cell(tr, formatCnpj(d.cnpj));
      cell(tr, byId[d.endpoint_id] ? byId[d.endpoint_id].url : d.endpoint_id);
      cell(tr, STATUS[d.status] || d.status, d.status).dataset.field = 'status';
      cell(tr, d.tentativas).dataset.field = 'tentativas';
      cell(tr, d.codigo_resposta === null ? '' : 'HTTP ' + d.codigo_resposta);
      cell(tr, d.ultimo_erro || '');
      log.appendChild(tr);
    });
  }
  function addWebhook(event) {
    event.preventDefault();
    var form = $('webhook-form');
    var empresa = form.elements.empresa_codigo.value;
    api('POST', '/admin/webhooks', { url: form.elements.url.value.trim(), empresa_codigo: empresa || null }, 'webhook').then(function (w) {
      $('webhook-secret').textContent = w.segredo; $('webhook-secret-box').hidden = false;
      form.elements.url.value = '';
      say('Destino de notificações adicionado. Copie o segredo agora: ele não será mostrado de novo.', true);
      return loadNotifications();
    }).catch(fail);
  }
  function pauseWebhook(w, ativo) {
    api('PATCH', '/admin/webhooks/' + encodeURIComponent(w.id), { ativo: ativo }, 'webhook')
      .then(function () { say(ativo ? 'Destino retomado: volta a receber os novos eventos.' : 'Destino pausado: não recebe novos eventos.', true); return loadNotifications(); }).catch(fail);
  }
  function removeWebhook(w) {
    if (!confirm('Remover o destino ' + w.url + '? As entregas pendentes dele são descartadas.')) return;
    api('DELETE', '/admin/webhooks/' + encodeURIComponent(w.id), undefined, 'webhook')
      .then(function () { say('Destino de notificações removido.', true); return loadNotifications(); }).catch(fail);
  }
  /** A burst of documents reloads the counts and the log once, not once per document. */
  function reloadSoon() {
    if (reloadTimer) return;
    reloadTimer = setTimeout(function () { reloadTimer = null; loadNotifications().catch(fail); }, 1000);
  }
  function setLive(on) { var s = $('live-status'); s.textContent = on ? 'ao vivo' : 'desconectada (tentando de novo)'; s.className = on ? 'on' : ''; }
  /**
   * The live stream: EventSource cannot send the Bearer header, so a session cookie is asked
   * for first (POST /admin/eventos/sessao, five minutes); when the stream is refused or lost
   * for good, a new cookie is asked for and the stream opened again.
   */
  function listen() {
    if (!token()) return;
    api('POST', '/admin/eventos/sessao').then(function () {
      if (!token()) return;
      var source = new EventSource('/admin/eventos'); events = source;
      source.addEventListener('pronto', function () { setLive(true); });
      source.addEventListener('feed', function (e) {
        var f = JSON.parse(e.data);
        feeds = feeds.filter(function (x) { return !(x.empresa_codigo === f.empresa_codigo && x.servico === f.servico); }).concat([f]);
        renderFeedsSoon();
      });
      source.addEventListener('documento', function () { reloadSoon(); });
      source.addEventListener('error', function () {
        setLive(false);
        if (source.readyState === EventSource.CLOSED && events === source) { events = null; setTimeout(listen, 3000); }
      });
    }).catch(function () { setLive(false); setTimeout(function () { if (!events) listen(); }, 10000); });
  }
  function stopListening() { if (events) { events.close(); events = null; } setLive(false); }
  function fail(err) { say(err.message, false, err.detail); }
  function field(name) { return document.querySelector('#company-form [name=' + name + ']'); }
  function resetCompanyForm() {
    $('company-form').reset(); field('empresa_codigo').value = '';
    $('company-title').textContent = 'Nova empresa'; $('ativo-label').hidden = true;
  }
  function edit(c) {
    field('empresa_codigo').value = c.empresa_codigo; field('razao_social').value = c.razao_social;
    field('cnpj').value = formatCnpj(c.cnpj); field('codigo_dominio').value = c.codigo_dominio || '';
    field('matriz_empresa_codigo').value = c.matriz_empresa_codigo || '';
    field('herda_certificado_matriz').checked = c.herda_certificado_matriz; field('ativo').checked = c.ativo;
    $('ativo-label').hidden = false; $('company-title').textContent = 'Editar ' + c.empresa_codigo;
    field('razao_social').focus();
  }
  function saveCompany(event) {
    event.preventDefault();
    var codigo = field('empresa_codigo').value;
    var body = {
      razao_social: field('razao_social').value, cnpj: field('cnpj').value,
      codigo_dominio: field('codigo_dominio').value.trim() || null,
      matriz_empresa_codigo: field('matriz_empresa_codigo').value || null,
      herda_certificado_matriz: field('herda_certificado_matriz').checked
    };
    var call;
    // "Ativa" is offered only when editing: a new company is always active.
    if (codigo) { body.ativo = field('ativo').checked; call = api('PATCH', '/admin/empresas/' + encodeURIComponent(codigo), body, 'empresa'); }
    else call = api('POST', '/admin/empresas', body, 'empresa');
    call.then(function (c) {
      say((codigo ? 'Empresa atualizada: ' : 'Empresa cadastrada: ') + c.empresa_codigo, true);
      resetCompanyForm(); return load();
    }).catch(function (err) { fail(err); if (/não encontrada/.test(err.message)) load().catch(function () {}); });
  }
  function deactivate(c) {
    if (!confirm('Desativar ' + c.razao_social + '?')) return;
    api('DELETE', '/admin/empresas/' + encodeURIComponent(c.empresa_codigo), undefined, 'empresa')
      .then(function () { say('Empresa desativada: ' + c.empresa_codigo, true); return load(); }).catch(fail);
  }
  function removeCertificate(c) {
    if (!confirm('Remover o certificado de ' + c.razao_social + '?')) return;
    api('DELETE', '/admin/certificados/' + encodeURIComponent(c.empresa_codigo), undefined, 'certificado')
      .then(function () { say('Certificado removido: ' + c.empresa_codigo, true); return load(); }).catch(fail);
  }
  function toBase64(buffer) {
    var bytes = new Uint8Array(buffer); var parts = [];
    for (var i = 0; i < bytes.length; i += 0x8000) parts.push(String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000)));
    return btoa(parts.join(''));
  }
  function uploadCertificate(event) {
    event.preventDefault();
    var form = $('cert-form'); var file = form.elements.pfx.files[0];
    if (!file) { say('Escolha o arquivo do certificado.', false); return; }
    file.arrayBuffer().then(function (buffer) {
      return api('POST', '/admin/certificados', { empresa_codigo: form.elements.empresa_codigo.value, pfx_base64: toBase64(buffer), senha: form.elements.senha.value }, 'certificado');
    }).then(function (cert) {
      form.elements.senha.value = ''; form.elements.pfx.value = '';
      say('Certificado de ' + formatCnpj(cert.cnpj) + ' guardado; vence em ' + cert.valid_until.slice(0, 10) + ' (' + cert.days_to_expiry + ' dias).', true);
      return load();
    }).catch(fail);
  }
  function rotate() {
    if (!confirm('Gerar uma nova chave? A chave atual deixa de funcionar agora.')) return;
    api('POST', '/admin/api-key/rotate').then(function (data) {
      $('new-key').textContent = data.api_key; $('new-key-box').hidden = false;
      say('Nova chave gerada. Ela não será mostrada de novo.', true);
    }).catch(fail);
  }
  document.addEventListener('DOMContentLoaded', function () {
    $('token-form').addEventListener('submit', function (event) {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $('token').value.trim()); $('token').value = '';
      load().then(function () { say('', true); }).catch(fail);
    });
    $('logout').addEventListener('click', function () {
      stopListening();
      sessionStorage.removeItem(TOKEN_KEY); companies = []; feeds = []; webhooks = []; render(); renderFeeds(); renderWebhooks([]); showApp(false);
      $('webhook-secret-box').hidden = true; $('webhook-secret').textContent = '';
      $('new-key-box').hidden = true; $('new-key').textContent = ''; say('', true);
    });
    $('company-form').addEventListener('submit', saveCompany);
    $('company-cancel').addEventListener('click', resetCompanyForm);
    $('cert-form').addEventListener('submit', uploadCertificate);
    $('rotate').addEventListener('click', rotate);
    $('webhook-form').addEventListener('submit', addWebhook);
    $('deliveries-refresh').addEventListener('click', function () { loadNotifications().catch(fail); });
    $('search').addEventListener('input', filter);
    if (token()) load().catch(fail); else showApp(false);
  });
})();
`
