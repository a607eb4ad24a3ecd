/**
 * The imports screen (issue 31, item 4): one static page, its script and its style, served
 * by the import service itself, under the gateway admin screen's rules (no CDN, no build
 * step, a Content-Security-Policy with no inline script or style). The page holds no data
 * and loads without the key; it asks for the X-API-Key, keeps it in sessionStorage (gone
 * when the tab closes) and sends it on every call. Data is written with textContent only.
 *
 * Live progress: the page polls GET /v1/imports every second (one request covers every
 * running import, and new ones appear), rather than one event stream per import: an
 * EventSource cannot send the key, and streams are capped per instance (EVENTS_MAX_STREAMS).
 */
import { ADMIN_PAGE_CSP } from '../gateway/admin-page.js'

export const IMPORTS_PAGE_CSP = ADMIN_PAGE_CSP

/** How many imports the page lists, and how many rejected cells it shows of one import. */
export const IMPORTS_PAGE_LIMIT = 20
export const IMPORTS_PAGE_CELLS = 200

export const IMPORTS_HTML = `<!doctype html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>razao · importações</title>
<link rel="stylesheet" href="/imports-ui/app.css">
<script src="/imports-ui/app.js" defer></script>
</head>
<body>
<header><h1>Importações de razão</h1><button id="logout" type="button" hidden>Sair</button></header>
<p id="message" role="status" aria-live="polite"></p>

<section id="login">
  <h2>Entrar</h2>
  <form id="key-form" autocomplete="off">
    <label>Chave da API (X-API-Key: IMPORT_API_KEY, ou o arquivo .data/import-api-key)
      <input id="key" name="key" type="password" required autocomplete="off"></label>
    <button type="submit">Entrar</button>
  </form>
</section>

<main id="app" hidden>
  <h2>Importações recentes</h2>
  <form id="filter" autocomplete="off">
    <label>Empresa (código domínio)
      <input id="filter-company" name="codigo_dominio" maxlength="100"></label>
    <label>Situação
      <select id="filter-status" name="status">
        <option value="">todas</option>
        <option>RECEBIDO</option><option>PROCESSANDO</option><option>VALIDADO</option>
        <option>FALHOU</option><option>CANCELADO</option><option>SUBSTITUIDO</option>
      </select></label>
    <button type="submit">Filtrar</button>
  </form>
  <p id="empty" hidden>Nenhuma importação ainda.</p>
  <div id="imports"></div>
</main>
</body>
</html>
`

export const IMPORTS_CSS = `body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1d2733; }
header { display: flex; justify-content: space-between; align-items: center; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem; } h3 { font-size: 1rem; margin: 0 0 0.4rem; }
form { display: flex; flex-wrap: wrap; gap: 0.6rem 1rem; align-items: flex-end; }
label { display: flex; flex-direction: column; font-size: 0.85rem; gap: 0.2rem; }
button { padding: 0.3rem 0.7rem; cursor: pointer; }
#message { min-height: 1.2rem; font-weight: 600; }
#message.error { color: #a1221a; } #message.ok { color: #1e6b30; }
article { border: 1px solid #d5dbe2; border-radius: 4px; padding: 0.7rem 0.9rem; margin-bottom: 0.8rem; }
.status { font-weight: 600; } .VALIDADO { color: #1e6b30; } .FALHOU, .CANCELADO { color: #a1221a; } .SUBSTITUIDO { color: #5b6673; }
progress { width: 100%; height: 1rem; }
.figures, .small { font-size: 0.85rem; color: #3d4957; }
table { border-collapse: collapse; width: 100%; font-size: 0.85rem; margin: 0.4rem 0; }
th, td { border-bottom: 1px solid #d5dbe2; padding: 0.25rem 0.4rem; text-align: left; vertical-align: top; }
.error-code { font-family: monospace; font-weight: 600; }
.group { margin-top: 0.6rem; }
#filter { margin-bottom: 0.8rem; }
button.cancel { margin-top: 0.4rem; }
`

// Plain ES2017 without template literals (this file is itself a template literal).
export const IMPORTS_JS = `'use strict';
(function () {
  var KEY = 'razao-import-api-key';
  var LIMIT = ${IMPORTS_PAGE_LIMIT};
  var CELLS = ${IMPORTS_PAGE_CELLS};
  var RUNNING = { RECEBIDO: true, PROCESSANDO: true };
  var cards = {};
  var timer = null;
  function $(id) { return document.getElementById(id); }
  function key() { return sessionStorage.getItem(KEY); }
  function say(text, ok) { var m = $('message'); m.textContent = text; m.className = ok ? 'ok' : 'error'; }
  function showApp(on) { $('login').hidden = on; $('app').hidden = !on; $('logout').hidden = !on; }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function refused(res, data) {
    if (res.status === 401) {
      sessionStorage.removeItem(KEY); stop(); showApp(false);
      throw new Error('Chave recusada: ' + (data.detail || 'confira a chave e entre de novo.'));
    }
    if (!res.ok) throw new Error(data.detail || ('Erro ' + res.status));
  }
  function call(path, init) {
    init = init || {};
    init.headers = { 'X-API-Key': key() };
    return fetch(path, init);
  }
  function getJson(path, init) {
    return call(path, init).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (data) { refused(res, data); return data; });
    });
  }
  function money(n) { return typeof n === 'number' ? n.toLocaleString('pt-BR', { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : ''; }
  function count(n) { return typeof n === 'number' ? n.toLocaleString('pt-BR') : ''; }
  function table(head, rows) {
    var t = el('table'); var h = t.createTHead().insertRow();
    head.forEach(function (name) { h.appendChild(el('th', name)); });
    var body = t.createTBody();
    rows.forEach(function (r) { var tr = body.insertRow(); r.forEach(function (v) { tr.appendChild(el('td', v)); }); });
    return t;
  }

  function card(imp) {
    var c = cards[imp.importacao_id];
    if (c) return c;
    var a = el('article'); a.dataset.id = imp.importacao_id;
    c = { article: a, title: el('h3'), status: el('p', null, 'status'), bar: el('progress'), figures: el('p', null, 'figures'), cancel: el('button', 'Cancelar', 'cancel'), detail: el('div', null, 'detail'), done: null };
    c.status.dataset.field = 'status'; c.bar.max = 100; c.bar.dataset.field = 'progress'; c.figures.dataset.field = 'figures';
    c.cancel.type = 'button'; c.cancel.dataset.action = 'cancel';
    c.cancel.addEventListener('click', function () { cancel(imp.importacao_id, c); });
    a.appendChild(c.title); a.appendChild(c.status); a.appendChild(c.bar); a.appendChild(c.figures); a.appendChild(c.cancel); a.appendChild(c.detail);
    cards[imp.importacao_id] = c;
    return c;
  }
  // Two clicks: the first asks, the second sends DELETE (nothing of a cancelled import is kept).
  function cancel(id, c) {
    if (c.cancel.dataset.armed !== 'true') {
      c.cancel.dataset.armed = 'true'; c.cancel.textContent = 'Confirmar o cancelamento (nada desta importação será gravado)';
      return;
    }
    c.cancel.disabled = true;
    getJson('/v1/imports/' + encodeURIComponent(id), { method: 'DELETE' }).then(function (imp) {
      say('Importação ' + id + ': ' + (imp.status === 'CANCELADO' ? 'cancelada.' : 'cancelamento pedido; ela para em instantes.'), true);
      update(imp);
    }).catch(fail);
  }
  function update(imp) {
    var c = card(imp);
    c.title.textContent = imp.nome_arquivo + ' · empresa ' + (imp.codigo_dominio === null ? '(removida)' : imp.codigo_dominio) + ' · ' + imp.modo_importacao;
    c.status.textContent = imp.status + (RUNNING[imp.status] ? ' · fase: ' + imp.fase : '') + ' · ' + new Date(imp.criado_em).toLocaleString('pt-BR');
    c.status.className = 'status ' + imp.status; c.article.dataset.status = imp.status;
    c.bar.value = imp.percentual; c.bar.textContent = imp.percentual + '%';
    var parts = [imp.percentual.toLocaleString('pt-BR') + '%', count(imp.linhas_lidas) + ' linhas lidas', count(imp.linhas_carregadas) + ' carregadas'];
    if (RUNNING[imp.status]) {
      if (imp.taxa_linhas_s !== null) parts.push(count(imp.taxa_linhas_s) + ' linhas/s');
      if (imp.restante_estimado_s !== null) parts.push('faltam cerca de ' + Math.ceil(imp.restante_estimado_s) + ' s');
    }
    c.figures.textContent = parts.join(' · ');
    c.bar.hidden = !RUNNING[imp.status] && imp.status !== 'VALIDADO';
    c.cancel.hidden = !RUNNING[imp.status];
    // An ended import's detail is read once: its row no longer changes (but for SUBSTITUIDO).
    if (!RUNNING[imp.status] && c.done !== imp.status) { c.done = imp.status; detail(imp.importacao_id, c); }
    return c;
  }

  function detail(id, c) {
    getJson('/v1/imports/' + encodeURIComponent(id)).then(function (full) {
      c.detail.textContent = '';
      if (full.resultado) validated(c.detail, full);
      if (full.erro) failed(c.detail, full);
    }).catch(fail);
  }
  function validated(box, full) {
    var r = full.resultado;
    var p = el('p', 'Resultado: ' + count(r.total_rows) + ' linhas · débito ' + money(r.total_debit) + ' · crédito ' + money(r.total_credit) + ' · diferença ' + money(r.difference), 'result');
    p.dataset.field = 'result'; box.appendChild(p);
    if (full.substituida_por) box.appendChild(el('p', 'Substituída pela importação ' + full.substituida_por, 'small'));
  }
  function failed(box, full) {
    var e = full.erro;
    var p = el('p'); p.dataset.field = 'error';
    p.appendChild(el('span', e.code, 'error-code')); p.appendChild(document.createTextNode(' — ' + e.detail));
    box.appendChild(p);
    if (e.code === 'LEDGER_INVALID_CELLS' && full.problemas) invalidCells(box, full);
    if (e.code === 'LEDGER_UNBALANCED') unbalanced(box, full);
    if (e.code === 'IMPORT_OVERLAP' && e.sobreposicao) overlap(box, e.sobreposicao);
  }

  // problems.csv: ; between fields, quoted fields with doubled quotes (RFC 4180), a byte order mark.
  function parseCsv(text, max) {
    var rows = []; var row = []; var field = ''; var i = 0; var quoted = false;
    if (text.charCodeAt(0) === 0xFEFF) i = 1;
    for (; i < text.length && rows.length < max; i++) {
      var ch = text[i];
      if (quoted) {
        if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; }
        else if (ch === '"') quoted = false;
        else field += ch;
      } else if (ch === '"') quoted = true;
      else if (ch === ';') { row.push(field); field = ''; }
      else if (ch === '\\r' && text[i + 1] === '\\n') { row.push(field); rows.push(row); row = []; field = ''; i++; }
      else field += ch;
    }
    if (rows.length < max && (field !== '' || row.length > 0)) { row.push(field); rows.push(row); }
    return rows;
  }
  // Reads the file only until it holds max records (the list may run to 100,000 lines); the
  // last record read may be cut by the chunk's end, so one more than needed is asked for.
  function firstRecords(res, max) {
    var reader = res.body.getReader(); var decoder = new TextDecoder(); var text = '';
    function more() {
      return reader.read().then(function (chunk) {
        if (chunk.done) return parseCsv(text + decoder.decode(), max);
        text += decoder.decode(chunk.value, { stream: true });
        var records = parseCsv(text, max + 1);
        if (records.length > max) return reader.cancel().then(function () { return records.slice(0, max); });
        return more();
      });
    }
    return more();
  }
  function unguard(value) { return /^'[=+\\-@\\t\\r]/.test(value) ? value.slice(1) : value; }
  function invalidCells(box, full) {
    var pr = full.problemas;
    box.appendChild(el('p', 'Células inválidas: ' + count(pr.total) + (pr.total > CELLS ? ' (as primeiras ' + CELLS + ' abaixo)' : '') + '. Nada foi gravado.'));
    var button = el('button', 'Baixar problems.csv'); button.type = 'button'; button.dataset.action = 'download';
    button.addEventListener('click', function () { download(pr.url, 'importacao-' + full.importacao_id + '-problemas.csv'); });
    box.appendChild(button);
    call(pr.url).then(function (res) {
      if (!res.ok) return res.json().catch(function () { return {}; }).then(function (data) { refused(res, data); });
      return firstRecords(res, CELLS + 2).then(function (records) {
        var rows = records.slice(1).filter(function (r) { return r[0] !== ''; }).slice(0, CELLS);
        var t = table(['Linha', 'Coluna', 'Valor', 'Motivo'], rows.map(function (r) { return [r[0], r[1], unguard(r[2] || ''), r[3]]; }));
        t.dataset.field = 'cells'; box.appendChild(t);
      });
    }).catch(fail);
  }
  function download(url, name) {
    call(url).then(function (res) {
      if (!res.ok) return res.json().catch(function () { return {}; }).then(function (data) { refused(res, data); });
      return res.blob().then(function (blob) {
        var a = document.createElement('a'); a.href = URL.createObjectURL(blob); a.download = name;
        document.body.appendChild(a); a.click(); a.remove();
        setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
      });
    }).catch(fail);
  }
  // A job keeps its diagnosis (erro.diagnostico, the first rows); an import of /v1/process
  // keeps only the difference, so its file is diagnosed again, here, by
  // /v1/diagnose-unbalanced, when the person picks it.
  function unbalanced(box, full) {
    if (full.erro.diagnostico) {
      var kept = el('div'); kept.dataset.field = 'diagnosis';
      box.appendChild(kept); diagnosis(kept, full.erro.diagnostico, full);
      return;
    }
    var form = el('form'); form.dataset.action = 'diagnose';
    var label = el('label', 'Para ver os grupos desbalanceados e suas linhas, escolha o mesmo arquivo (' + full.nome_arquivo + '):');
    var input = el('input'); input.type = 'file'; input.name = 'file'; input.accept = '.xlsx,.xls'; input.required = true;
    label.appendChild(input); form.appendChild(label);
    var go = el('button', 'Diagnosticar'); go.type = 'submit'; form.appendChild(go);
    var out = el('div'); out.dataset.field = 'diagnosis';
    box.appendChild(form); box.appendChild(out);
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var file = input.files[0]; if (!file) return;
      var body = new FormData(); body.append('file', file, file.name);
      out.textContent = 'Diagnosticando…';
      getJson('/v1/diagnose-unbalanced', { method: 'POST', body: body }).then(function (d) { diagnosis(out, d, full); }).catch(function (err) { out.textContent = ''; fail(err); });
    });
  }
  function diagnosis(out, d, full) {
    out.textContent = '';
    if (d.sha256 !== full.sha256) out.appendChild(el('p', 'Atenção: este não é o arquivo desta importação (o conteúdo difere).', 'error'));
    var s = d.resumo;
    out.appendChild(el('p', count(s.quantidade_grupos_desbalanceados) + ' grupo(s) desbalanceado(s) · débito ' + money(s.total_debito) + ' · crédito ' + money(s.total_credito) + ' · diferença ' + money(s.diferenca)));
    d.grupos_desbalanceados.forEach(function (g) {
      var div = el('div', null, 'group'); div.dataset.group = g.id_movim_finan;
      div.appendChild(el('p', 'Grupo ' + g.id_movim_finan + ' · ' + (g.data || '') + ' · débito ' + money(g.total_debito) + ' · crédito ' + money(g.total_credito) + ' · diferença ' + money(g.diferenca)));
      div.appendChild(table(['Linha', 'Tipo', 'Conta', 'Débito', 'Crédito', 'Histórico'], g.linhas.map(function (l) {
        return [l.linha_origem, l.tipo_origem, l.id_conta, money(l.valor_debito), money(l.valor_credito), l.historico_origem];
      })));
      out.appendChild(div);
    });
    if (d.grupos_omitidos > 0) out.appendChild(el('p', 'Mais ' + count(d.grupos_omitidos) + ' grupo(s) não listado(s).', 'small'));
    if (d.linhas_omitidas > 0) out.appendChild(el('p', 'Mais ' + count(d.linhas_omitidas) + ' linha(s) de grupos desbalanceados não listada(s); razao diagnose ARQUIVO lista todas.', 'small'));
  }
  function overlap(box, s) {
    box.appendChild(el('p', count(s.movimentos_sobrepostos) + ' movimento(s) do arquivo já estão ativos nestas importações da empresa ' + s.codigo_dominio + ' (REIMPORTAR as substitui):'));
    var t = table(['Importação', 'Arquivo', 'Em', 'Linhas', 'Sobrepostos', 'Fora do arquivo'], s.importacoes.map(function (o) {
      return [o.importacao_id, o.nome_arquivo, new Date(o.criado_em).toLocaleString('pt-BR'), count(o.total_linhas), count(o.movimentos_sobrepostos), count(o.movimentos_fora_do_arquivo)];
    }));
    t.dataset.field = 'overlap'; box.appendChild(t);
  }

  function query() {
    var q = '?limit=' + LIMIT;
    var company = $('filter-company').value.trim(); var status = $('filter-status').value;
    if (company) q += '&codigo_dominio=' + encodeURIComponent(company);
    if (status) q += '&status=' + encodeURIComponent(status);
    return q;
  }
  function refresh() {
    return getJson('/v1/imports' + query()).then(function (data) {
      showApp(true);
      var list = $('imports'); var seen = {};
      data.importacoes.forEach(function (imp, i) {
        var c = update(imp); seen[imp.importacao_id] = true;
        if (list.children[i] !== c.article) list.insertBefore(c.article, list.children[i] || null);
      });
      Object.keys(cards).forEach(function (id) { if (!seen[id]) { cards[id].article.remove(); delete cards[id]; } });
      $('empty').hidden = data.importacoes.length > 0;
      $('empty').textContent = $('filter-company').value.trim() || $('filter-status').value ? 'Nenhuma importação com estes filtros.' : 'Nenhuma importação ainda.';
    });
  }
  function tick() {
    timer = setTimeout(function () { refresh().then(tick, function (err) { fail(err); if (key()) tick(); }); }, 1000);
  }
  function start() { stop(); return refresh().then(function () { tick(); }); }
  function stop() { if (timer !== null) clearTimeout(timer); timer = null; }
  function fail(err) { say(err.message, false); }
  document.addEventListener('DOMContentLoaded', function () {
    $('key-form').addEventListener('submit', function (event) {
      event.preventDefault();
      sessionStorage.setItem(KEY, $('key').value.trim()); $('key').value = '';
      start().then(function () { say('', true); }).catch(fail);
    });
    $('filter').addEventListener('submit', function (event) {
      event.preventDefault();
      start().then(function () { say('', true); }).catch(fail);
    });
    $('logout').addEventListener('click', function () {
      sessionStorage.removeItem(KEY); stop(); cards = {}; $('imports').textContent = ''; showApp(false); say('', true);
    });
    if (key()) start().catch(fail); else showApp(false);
  });
})();
`
