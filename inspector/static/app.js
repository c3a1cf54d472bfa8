// memgate inspector: a static page over the public /v1 API.
//
// Rules this file keeps:
//   - Memory content, reasons, ids and every other value from the server are
//     put in the page as text (text nodes, textContent, input values), never
//     parsed as HTML: no API that parses a string as markup or code is used
//     (inspector_test.go lists them and fails if one appears).
//   - Nothing from a memory becomes a URL: links are built here from
//     encoded ids, so a link or image inside content is never followed or
//     loaded (and the Content-Security-Policy would refuse it anyway).
//   - The API key lives in this tab's session storage and goes out only as
//     the bearer header of requests to this origin; no cookie is used.

const KEY_STORAGE = 'memgate.key';
const PAGE_SIZES = [25, 50, 100, 200];
const KINDS = ['message', 'fact', 'preference', 'task', 'summary'];
const SOURCES = ['user', 'assistant', 'tool', 'verified_tool', 'system', 'import'];
const STATUSES = ['active', 'pending', 'revoked', 'superseded', 'expired'];

const state = {
  key: null,
  me: null, // GET /v1/whoami
  principals: null, // cached principal list of a tenant-wide key
  keys: null, // Map of the tenant's keys by id, when this key may list them
  pages: new Map(), // list filter -> cursors of the pages before this one
  chat: null, // the playground's conversation in this tab: {principal, agent, conversation, turns}
};

// ---------------------------------------------------------------- DOM

// h builds an element. Children that are not nodes become text nodes.
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  put(el, children);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, props, ...children) {
  const el = document.createElementNS(SVG, tag);
  setProps(el, props);
  put(el, children);
  return el;
}

function setProps(el, props) {
  if (!props) return;
  for (const [k, v] of Object.entries(props)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', v);
    else if (k === 'value') el.value = v;
    else if (['checked', 'selected', 'disabled', 'hidden', 'required'].includes(k)) el[k] = true;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function put(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

const $ = (sel) => document.querySelector(sel);

function toast(msg, kind) {
  const t = $('#toast');
  t.textContent = msg;
  t.className = 'toast ' + (kind || 'ok');
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 5000);
}

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field || '';
  }
  describe() {
    return (this.field ? this.field + ': ' : '') + this.message + ' (' + this.code + ')';
  }
}

async function api(method, path, opts = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(opts.query || {})) {
    if (v === null || v === undefined || v === '') continue;
    for (const x of Array.isArray(v) ? v : [v]) url.searchParams.append(k, x);
  }
  const headers = { ...(opts.headers || {}), Authorization: 'Bearer ' + state.key, Accept: 'application/json' };
  const init = { method, headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' };
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  let resp;
  try {
    resp = await fetch(url, init);
  } catch {
    throw new ApiError(0, 'unavailable', 'the memgate server cannot be reached');
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!resp.ok) {
    const e = (data && data.error) || {};
    const err = new ApiError(resp.status, e.code || 'http_' + resp.status, e.message || resp.statusText || 'request failed', e.field);
    if (resp.status === 401 && path !== '/v1/whoami') {
      signOut('The server refused the API key (unknown or revoked). Sign in again.');
    }
    throw err;
  }
  return data;
}

const can = (op) => !!state.me && state.me.operations.includes(op);

// serves reports whether the server offers a capability whoami names in
// its server object (chat: it was started with a model, serve --llm).
const serves = (what) => !!state.me && !!state.me.server && state.me.server[what] === true;

// ---------------------------------------------------------------- formatting

function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return d.toISOString().slice(0, 16).replace('T', ' ');
}

function timeEl(iso) {
  return iso ? h('time', { datetime: iso, title: iso }, fmtTime(iso)) : '—';
}

function fmtSpan(ms) {
  const abs = Math.abs(ms);
  const units = [['d', 86400000], ['h', 3600000], ['min', 60000]];
  for (const [u, n] of units) {
    if (abs >= n) return Math.floor(abs / n) + ' ' + u;
  }
  return Math.max(1, Math.floor(abs / 1000)) + ' s';
}

// expiry describes when a memory expires: "in 29 d", "expired 2 h ago",
// or "never".
function expiry(m) {
  if (!m.expires_at) return h('span', { class: 'muted' }, 'never');
  const left = new Date(m.expires_at) - Date.now();
  return h('span', { title: m.expires_at, class: left <= 0 ? 'expired' : '' },
    fmtTime(m.expires_at), h('br'),
    h('small', {}, left <= 0 ? 'expired ' + fmtSpan(left) + ' ago' : 'in ' + fmtSpan(left)));
}

function statusOf(m) {
  return m.expired && m.status === 'active' ? 'expired' : m.status;
}

// GATE_WORDS says the write gate's reason codes in words.
const GATE_WORDS = {
  source_kind_requires_approval: 'waits for approval: this source may not store this kind on its own',
  source_kind_not_allowed: 'this source may not store this kind',
  contains_secret: 'looks like it holds a secret',
  instruction_like: 'reads like an instruction to a model',
};

// gateCode says a write-gate code (source_kind_requires_approval,
// instruction_like:role_tag) in words, with the code itself kept in
// data-code and as the tooltip for a reviewer who searches for it. A
// status reason that is no code (a revoke's "no longer true") is shown as
// it was given.
function gateCode(code) {
  code = String(code);
  const [reason, ...rest] = code.split(':');
  const detail = rest.join(':');
  if (!(reason in GATE_WORDS)) {
    return /^[a-z]+(_[a-z0-9]+)+(:[a-z0-9_.-]+)?$/.test(code)
      ? h('span', { class: 'gate-code', 'data-code': code, title: code }, code.replace(/[_:]/g, ' ').replace(/\s+/g, ' '))
      : h('span', { class: 'status-reason' }, code);
  }
  const words = GATE_WORDS[reason] + (detail ? ` (${detail.replace(/[_-]+/g, ' ')})` : '');
  return h('span', { class: 'gate-code', 'data-code': code, title: code }, words);
}

function gateCodes(codes) {
  return codes.map((c, i) => (i ? [', ', gateCode(c)] : gateCode(c)));
}

function badge(status) {
  return h('span', { class: 'badge st-' + status }, status);
}

const num = (x, d = 3) => (typeof x === 'number' ? x.toFixed(d) : '—');

function bar(v) {
  const pct = Math.max(0, Math.min(1, v || 0)) * 100;
  return h('span', { class: 'bar', title: num(v) },
    h('span', { class: 'fill', 'data-w': pct.toFixed(0) }), num(v));
}

// Widths are set through the CSSOM (allowed by the style-src policy,
// unlike inline style attributes).
function sizeBars(root) {
  for (const f of root.querySelectorAll('.fill[data-w]')) f.style.width = f.dataset.w + '%';
}

function memoryHref(m) {
  const q = new URLSearchParams({ principal: m.principal });
  return '#/memory/' + encodeURIComponent(m.id) + '?' + q;
}

// scrolls puts a wide table in a box of its own that scrolls sideways on a
// narrow screen, so the page itself never does.
function scrolls(table) {
  return h('div', { class: 'table-wrap' }, table);
}

function errorBox(err) {
  const msg = err instanceof ApiError ? err.describe() : String(err && err.message ? err.message : err);
  return h('p', { class: 'error', role: 'alert' }, msg);
}

// ---------------------------------------------------------------- routing

function parseHash() {
  const raw = location.hash.replace(/^#/, '');
  const i = raw.indexOf('?');
  const path = i < 0 ? raw : raw.slice(0, i);
  const params = new URLSearchParams(i < 0 ? '' : raw.slice(i + 1));
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params };
}

function go(path, params) {
  const clean = new URLSearchParams();
  for (const [k, v] of params ? params.entries() : []) if (v !== '') clean.append(k, v);
  const target = '#' + path + (clean.toString() ? '?' + clean : '');
  if (location.hash === target) route();
  else location.hash = target;
}

// The views: each with the operations it needs (any one of them) and, in
// why, what else it takes, said as the reason it is missing. A tab is shown
// only to a key that may use its view, and the home view is the first tab
// the key may use: an agent key, which may not read counts or the audit
// log, starts at its memories.
const VIEWS = {
  overview: { render: viewOverview, ops: ['stats', 'audit'], title: 'Overview' },
  memories: { render: viewMemories, ops: ['list'], title: 'Memories' },
  memory: { render: viewMemory, ops: ['get'], title: 'Memory' },
  recall: {
    render: viewRecall, ops: ['recall'], title: 'Recall preview',
    why: () => (mayPreview() ? '' : `This key's role (${state.me.role}) may not preview a recall: its recalls reach a prompt, and are recorded as recalls.`),
  },
  playground: {
    render: viewPlayground, ops: ['chat'], title: 'Playground',
    why: () => (serves('chat') ? '' : 'This server has no chat model: the playground needs the server started with one (memgate serve --llm).' +
      (mayPreview() ? ' The recall preview shows what an agent would be given.' : '')),
  },
};
const TABS = ['overview', 'memories', 'recall', 'playground'];

// mayPreview reports whether the key may mark a recall as a preview, which
// keeps it out of the memories' recall history: people and admins may, an
// agent, whose recalls reach prompts, may not (the server refuses it). The
// grant declares it as may_preview where the server says so; until then
// the role decides, as the server's rule does (auth.MayPreview).
function mayPreview() {
  if (typeof state.me.may_preview === 'boolean') return state.me.may_preview;
  return state.me.role === 'admin' || state.me.role === 'user';
}

// unavailable says why the key cannot use view name, or '' when it can.
function unavailable(name) {
  const v = VIEWS[name];
  if (!v.ops.some(can)) return `This key's role (${state.me.role}) may not use the ${v.title.toLowerCase()}.`;
  return v.why ? v.why() : '';
}

function home() {
  return TABS.find((name) => !unavailable(name)) || 'memories';
}

let routeSeq = 0;

async function route() {
  const seq = ++routeSeq;
  const current = () => seq === routeSeq;
  const main = $('#main');
  if (!state.key) {
    showChrome(false);
    main.replaceChildren(viewSignIn());
    document.documentElement.dataset.renders = String(Number(document.documentElement.dataset.renders || 0) + 1);
    return;
  }
  if (!state.me) {
    try {
      state.me = await api('GET', '/v1/whoami');
    } catch (err) {
      if (!current()) return;
      const msg = err.status === 401 ? 'The server refused this API key (unknown or revoked).' : (err.describe ? err.describe() : String(err));
      signOut(msg);
      return;
    }
    if (!current()) return;
  }
  showChrome(true);
  const { parts, params } = parseHash();
  let name = parts[0] || home();
  if (name === 'signin') name = home();
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.view === (name === 'memory' ? 'memories' : name)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = Object.hasOwn(VIEWS, name) ? VIEWS[name] : null;
  const el = h('section', { class: 'view', 'data-view': name, 'aria-busy': 'true' }, h('p', { class: 'loading' }, 'Loading…'));
  main.replaceChildren(el);
  const homeLink = () => h('a', { href: '#/' }, 'Go to ' + VIEWS[home()].title + '.');
  const why = view ? unavailable(name) : '';
  if (!view) {
    el.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'No such page. ', homeLink()));
  } else if (why) {
    // An address the key may not use says why, and asks the API nothing.
    el.replaceChildren(h('h1', {}, view.title), h('p', { class: 'notice', id: 'unavailable' }, why, ' ', homeLink()));
  } else {
    try {
      const out = await view.render(params, parts, current);
      if (!current()) return;
      el.replaceChildren(...out);
      sizeBars(el);
    } catch (err) {
      if (!current()) return;
      el.replaceChildren(h('h1', {}, 'Something went wrong'), errorBox(err));
    }
  }
  el.removeAttribute('aria-busy');
  el.setAttribute('data-ready', '1');
  // Finished renders, counted: lets a test or a script wait for the view
  // a navigation asked for rather than the one before it.
  document.documentElement.dataset.renders = String(Number(document.documentElement.dataset.renders || 0) + 1);
}

// showChrome shows the navigation, who is signed in and the server's
// version to a signed-in person, and clears them otherwise: nothing of a
// key that signed out stays in the page.
function showChrome(signedIn) {
  const me = signedIn ? state.me : null;
  $('#nav').hidden = !me;
  $('#who').hidden = !me;
  $('#foot').hidden = !me;
  for (const a of document.querySelectorAll('#nav a')) a.hidden = !me || !!unavailable(a.dataset.view);
  const who = $('#who-text');
  const version = $('#version');
  if (!me) {
    who.textContent = '';
    who.removeAttribute('title');
    version.textContent = '';
    version.removeAttribute('title');
    return;
  }
  const parts = ['tenant ' + me.tenant, me.role];
  if (me.principal) parts.push('principal ' + me.principal);
  if (me.agent) parts.push('agent ' + me.agent);
  who.textContent = parts.join(' · ');
  who.title = 'key ' + me.key_id + (me.name ? ' (' + me.name + ')' : '');
  const srv = me.server || {};
  version.textContent = srv.version ? 'memgate ' + srv.version : '';
  if (srv.revision) version.title = 'revision ' + srv.revision;
  else version.removeAttribute('title');
}

function signOut(message) {
  state.key = null;
  state.me = null;
  state.principals = null;
  state.keys = null;
  state.pages.clear();
  state.chat = null;
  sessionStorage.removeItem(KEY_STORAGE);
  signOut.message = message || '';
  if (location.hash !== '#/signin') location.hash = '#/signin';
  else route();
}

// ---------------------------------------------------------------- sign in

function viewSignIn() {
  const input = h('input', { id: 'key', type: 'password', name: 'key', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'mgk_…' });
  const msg = h('p', { id: 'signin-error', class: 'error', role: 'alert', hidden: !signOut.message }, signOut.message || '');
  const form = h('form', { id: 'signin', class: 'card narrow', onsubmit: async (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    state.key = key;
    state.me = null;
    try {
      state.me = await api('GET', '/v1/whoami');
    } catch (err) {
      state.key = null;
      msg.textContent = err.status === 401 ? 'The server refused this API key (unknown or revoked).' : err.describe ? err.describe() : String(err);
      msg.hidden = false;
      return;
    }
    sessionStorage.setItem(KEY_STORAGE, key);
    signOut.message = '';
    go('/');
  } },
  h('h1', {}, 'Sign in'),
  h('p', {}, 'Paste a memgate API key. What you see follows the key: a user key shows one person\'s memories, an admin key its whole tenant. The key stays in this browser tab only (session storage) and is sent to this server alone.'),
  h('label', { for: 'key' }, 'API key'), input,
  msg,
  h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  setTimeout(() => input.focus(), 0);
  return h('section', { class: 'view', 'data-view': 'signin', 'data-ready': '1' }, form);
}

// ---------------------------------------------------------------- principals

// principalOf is the principal a view works on: the key's own when the key
// is bound to one, else the one named in the page's address ('' for "all",
// which only a tenant-wide key may use).
function principalOf(params) {
  return state.me.principal || params.get('principal') || '';
}

async function principals() {
  if (!state.me.tenant_wide || !can('stats')) return null;
  if (!state.principals) {
    const st = await api('GET', '/v1/stats');
    state.principals = Object.keys(st.by_principal || {}).sort();
  }
  return state.principals;
}

// principalPicker lets an unbound key choose whose memories to see.
async function principalPicker(params, onPick, allowAll) {
  if (state.me.principal) {
    return h('span', { class: 'fixed-principal' }, 'Principal ', h('strong', {}, state.me.principal));
  }
  const cur = params.get('principal') || '';
  const list = await principals();
  if (list) {
    const sel = h('select', { id: 'principal', name: 'principal', onchange: () => onPick(sel.value) },
      allowAll ? h('option', { value: '', selected: cur === '' }, 'All principals') : h('option', { value: '', selected: cur === '' }, 'Choose…'),
      list.map((p) => h('option', { value: p, selected: p === cur }, p)));
    if (cur && !list.includes(cur)) sel.append(h('option', { value: cur, selected: true }, cur));
    return h('label', { class: 'inline' }, 'Principal ', sel);
  }
  const input = h('input', { id: 'principal', name: 'principal', value: cur, placeholder: 'principal id', spellcheck: 'false' });
  input.addEventListener('change', () => onPick(input.value.trim()));
  return h('label', { class: 'inline' }, 'Principal ', input);
}

// ---------------------------------------------------------------- overview

async function viewOverview(params) {
  const p = principalOf(params);
  const out = [h('h1', {}, 'Overview')];
  const pick = await principalPicker(params, (v) => go('/overview', new URLSearchParams({ principal: v })), true);
  out.push(h('div', { class: 'toolbar' }, pick));

  if (!p && !state.me.tenant_wide) {
    out.push(h('p', { class: 'notice' }, 'Name a principal to see what is remembered about them.'));
    return out;
  }
  if (can('stats')) {
    const st = await api('GET', '/v1/stats', { query: { principal: p } });
    const by = st.by_status || {};
    const listHref = (status) => {
      const q = new URLSearchParams();
      if (p) q.set('principal', p);
      if (status) q.set('status', status);
      return '#/memories' + (q.toString() ? '?' + q : '');
    };
    out.push(h('div', { class: 'cards', id: 'counts' },
      card('Memories', st.total, listHref('')),
      card('Active', by.active || 0, listHref('active')),
      card('Pending approval', st.pending, listHref('pending'), st.pending > 0 ? 'attention' : ''),
      card('Revoked', by.revoked || 0, listHref('revoked')),
      card('Superseded', by.superseded || 0, listHref('superseded'))));
    out.push(kindTable(st));
    if (!p && st.by_principal && Object.keys(st.by_principal).length) {
      out.push(h('h2', {}, 'Principals'), principalTable(st));
    }
  } else {
    out.push(h('p', { class: 'notice' }, 'This key\'s role (' + state.me.role + ') may not read counts. Use Memories to browse.'));
  }
  if (can('audit')) out.push(await recallChart(p, params));
  if (p && can('forget')) out.push(h('h2', {}, 'Forget'), forgetBlock(p));
  return out;
}

function card(label, n, href, cls) {
  return h('a', { class: 'card stat ' + (cls || ''), href, 'data-stat': label },
    h('span', { class: 'n' }, Number(n || 0).toLocaleString('en')), h('span', { class: 'label' }, label));
}

function kindTable(st) {
  const cells = {};
  const statuses = new Set();
  for (const c of st.counts || []) {
    cells[c.kind] = cells[c.kind] || {};
    cells[c.kind][c.status] = (cells[c.kind][c.status] || 0) + c.n;
    statuses.add(c.status);
  }
  const cols = STATUSES.filter((x) => statuses.has(x)).concat([...statuses].filter((x) => !STATUSES.includes(x)));
  const kinds = Object.keys(cells).sort((a, b) => KINDS.indexOf(a) - KINDS.indexOf(b));
  if (!kinds.length) return h('p', { class: 'empty' }, 'Nothing is remembered here.');
  return scrolls(h('table', { class: 'grid', id: 'by-kind' },
    h('caption', {}, 'By kind and status'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'kind'), cols.map((c) => h('th', { scope: 'col', class: 'num' }, c)), h('th', { scope: 'col', class: 'num' }, 'total'))),
    h('tbody', {}, kinds.map((k) => h('tr', {},
      h('th', { scope: 'row' }, k),
      cols.map((c) => h('td', { class: 'num' }, (cells[k][c] || 0).toLocaleString('en'))),
      h('td', { class: 'num' }, Object.values(cells[k]).reduce((a, b) => a + b, 0).toLocaleString('en')))))));
}

function principalTable(st) {
  const pend = {};
  for (const c of st.counts || []) if (c.status === 'pending') pend[c.principal] = (pend[c.principal] || 0) + c.n;
  const rows = Object.entries(st.by_principal).sort((a, b) => b[1] - a[1]);
  return h('table', { class: 'grid', id: 'principals' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'principal'), h('th', { scope: 'col', class: 'num' }, 'memories'), h('th', { scope: 'col', class: 'num' }, 'pending'))),
    h('tbody', {}, rows.map(([p, n]) => h('tr', {},
      h('td', {}, h('a', { href: '#/memories?' + new URLSearchParams({ principal: p }) }, p)),
      h('td', { class: 'num' }, n.toLocaleString('en')),
      h('td', { class: 'num' }, (pend[p] || 0).toLocaleString('en'))))));
}

async function recallChart(p, params) {
  const range = params.get('range') === '48h' ? '48h' : '14d';
  const bucket = range === '48h' ? '1h' : '1d';
  const now = new Date();
  const step = bucket === '1h' ? 3600e3 : 86400e3;
  const end = new Date(Math.ceil(now.getTime() / step) * step);
  const from = new Date(end.getTime() - (range === '48h' ? 48 : 14) * step);
  const hist = await api('GET', '/v1/audit/histogram', { query: { principal: p, action: 'recall', bucket, from: from.toISOString(), to: end.toISOString() } });
  const buckets = hist.buckets || [];
  const total = buckets.reduce((a, b) => a + b.count, 0);
  const max = Math.max(1, ...buckets.map((b) => b.count));
  // Drawn at the width it is shown at (it scales with the window after).
  const main = document.querySelector('#main');
  const W = Math.round(Math.max(320, Math.min(1600, (main ? main.clientWidth : 1000) - 82))), H = 140, pad = 24;
  const bw = (W - pad) / Math.max(1, buckets.length);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H + 20}`, class: 'chart', role: 'img', 'aria-label': `Recalls per ${bucket === '1h' ? 'hour' : 'day'}: ${total} in total` },
    s('line', { x1: pad, y1: H, x2: W, y2: H, class: 'axis' }),
    s('text', { x: 0, y: 12, class: 'tick' }, String(max)),
    s('text', { x: 0, y: H, class: 'tick' }, '0'),
    buckets.map((b, i) => {
      const bh = (b.count / max) * (H - 16);
      return s('rect', { x: pad + i * bw + 1, y: H - bh, width: Math.max(1, bw - 2), height: bh, class: 'barc', 'data-count': b.count },
        s('title', {}, `${fmtTime(b.start)}: ${b.count} recall${b.count === 1 ? '' : 's'}`));
    }),
    buckets.length ? s('text', { x: pad, y: H + 16, class: 'tick' }, fmtTime(buckets[0].start).slice(0, bucket === '1h' ? 16 : 10)) : null,
    buckets.length ? s('text', { x: W, y: H + 16, class: 'tick end' }, fmtTime(buckets[buckets.length - 1].start).slice(0, bucket === '1h' ? 16 : 10)) : null);
  const link = (r, label) => {
    const q = new URLSearchParams(params);
    q.set('range', r);
    return r === range ? h('strong', {}, label) : h('a', { href: '#/overview?' + q }, label);
  };
  return h('div', { class: 'chart-box', id: 'recall-chart', 'data-total': total },
    h('h2', {}, 'Recalls over time'),
    h('p', { class: 'muted' }, `${total.toLocaleString('en')} recall${total === 1 ? '' : 's'} in the last ${range === '48h' ? '48 hours' : '14 days'} · `, link('14d', '14 days'), ' · ', link('48h', '48 hours')),
    svg);
}

// ---------------------------------------------------------------- forget

function forgetBlock(p) {
  return h('div', { class: 'card danger-zone' },
    h('p', {}, 'Erase every memory of ', h('strong', {}, p), ' in this tenant — active, pending, revoked and superseded, in every agent and conversation — with their vectors and feedback. The audit log keeps ids and counts, never content.'),
    h('button', { type: 'button', class: 'danger', id: 'forget', onclick: () => forgetPrincipal(p) }, 'Forget this person…'));
}

async function forgetPrincipal(p) {
  let n;
  try {
    const st = await api('GET', '/v1/stats', { query: { principal: p } });
    n = st.total;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 403) throw err;
    n = null; // the role may not count: the dialog says so
  }
  const count = n === null ? 'all memories' : `${n.toLocaleString('en')} memor${n === 1 ? 'y' : 'ies'}`;
  const ok = await confirmDialog({
    title: `Forget ${p}?`,
    body: `This erases ${count} of ${p} for good. It cannot be undone.`,
    typed: p,
    action: n === null ? 'Forget' : `Forget ${n.toLocaleString('en')} memor${n === 1 ? 'y' : 'ies'}`,
  });
  if (!ok) return;
  try {
    const rc = await api('POST', '/v1/forget', { body: { principal: p } });
    state.principals = null;
    state.pages.clear();
    toast(`Forgot ${rc.forgotten} memor${rc.forgotten === 1 ? 'y' : 'ies'} of ${rc.principal}.`);
    // The view stays, without the principal that no longer exists: left
    // in the address, the pickers would offer it again.
    const { parts, params } = parseHash();
    params.delete('principal');
    params.delete('cursor');
    go('/' + parts.map(encodeURIComponent).join('/'), params);
  } catch (err) {
    toast(err.describe ? err.describe() : String(err), 'bad');
  }
}

// confirmDialog asks before a destructive action; with typed set, the
// person must type it (a principal id) to enable the button.
function confirmDialog({ title, body, typed, action }) {
  const dlg = $('#confirm');
  $('#confirm-title').textContent = title;
  $('#confirm-body').textContent = body;
  const ok = $('#confirm-ok');
  ok.textContent = action;
  const input = $('#confirm-typed');
  const label = $('#confirm-typed-label');
  input.value = '';
  label.hidden = !typed;
  $('#confirm-typed-prompt').textContent = typed ? `Type ${typed} to confirm: ` : '';
  ok.disabled = !!typed;
  input.oninput = () => { ok.disabled = input.value !== typed; };
  return new Promise((resolve) => {
    const done = (v) => {
      dlg.close();
      $('#confirm-form').onsubmit = null;
      $('#confirm-cancel').onclick = null;
      dlg.oncancel = null;
      resolve(v);
    };
    $('#confirm-form').onsubmit = (ev) => {
      ev.preventDefault();
      if (!ok.disabled) done(true);
    };
    $('#confirm-cancel').onclick = () => done(false);
    dlg.oncancel = (ev) => { ev.preventDefault(); done(false); };
    dlg.showModal();
    (typed ? input : ok).focus();
  });
}

// ---------------------------------------------------------------- memories

const LIST_FILTERS = ['principal', 'agent', 'conversation', 'kind', 'source', 'status', 'q', 'limit'];

function listSignature(params) {
  return LIST_FILTERS.map((k) => k + '=' + (params.get(k) || '')).join('&');
}

async function viewMemories(params) {
  const p = principalOf(params);
  const out = [h('h1', {}, 'Memories')];
  out.push(await filterForm(params));
  if (!p && !state.me.tenant_wide) {
    out.push(h('p', { class: 'notice' }, 'Name a principal to see what is remembered about them.'));
    return out;
  }
  const limit = PAGE_SIZES.includes(Number(params.get('limit'))) ? Number(params.get('limit')) : 50;
  const query = {
    principal: p, agent: params.get('agent'), conversation: params.get('conversation'),
    kind: params.get('kind'), source: params.get('source'), status: params.get('status'),
    q: params.get('q'), limit, cursor: params.get('cursor'),
  };
  // The stats count memories by kind and status (expiry judged as the list
  // judges it) in a scope of principal, agent and conversation: a list
  // filtered on those alone is counted before it is paged through. Source
  // and text are not counted; with them the total is known on the last
  // page only.
  const countable = can('stats') && !query.source && !query.q;
  const [page, counts] = await Promise.all([
    api('GET', '/v1/memories', { query }),
    countable ? api('GET', '/v1/stats', { query: { principal: p, agent: query.agent, conversation: query.conversation } }).then((st) => st.counts || [], () => null) : null,
  ]);
  const sig = listSignature(params);
  const before = state.pages.get(sig) || [];
  const cursor = params.get('cursor') || '';
  // Keep the stack consistent with the page shown (a reload or a pasted
  // address starts a fresh one).
  while (before.length && before[before.length - 1] === cursor) before.pop();
  const n = page.memories.length;
  out.push(h('p', { class: 'muted', id: 'list-summary' }, listSummary({
    n, cursor, next: !!page.next_cursor, counts,
    // Where this page starts is known when it was reached from the first.
    first: !cursor || before.length ? before.length * limit + 1 : null,
    filtered: ['agent', 'conversation', 'kind', 'source', 'status', 'q'].some((k) => query[k]),
    kind: query.kind, status: query.status,
  })));
  out.push(memoryTable(page.memories, !p));
  const nav = h('div', { class: 'pager' });
  if (cursor) {
    nav.append(h('button', { type: 'button', id: 'prev', onclick: () => {
      const q = new URLSearchParams(params);
      const prev = before.pop();
      state.pages.set(sig, before);
      if (prev) q.set('cursor', prev); else q.delete('cursor');
      go('/memories', q);
    } }, '← Previous'));
  }
  if (page.next_cursor) {
    nav.append(h('button', { type: 'button', id: 'next', onclick: () => {
      state.pages.set(sig, before.concat([cursor]));
      const q = new URLSearchParams(params);
      q.set('cursor', page.next_cursor);
      go('/memories', q);
    } }, 'Next →'));
  }
  out.push(nav);
  if (p && can('forget')) out.push(h('h2', {}, 'Forget'), forgetBlock(p));
  return out;
}

// listSummary says which memories a page of the list shows and, when it
// is known, how many the filter matches in all: never a count that is not
// of the filtered list.
function listSummary({ n, cursor, next, counts, first, filtered, kind, status }) {
  if (n === 0) return cursor ? 'No more memories.' : filtered ? 'No memory matches.' : 'Nothing is remembered here.';
  const memories = (x) => `${x.toLocaleString('en')} memor${x === 1 ? 'y' : 'ies'}`;
  if (first === null) return `Showing ${memories(n)} of a later page.`;
  let total = null;
  if (counts) {
    total = counts.filter((c) => (!kind || c.kind === kind) && (!status || c.status === status)).reduce((a, c) => a + c.n, 0);
  } else if (!next) {
    total = first + n - 1; // the last page: everything is counted
  }
  const range = `Showing ${first.toLocaleString('en')}–${(first + n - 1).toLocaleString('en')}`;
  if (total === null) return `${range} matching memories; more on the next page.`;
  return `${range} of ${memories(total)} ${filtered ? 'matching the filters' : 'in this scope'}`;
}

async function filterForm(params) {
  const field = (name, label, el) => h('label', { class: 'field' }, h('span', {}, label), el);
  const select = (name, options, labelAll) => h('select', { name, id: 'f-' + name },
    h('option', { value: '' }, labelAll),
    options.map((o) => h('option', { value: o, selected: params.get(name) === o }, o)));
  const text = (name, placeholder) => h('input', { name, id: 'f-' + name, value: params.get(name) || '', placeholder, spellcheck: 'false' });
  const form = h('form', { class: 'filters', id: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const el of form.elements) {
      if (el.name && el.value.trim() !== '') q.set(el.name, el.value.trim());
    }
    if (state.me.principal) q.delete('principal');
    go('/memories', q);
  } });
  let pick;
  if (state.me.principal) {
    pick = h('span', { class: 'field' }, h('span', {}, 'Principal'), h('strong', { class: 'fixed' }, state.me.principal));
  } else {
    const list = await principals();
    const cur = params.get('principal') || '';
    const el = list
      ? h('select', { name: 'principal', id: 'f-principal' },
        h('option', { value: '' }, state.me.tenant_wide ? 'All principals' : 'Choose…'),
        list.map((x) => h('option', { value: x, selected: x === cur }, x)),
        cur && !list.includes(cur) ? h('option', { value: cur, selected: true }, cur) : null)
      : text('principal', 'principal id');
    pick = field('principal', 'Principal', el);
  }
  const agent = state.me.agent
    ? h('span', { class: 'field' }, h('span', {}, 'Agent'), h('strong', { class: 'fixed' }, state.me.agent))
    : field('agent', 'Agent', text('agent', 'any'));
  put(form, [
    pick, agent,
    field('conversation', 'Conversation', text('conversation', 'any')),
    field('kind', 'Kind', select('kind', KINDS, 'any')),
    field('source', 'Source', select('source', SOURCES, 'any')),
    field('status', 'Status', select('status', STATUSES, 'any')),
    field('q', 'Text contains', h('input', { name: 'q', id: 'f-q', type: 'search', value: params.get('q') || '', placeholder: 'literal text', spellcheck: 'false' })),
    field('limit', 'Per page', h('select', { name: 'limit', id: 'f-limit' }, PAGE_SIZES.map((n) => h('option', { value: String(n), selected: String(n) === (params.get('limit') || '50') }, String(n))))),
    h('div', { class: 'field buttons' }, h('span', {}, '\u00a0'), h('button', { type: 'submit', class: 'primary', id: 'apply' }, 'Apply')),
  ]);
  return form;
}

function memoryTable(memories, showPrincipal) {
  if (!memories.length) return h('div', { id: 'memories' });
  return scrolls(h('table', { class: 'grid memories', id: 'memories' },
    h('thead', {}, h('tr', {},
      showPrincipal ? h('th', { scope: 'col' }, 'principal') : null,
      ['content', 'why remembered', 'source', 'kind', 'sensitivity', 'created (UTC)', 'expires (UTC)', 'status', ''].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, memories.map((m) => memoryRow(m, showPrincipal)))));
}

function memoryRow(m, showPrincipal) {
  const st = statusOf(m);
  const actions = h('td', { class: 'actions' },
    h('a', { class: 'open', href: memoryHref(m), 'data-id': m.id }, 'Open'));
  if (m.status === 'pending' && can('approve')) {
    actions.append(
      h('button', { type: 'button', class: 'small approve', 'data-id': m.id, onclick: (ev) => rowAction(ev, m, 'approve') }, 'Approve'),
      h('button', { type: 'button', class: 'small reject', 'data-id': m.id, onclick: (ev) => rowAction(ev, m, 'reject') }, 'Reject'));
  }
  return h('tr', { 'data-id': m.id, 'data-status': st, 'data-kind': m.kind, 'data-source': m.source, 'data-wide': showPrincipal ? '1' : '0' },
    showPrincipal ? h('td', { class: 'principal' }, m.principal) : null,
    h('td', { class: 'content' }, h('div', { class: 'clamp' }, m.content)),
    h('td', { class: 'reason' }, m.reason || h('span', { class: 'muted' }, '—')),
    h('td', {}, m.source),
    h('td', {}, m.kind),
    h('td', {}, m.sensitivity),
    h('td', { class: 'nowrap' }, timeEl(m.created_at)),
    h('td', { class: 'nowrap' }, expiry(m)),
    h('td', {}, badge(st), m.status === 'pending' && m.status_reason ? h('div', { class: 'muted small' }, gateCode(m.status_reason)) : null),
    actions);
}

async function rowAction(ev, m, action) {
  const row = ev.target.closest('tr');
  for (const b of row.querySelectorAll('button')) b.disabled = true;
  try {
    const body = action === 'reject' ? { reason: 'rejected in the inspector' } : {};
    // The version on screen is the one reviewed: a memory changed since
    // is refused (409) and stays pending.
    const updated = await api('POST', `/v1/memories/${encodeURIComponent(m.id)}/${action}`,
      { query: { principal: m.principal }, body, headers: { 'If-Match': `"${m.version}"` } });
    row.replaceWith(memoryRow(updated, row.dataset.wide === '1'));
    toast(action === 'approve' ? 'Approved: the memory is active and may be recalled.' : 'Rejected: the memory will not be recalled.');
  } catch (err) {
    for (const b of row.querySelectorAll('button')) b.disabled = false;
    toast(err.describe ? err.describe() : String(err), 'bad');
  }
}

// ---------------------------------------------------------------- one memory

async function viewMemory(params, parts) {
  const id = parts[1] || '';
  const p = principalOf(params);
  const scope = { principal: p };
  const m = await api('GET', '/v1/memories/' + encodeURIComponent(id), { query: scope });
  const [chain, , history, trail] = await Promise.all([
    supersessionChain(m),
    loadKeys(),
    can('audit') ? api('GET', '/v1/audit', { query: { principal: m.principal, memory_id: m.id, action: 'recall', limit: 100 } }) : null,
    can('audit') ? api('GET', '/v1/audit', { query: { principal: m.principal, memory_id: m.id, limit: 100 } }) : null,
  ]);
  const st = statusOf(m);
  const back = new URLSearchParams();
  if (!state.me.principal) back.set('principal', m.principal);
  const out = [
    h('p', { class: 'crumbs' }, h('a', { href: '#/memories' + (back.toString() ? '?' + back : '') }, '← Memories')),
    h('h1', {}, 'Memory ', h('code', {}, m.id), ' ', badge(st)),
    h('pre', { class: 'content-full', id: 'content' }, m.content),
  ];
  out.push(actionsBlock(m));
  const fb = m.feedback || { count: 0, mean: 0 };
  out.push(h('h2', {}, 'Receipt'), h('dl', { class: 'receipt', id: 'receipt' },
    dt('Why remembered', m.reason || '—'),
    dt('Status', m.status_reason ? [st, ' — ', gateCode(m.status_reason)] : st),
    dt('Principal', m.principal),
    dt('Agent', m.agent || 'any (principal-wide)'),
    dt('Conversation', m.conversation || 'any'),
    dt('Kind', m.kind), dt('Source', m.source), dt('Sensitivity', m.sensitivity),
    dt('Created (UTC)', timeEl(m.created_at)), dt('Updated (UTC)', timeEl(m.updated_at)),
    dt('Expires (UTC)', expiry(m)),
    dt('Valid from (UTC)', m.valid_from ? timeEl(m.valid_from) : '—'),
    dt('Valid until (UTC)', m.valid_until ? timeEl(m.valid_until) : '—'),
    dt('Version', String(m.version)),
    dt('Key', m.key ? h('code', { id: 'key' }, m.key) : '—'),
    dt('Times remembered', String(m.seen_count)),
    dt('Content SHA-256', h('code', { id: 'sha' }, m.content_sha256)),
    dt('Embedding', m.embedding ? h('span', { id: 'embedding' }, `${m.embedding.provider} · ${m.embedding.model} · ${m.embedding.dim} dimensions`) : h('span', { id: 'embedding' }, 'none (recalled by text only)')),
    dt('Write-gate flags', m.flags && m.flags.length ? gateCodes(m.flags) : 'none'),
    dt('Feedback', fb.count ? `${fb.count} report${fb.count === 1 ? '' : 's'}, mean ${num(fb.mean, 2)}` : 'none'),
    dt('Metadata', m.metadata ? h('pre', { class: 'meta' }, JSON.stringify(m.metadata, null, 2)) : '—')));
  out.push(h('h2', {}, 'Supersession chain'), chainBlock(chain, m));
  out.push(h('h2', {}, 'Recall history'));
  if (history) out.push(recallHistory(history, m));
  else out.push(h('p', { class: 'muted' }, 'This key\'s role may not read the audit log.'));
  if (trail) out.push(h('h2', {}, 'Audit trail'), auditTrail(trail, m));
  return out;
}

function dt(label, value) {
  return [h('dt', {}, label), h('dd', {}, value)];
}

// supersessionChain walks supersedes and superseded_by both ways (at most
// 20 steps each), skipping what the key may not read.
async function supersessionChain(m) {
  const older = [];
  const newer = [];
  const scope = { principal: m.principal };
  for (let cur = m, i = 0; cur.supersedes && i < 20; i++) {
    try { cur = await api('GET', '/v1/memories/' + encodeURIComponent(cur.supersedes), { query: scope }); } catch { older.unshift({ id: cur.supersedes, missing: true }); break; }
    older.unshift(cur);
  }
  for (let cur = m, i = 0; cur.superseded_by && i < 20; i++) {
    try { cur = await api('GET', '/v1/memories/' + encodeURIComponent(cur.superseded_by), { query: scope }); } catch { newer.push({ id: cur.superseded_by, missing: true }); break; }
    newer.push(cur);
  }
  return older.concat([m], newer);
}

function chainBlock(chain, m) {
  if (chain.length === 1) return h('p', { class: 'muted', id: 'chain' }, 'This memory neither supersedes nor is superseded by another.');
  return h('ol', { class: 'chain', id: 'chain' }, chain.map((c) => {
    if (c.missing) return h('li', {}, h('code', {}, c.id), ' (gone: deleted or forgotten)');
    const label = [h('code', {}, c.id), ' ', badge(statusOf(c)), ' ', h('span', { class: 'clamp1' }, c.content)];
    return h('li', { class: c.id === m.id ? 'current' : '' },
      c.id === m.id ? h('strong', {}, label, ' (this one)') : h('a', { href: memoryHref(c), 'data-chain': c.id }, label));
  }));
}

// actorLabel says who acted in an audit event: a key by its name and role
// (the id as the tooltip) when this key may list keys or it is this key,
// the sweeper and the command line in words, else the key id.
function actorLabel(actor) {
  const k = state.keys && state.keys.get(actor);
  const me = state.me && actor === state.me.key_id ? state.me : null;
  const role = k ? k.role : me ? me.role : '';
  const name = k ? k.name : me ? me.name : '';
  if (role) {
    const who = (me ? 'this key' : '') + (me && name ? ': ' : '') + (name || (me ? '' : 'unnamed key'));
    return h('span', { class: 'actor', title: actor, 'data-actor': actor }, `${who} (${role})`);
  }
  const words = { sweeper: 'the expiry sweeper', cli: 'the command line' }[actor];
  return h('span', { class: 'actor', title: actor, 'data-actor': actor }, words || actor);
}

// loadKeys reads the tenant's keys once, for actorLabel, when this key
// may list them.
async function loadKeys() {
  if (state.keys || !can('keys') || !state.me.tenant_wide) return;
  try {
    const list = await api('GET', '/v1/keys');
    state.keys = new Map((list.keys || []).map((k) => [k.id, k]));
  } catch {
    state.keys = new Map(); // the names are a courtesy: ids are shown instead
  }
}

function recallHistory(page, m) {
  const evs = page.events || [];
  if (!evs.length) return h('p', { class: 'muted', id: 'history' }, 'Never injected by a recall.');
  return scrolls(h('table', { class: 'grid', id: 'history' },
    h('caption', {}, `Injected by ${evs.length}${page.next_cursor ? '+' : ''} recall${evs.length === 1 ? '' : 's'} (newest first)`),
    h('thead', {}, h('tr', {}, ['when (UTC)', 'recall', 'agent', 'by key', 'rank', 'score'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, evs.map((ev) => {
      const i = (ev.memory_ids || []).indexOf(m.id);
      return h('tr', {},
        h('td', { class: 'nowrap' }, timeEl(ev.at)),
        h('td', {}, h('code', {}, ev.recall_id || '')),
        h('td', {}, ev.agent || '—'),
        h('td', {}, actorLabel(ev.actor)),
        h('td', { class: 'num' }, i >= 0 ? `${i + 1} of ${ev.memory_ids.length}` : '—'),
        h('td', { class: 'num score' }, i >= 0 && ev.scores ? num(ev.scores[i]) : '—'));
    }))));
}

// auditTrail lists a memory's audit events, newest first. The audit log
// keeps machine codes only, never text a caller wrote: the reason given
// for the revoke or reject that retired the memory is the memory's own
// status reason, shown beside the newest such event.
function auditTrail(page, m) {
  const evs = page.events || [];
  if (!evs.length) return h('p', { class: 'muted' }, 'No events.');
  const retired = m.status === 'revoked' && m.status_reason
    ? evs.find((ev) => ev.action === 'revoke' || ev.action === 'reject') : null;
  return scrolls(h('table', { class: 'grid', id: 'trail' },
    h('thead', {}, h('tr', {}, ['when (UTC)', 'action', 'by', 'reason'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, evs.map((ev) => h('tr', {},
      h('td', { class: 'nowrap' }, timeEl(ev.at)),
      h('td', {}, ev.action),
      h('td', {}, actorLabel(ev.actor)),
      h('td', {}, ev === retired ? gateCode(m.status_reason) : ev.reason ? gateCode(ev.reason) : ''))))));
}

function actionsBlock(m) {
  const box = h('div', { class: 'card actions-box', id: 'actions' });
  const scope = { principal: m.principal };
  const path = '/v1/memories/' + encodeURIComponent(m.id);
  const act = async (btn, method, suffix, body, done, headers) => {
    btn.disabled = true;
    try {
      const res = await api(method, path + suffix, { query: scope, body, headers });
      toast(done);
      if (method === 'DELETE') {
        state.pages.clear();
        go('/memories', state.me.principal ? null : new URLSearchParams({ principal: m.principal }));
      } else {
        route();
      }
      return res;
    } catch (err) {
      btn.disabled = false;
      toast(err.describe ? err.describe() : String(err), 'bad');
    }
  };
  if (m.status === 'pending' && can('approve')) {
    // Approve and reject the version shown (If-Match): one changed since
    // is refused and stays pending.
    const reviewed = { 'If-Match': `"${m.version}"` };
    const approve = h('button', { type: 'button', class: 'primary', id: 'approve', onclick: () => act(approve, 'POST', '/approve', {}, 'Approved: the memory is active and may be recalled.', reviewed) }, 'Approve');
    const reject = h('button', { type: 'button', id: 'reject', onclick: () => act(reject, 'POST', '/reject', { reason: 'rejected in the inspector' }, 'Rejected: it will not be recalled.', reviewed) }, 'Reject');
    box.append(h('div', { class: 'row' }, h('span', {}, 'Held back by the write gate: '), approve, reject));
  }
  if ((m.status === 'active' || m.status === 'pending') && can('revoke')) {
    const reason = h('input', { id: 'revoke-reason', placeholder: 'reason (optional)', maxlength: '500' });
    const revoke = h('button', { type: 'button', class: 'danger', id: 'revoke', onclick: () => act(revoke, 'POST', '/revoke', { reason: reason.value.trim() }, 'Revoked: it will never be recalled again.') }, 'Revoke');
    box.append(h('div', { class: 'row' }, h('label', { for: 'revoke-reason' }, 'Revoke'), reason, revoke));
  }
  if (m.status === 'active' && can('feedback')) {
    const up = h('button', { type: 'button', id: 'useful', onclick: () => act(up, 'POST', '/feedback', { value: 1 }, 'Thanks: marked useful.') }, 'Useful');
    const down = h('button', { type: 'button', id: 'not-useful', onclick: () => act(down, 'POST', '/feedback', { value: -1 }, 'Thanks: marked not useful.') }, 'Not useful');
    box.append(h('div', { class: 'row' }, h('span', {}, 'Feedback: '), up, down));
  }
  if (can('delete')) {
    const del = h('button', { type: 'button', class: 'danger', id: 'delete', onclick: async () => {
      const ok = await confirmDialog({ title: 'Delete this memory?', body: 'It is erased for good (the audit log keeps its id). Revoke instead to keep a record of it.', action: 'Delete' });
      if (ok) act(del, 'DELETE', '', undefined, 'Deleted.');
    } }, 'Delete…');
    box.append(h('div', { class: 'row' }, h('span', {}, 'Erase: '), del));
  }
  if (!box.children.length) box.append(h('p', { class: 'muted' }, 'This key may not change this memory.'));
  return box;
}

// ---------------------------------------------------------------- recall preview

async function viewRecall(params) {
  const out = [h('h1', {}, 'Recall preview'),
    h('p', { class: 'muted' }, 'See exactly what an agent would be given for a prompt — the results, their scores and what fell below the floor — before any agent runs. A preview is recorded in the audit log as a preview, not as a recall.')];
  const p = principalOf(params);
  const text = (name, placeholder) => h('input', { name, id: 'r-' + name, value: params.get(name) || '', placeholder, spellcheck: 'false' });
  const query = h('textarea', { name: 'q', id: 'r-q', rows: '3', placeholder: 'the user\'s message', required: true }, params.get('q') || '');
  let pick;
  if (state.me.principal) pick = h('span', { class: 'field' }, h('span', {}, 'Principal'), h('strong', { class: 'fixed' }, state.me.principal));
  else {
    const list = await principals();
    const el = list
      ? h('select', { name: 'principal', id: 'r-principal' }, h('option', { value: '' }, 'Choose…'), list.map((x) => h('option', { value: x, selected: x === p }, x)))
      : text('principal', 'principal id');
    pick = h('label', { class: 'field' }, h('span', {}, 'Principal'), el);
  }
  const form = h('form', { id: 'recall-form', class: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const el of form.elements) {
      if (!el.name) continue;
      if (el.type === 'checkbox') { if (el.checked) q.set(el.name, '1'); continue; }
      if (el.value.trim() !== '') q.set(el.name, el.value.trim());
    }
    go('/recall', q);
  } },
  pick,
  state.me.agent ? null : h('label', { class: 'field' }, h('span', {}, 'Agent'), text('agent', 'any')),
  h('label', { class: 'field' }, h('span', {}, 'Conversation'), text('conversation', 'any')),
  h('label', { class: 'field' }, h('span', {}, 'k'), h('input', { name: 'k', id: 'r-k', type: 'number', min: '1', max: '100', value: params.get('k') || '5' })),
  h('label', { class: 'field' }, h('span', {}, 'Floor'), h('input', { name: 'min_score', id: 'r-min', type: 'number', min: '0', max: '1', step: '0.01', value: params.get('min_score') || '', placeholder: 'default' })),
  state.me.may_include_restricted ? h('label', { class: 'field check' }, h('input', { type: 'checkbox', name: 'restricted', id: 'r-restricted', checked: params.get('restricted') === '1' }), h('span', {}, 'include restricted')) : null,
  h('label', { class: 'field wide' }, h('span', {}, 'Prompt'), query),
  h('div', { class: 'field buttons' }, h('span', {}, '\u00a0'), h('button', { type: 'submit', class: 'primary', id: 'preview' }, 'Preview')));
  out.push(form);
  const q = params.get('q');
  if (!q) return out;
  if (!p) {
    out.push(h('p', { class: 'error' }, 'principal: is required: recall is for one principal'));
    return out;
  }
  const body = { principal: p, query: q, preview: true, explain: true, render: true };
  if (params.get('agent')) body.agent = params.get('agent');
  if (params.get('conversation')) body.conversation = params.get('conversation');
  if (params.get('k')) body.k = Number(params.get('k'));
  if (params.get('min_score')) body.min_score = Number(params.get('min_score'));
  if (params.get('restricted') === '1') body.include_restricted = true;
  let res;
  try {
    res = await api('POST', '/v1/recall', { body });
  } catch (err) {
    out.push(errorBox(err));
    return out;
  }
  out.push(recallResult(res));
  return out;
}

function recallResult(res) {
  const ex = res.explain || {};
  const n = res.results.length;
  const box = h('div', { id: 'recall-result', 'data-recall-id': res.recall_id });
  box.append(h('p', { class: 'summary', id: 'recall-summary' },
    n ? `${n} memor${n === 1 ? 'y' : 'ies'} would be injected` : 'Nothing clears the floor: the agent would be given no memories',
    ` · ${res.below_floor} below the floor (${num(res.min_score, 2)})`,
    ex.relatedness !== undefined ? ` · best score ${num(ex.relatedness)}` : '',
    ex.took_us !== undefined ? ` · ${(ex.took_us / 1000).toFixed(2)} ms` : '',
    ex.embedder ? ` · query embedded with ${ex.embedder.model}` : ''));
  if (n) box.append(h('h2', {}, 'Would be injected'), hitTable(res.results, 'results'));
  const below = res.below_floor_results || [];
  box.append(h('h2', {}, 'Fell below the floor (not injected)'));
  let none = 'No candidate fell below the floor.';
  if (res.below_floor > 0) none = `The ${res.below_floor} candidate${res.below_floor === 1 ? '' : 's'} under the floor scored 0: nothing else relates to this prompt.`;
  box.append(below.length ? hitTable(below, 'below') : h('p', { class: 'muted', id: 'below' }, none));
  box.append(h('h2', {}, 'Context block the agent would receive'),
    res.context ? h('pre', { class: 'context', id: 'context' }, res.context) : h('p', { class: 'muted', id: 'context' }, '(empty: nothing would be injected)'));
  return box;
}

// evidenceText says in words what carried a result: each query word it
// holds and how ("medication ← penicillin (category)"), and how far its
// vector stands out in the partition. Text only: it goes in as a text node.
function evidenceText(c) {
  const parts = (c.evidence || []).map((e) => e.memory === e.query ? e.query : `${e.query} ← ${e.memory} (${e.relation})`);
  if (c.vector > 0) parts.push(`vector ${num(c.vector_excess, 1)}σ above chance`);
  return parts.join('; ') || '—';
}

function hitTable(hits, id) {
  return scrolls(h('table', { class: 'grid hits ' + id, id },
    h('thead', {}, h('tr', {}, ['#', 'score', 'text', 'vector', 'context', 'evidence', 'memory'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, hits.map((hit, i) => {
      const c = (hit.explain || {});
      const m = hit.memory;
      return h('tr', { 'data-id': m.id },
        h('td', { class: 'num' }, String(i + 1)),
        h('td', { class: 'score' }, bar(hit.score)),
        h('td', { class: 'num' }, num(c.text)),
        h('td', { class: 'num' }, c.stale_embedding ? 'stale model' : num(c.vector)),
        h('td', { class: 'num' }, num(c.context)),
        h('td', { class: 'evidence' }, evidenceText(c)),
        h('td', { class: 'content' }, h('a', { href: memoryHref(m), class: 'open', 'data-id': m.id }, h('code', {}, m.id)), ' ', m.kind, ' · ', m.source, h('div', { class: 'clamp' }, m.content)));
    }))));
}

// ---------------------------------------------------------------- playground

function newConversationID() {
  const b = new Uint8Array(6);
  crypto.getRandomValues(b);
  return 'playground-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// The playground talks to the model through POST /v1/chat: memgate recalls
// before the call and remembers the exchange after it. Beside each reply it
// shows exactly which memories were injected, with their scores.
async function viewPlayground(params) {
  const out = [h('h1', {}, 'Playground'),
    h('p', { class: 'muted' }, 'Talk to the model the server is configured with (serve --llm). Before each reply memgate recalls what matters for your message and injects it as data; after it, the exchange is remembered through the write gate. Beside each reply: the memories that were injected, with their scores.')];
  const p = principalOf(params);
  const agent = state.me.agent || params.get('agent') || '';
  if (!state.chat || state.chat.principal !== p || state.chat.agent !== agent) {
    state.chat = { principal: p, agent, conversation: params.get('conversation') || newConversationID(), turns: [] };
  }
  const chat = state.chat;
  let pick;
  if (state.me.principal) pick = h('span', { class: 'field' }, h('span', {}, 'Principal'), h('strong', { class: 'fixed' }, state.me.principal));
  else {
    const list = await principals();
    const el = list
      ? h('select', { name: 'principal', id: 'c-principal' }, h('option', { value: '' }, 'Choose…'), list.map((x) => h('option', { value: x, selected: x === p }, x)))
      : h('input', { name: 'principal', id: 'c-principal', value: p, placeholder: 'principal id', spellcheck: 'false' });
    el.addEventListener('change', () => {
      const q = new URLSearchParams(params);
      q.set('principal', el.value.trim());
      go('/playground', q);
    });
    pick = h('label', { class: 'field' }, h('span', {}, 'Principal'), el);
  }
  const message = h('textarea', { id: 'c-message', rows: '2', placeholder: 'Say something to the agent', required: true });
  const send = h('button', { type: 'submit', class: 'primary', id: 'send' }, 'Send');
  const transcript = h('div', { id: 'transcript', class: 'transcript' }, chat.turns.map(turnView));
  const status = h('p', { id: 'chat-status', class: 'muted', role: 'status' });
  const form = h('form', { id: 'chat-form', class: 'filters', onsubmit: async (ev) => {
    ev.preventDefault();
    const text = message.value.trim();
    if (!text || !chat.principal) {
      status.textContent = chat.principal ? '' : 'Choose a principal first.';
      return;
    }
    send.disabled = true;
    status.textContent = 'Recalling, asking the model, remembering…';
    const body = { principal: chat.principal, conversation: chat.conversation, message: text };
    if (chat.agent) body.agent = chat.agent;
    try {
      const res = await api('POST', '/v1/chat', { body });
      const turn = { message: text, res };
      chat.turns.push(turn);
      const view = turnView(turn);
      transcript.append(view);
      sizeBars(view);
      message.value = '';
      status.textContent = '';
    } catch (err) {
      status.replaceChildren(errorBox(err));
    } finally {
      send.disabled = false;
      document.documentElement.dataset.chats = String(Number(document.documentElement.dataset.chats || 0) + 1);
    }
  } },
  pick,
  state.me.agent ? null : h('label', { class: 'field' }, h('span', {}, 'Agent'), h('input', { id: 'c-agent', value: agent, placeholder: 'any', spellcheck: 'false', onchange: (ev) => {
    const q = new URLSearchParams(params);
    q.set('agent', ev.target.value.trim());
    go('/playground', q);
  } })),
  h('span', { class: 'field' }, h('span', {}, 'Conversation'), h('code', { id: 'c-conversation', class: 'fixed' }, chat.conversation)),
  h('div', { class: 'field buttons' }, h('span', {}, '\u00a0'), h('button', { type: 'button', id: 'new-conversation', onclick: () => {
    state.chat = { principal: chat.principal, agent: chat.agent, conversation: newConversationID(), turns: [] };
    route();
  } }, 'New conversation')),
  h('label', { class: 'field wide' }, h('span', {}, 'Message'), message),
  h('div', { class: 'field buttons' }, send));
  out.push(form, status, transcript);
  return out;
}

function turnView(turn) {
  const res = turn.res;
  const rec = res.recall || { results: [], below_floor: 0, min_score: 0 };
  const hits = rec.results || [];
  const injected = h('aside', { class: 'injected' },
    h('h3', {}, hits.length ? `Injected: ${hits.length} memor${hits.length === 1 ? 'y' : 'ies'}` : 'Nothing injected'),
    hits.length
      ? h('ol', { class: 'hits-list' }, hits.map((hit) => h('li', { 'data-id': hit.memory.id },
        bar(hit.score), ' ', h('a', { href: memoryHref(hit.memory), class: 'open', 'data-id': hit.memory.id }, h('code', {}, hit.memory.id)),
        h('div', { class: 'clamp' }, hit.memory.content))))
      : h('p', { class: 'muted' }, 'No memory cleared the floor for this message.'),
    h('p', { class: 'muted small' }, `${rec.below_floor || 0} below the floor (${num(rec.min_score, 2)})`));
  const extra = [];
  const ex = res.extraction;
  if (ex && (ex.pending_ids || []).length) {
    extra.push(h('p', { class: 'notice small extraction' }, 'Proposed for your approval: ',
      ex.pending_ids.map((id, i) => [i ? ', ' : '', h('a', { href: memoryHref({ id, principal: state.chat.principal }), 'data-id': id }, h('code', {}, id))])));
  }
  const refused = (res.remembered || []).filter((o) => o.status === 'refused' || o.status === 'failed');
  if (refused.length) {
    extra.push(h('p', { class: 'muted small' }, refused.map((o) => `The ${o.source} turn was not remembered: ${o.error ? o.error.message : o.status}. `)));
  }
  return h('div', { class: 'turn', 'data-recall-id': rec.recall_id || '' },
    h('div', { class: 'bubbles' },
      h('div', { class: 'bubble user' }, h('span', { class: 'who' }, 'You'), h('div', { class: 'text' }, turn.message)),
      h('div', { class: 'bubble assistant' }, h('span', { class: 'who' }, 'Agent'), h('div', { class: 'text reply' }, res.reply)),
      extra),
    injected);
}

// ---------------------------------------------------------------- start

function start() {
  state.key = sessionStorage.getItem(KEY_STORAGE);
  $('#signout').addEventListener('click', () => signOut(''));
  window.addEventListener('hashchange', route);
  route();
}

start();
