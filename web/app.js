// app.js - the Starforge dashboard (web/index.html). Four views, one per
// route of the page's address (#...):
//   #/                       jobs: the submit form and the jobs table with
//                            live progress, each job's seed, params and full
//                            dates, older pages on demand, and "run again"
//                            (the form filled in with a job's kind, params
//                            and seed, for editing)
//   #/levels?kind=...&...    the level browser: GET /v1/levels with the
//                            kind's filters (from /web/kinds.json), a page
//                            at a time; pick two levels to compare them
//   #/levels/{id}            a level: its picture (for lattice, the score
//                            histogram with its star bands is part of it:
//                            core/lattice/svg.c), star thresholds, key stats,
//                            downloads; and #play, which web/play.js fills
//   #/compare/{a}/{b}        two levels side by side
// Plain browser JavaScript: no framework, no build step, nothing from elsewhere.
//
// The hook for web/play.js (loaded after this file): window.starforge =
// { api, el, $ }; a 'starforge:level' event on document, detail { level,
// root }, each time the level view has drawn a level (level: the document of
// GET /v1/levels/{id}; root: the empty, hidden section#play), and
// 'starforge:leave' when the page leaves that level (another route or level).
//
// Where the data comes from (openapi.yaml has the details):
//   GET  /web/kinds.json        the registered kinds, their params schemas
//                               and their level filters
//   GET  /v1/jobs               the table, refreshed every few seconds
//   POST /v1/jobs               the form (problem+json errors shown as such)
//   GET  /v1/jobs/{id}/events   live progress (Server-Sent Events, read with
//                               fetch() so that the token goes as a header:
//                               a "progress" event per generation, then "end");
//                               where a stream is refused (a 404 from a
//                               service without the route), GET /v1/jobs/{id}
//                               every second instead
//   DELETE /v1/jobs/{id}        a row's Cancel button
//   GET  /v1/levels             the level browser (filters, page_token)
//   GET  /v1/levels/{id}        the level view (#/levels/{id}) and compare
//   GET  /v1/levels/{id}.svg    its picture
//
// Everything the service sends is written into the page with textContent,
// never as HTML.
'use strict';

(() => {
  const FINAL = new Set(['succeeded', 'failed', 'cancelled']);
  // A browser keeps about six connections to one host, and every event
  // stream holds one for the life of its job: watching more jobs than this
  // at once would starve the page's other requests. Jobs beyond it are kept
  // current by the table's refresh.
  const MAX_WATCHED = 3;
  const POLL_MS = 1000;
  const LIST_ACTIVE_MS = 2000;
  const LIST_IDLE_MS = 5000;

  // Small params that finish in seconds; the form's starting point per kind.
  const EXAMPLES = {
    lattice: { length: 14, lattice: 'square', algorithm: 'ga', fitness: 'star_ladder', population: 30, generations: 100 },
    racetrack: { points: 20, generations: 10, population: 10, target: [0.2, 0.5, 0.8, 0.5, 0.2] },
    digger: { difficulty: 'easy', count: 1 },
  };

  // GET /v1/levels filters of each kind (openapi.yaml, listLevels; the
  // tables are in core/<kind>/kind.c): name, the member of the level that
  // holds it, and for a text filter its values (null: any text). A number
  // filter NAME also takes min_NAME. The same list names each kind's key
  // stats in the browser, the level view and compare.
  // A kind's level filters as the level browser offers them, from
  // /web/kinds.json (the service's own table, core/kinds.h): { name, from
  // (the level document's member), text (a text filter; else a number, which
  // also takes a minimum), values (a text filter's choices, or null) }.
  const filtersOf = (kind) =>
    (kinds.get(kind)?.filters || []).map((f) => ({ name: f.name, from: f.section, text: f.type === 'text', values: f.values }));

  const $ = (selector) => document.querySelector(selector);

  /** A new element: `props` sets className, textContent, title, href, dataset... */
  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key in node) node[key] = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  /**
   * One HTTP exchange with the service. Never throws: resolves with
   * { status, ok, body } (body parsed when the answer is JSON), status 0 and
   * a made-up problem when the service could not be reached.
   */
  async function api(method, path, { json, headers = {} } = {}) {
    const init = { method, headers: { Accept: 'application/json', ...headers } };
    // A bearer token (serve --token-file) typed into the form, kept for this
    // tab only; sent on every call, so --auth-reads services work too.
    const token = sessionStorage.getItem('starforge-token');
    if (token) init.headers.Authorization = `Bearer ${token}`;
    if (json !== undefined) {
      init.body = JSON.stringify(json);
      init.headers['Content-Type'] = 'application/json';
    }
    try {
      const res = await fetch(path, init);
      const text = await res.text();
      let body = null;
      if (/json/.test(res.headers.get('Content-Type') || '') && text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = null;
        }
      }
      if (!res.ok && !body) body = { title: res.statusText || 'Error', status: res.status, detail: text.slice(0, 500) };
      return { status: res.status, ok: res.ok, body };
    } catch (err) {
      return { status: 0, ok: false, body: { title: 'Network error', detail: `${method} ${path}: ${err.message}` } };
    }
  }

  /** Shows a problem document (RFC 9457) in `box`; `null` hides the box. */
  function showProblem(box, problem) {
    box.replaceChildren();
    box.hidden = !problem;
    if (!problem) return;
    const status = problem.status ? `${problem.status} ` : '';
    box.append(el('div', { className: 'title', textContent: `${status}${problem.title || 'Error'}` }));
    if (problem.detail) box.append(el('div', { className: 'detail', textContent: problem.detail }));
    if (problem.type) box.append(el('div', { className: 'type', textContent: problem.type }));
  }

  function shortId(id) {
    const m = /^([a-z]+_)([0-9a-f]{8})[0-9a-f]*$/.exec(id);
    return m ? `${m[1]}${m[2]}…` : id;
  }

  const pad = (n, w = 2) => String(n).padStart(w, '0');

  /** A full local date and time, "2026-12-02 09:51:03"; the ISO text when it is not a date. */
  function formatDate(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  /** A <time> element for an RFC 3339 text: the full local date, the ISO text as its datetime. */
  function timeEl(iso, label = '') {
    return el('time', { dateTime: iso || '', textContent: `${label}${formatDate(iso)}`, title: iso || '' });
  }

  /** A number for people: integers as they are, others to three decimals. */
  function formatValue(v) {
    if (typeof v === 'number' && !Number.isInteger(v)) return String(Math.round(v * 1000) / 1000);
    if (v === null || v === undefined) return '–';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }

  /** [name, value text] of level's key stats: its kind's filter values. */
  function keyStats(level) {
    return filtersOf(level.kind).map((f) => [f.name, formatValue(level[f.from]?.[f.name])]);
  }

  /** "≥ 3 · ≥ 5 · ≥ 6": a level's thresholds, or why it has none. */
  function starsText(stars) {
    if (!stars || !Array.isArray(stars.thresholds)) return `no thresholds${stars?.reason ? `: ${stars.reason}` : ''}`;
    const sign = stars.better === 'lower' ? '≤' : '≥';
    const unit = stars.unit ? ` ${stars.unit}` : '';
    return stars.thresholds.map((t, i) => `${'★'.repeat(i + 1)} ${sign} ${formatValue(t)}${unit}`).join(' · ');
  }

  /**
   * Points `node`'s `attr` (an <img>'s src, a link's href) at the service's
   * `path`. Without a token that is the path itself. With one (a service
   * started with --auth-reads) the browser would load an image or follow a
   * link without it, and be refused: so the file is fetched with the token
   * as a header and shown from a blob: URL (the page's img-src allows
   * blob:), the previous one of the node freed. Should the fetch fail, the
   * plain path stays, and the image fails as it would have.
   */
  function setServed(node, attr, path) {
    const token = sessionStorage.getItem('starforge-token');
    if (node.dataset.blob) URL.revokeObjectURL(node.dataset.blob);
    delete node.dataset.blob;
    if (!token) {
      node[attr] = path;
      return;
    }
    fetch(path, { headers: { Authorization: `Bearer ${token}` } })
      .then((res) => (res.ok ? res.blob() : Promise.reject(new Error(`HTTP ${res.status}`))))
      .then((blob) => {
        node.dataset.blob = URL.createObjectURL(blob);
        node[attr] = node.dataset.blob;
      })
      .catch(() => {
        node[attr] = path;
      });
  }

  /* ---- kinds and the form ---- */

  const kinds = new Map(); // name -> { name, summary, params_schema, filters }
  let exampleShown = true; // the textarea holds an untouched example
  let idempotencyKey = newKey();

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return `k${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`;
  }

  async function loadKinds() {
    const select = $('#job-kind');
    const res = await api('GET', '/web/kinds.json');
    if (!res.ok) {
      showProblem($('#submit-error'), res.body);
      return;
    }
    for (const k of res.body.kinds) {
      kinds.set(k.name, k);
      select.append(el('option', { value: k.name, textContent: k.name }));
      if (![...$('#browse-kind').options].some((o) => o.value === k.name))
        $('#browse-kind').append(el('option', { value: k.name, textContent: k.name }));
    }
    select.value = kinds.has('lattice') ? 'lattice' : select.options[0]?.value;
    kindChanged();
    select.dataset.ready = 'true';
  }

  function exampleFor(name) {
    if (EXAMPLES[name]) return EXAMPLES[name];
    // A kind this page does not know: its schema's defaults.
    const props = kinds.get(name)?.params_schema?.properties || {};
    const params = {};
    for (const [key, p] of Object.entries(props)) if (p.default !== undefined && p.default !== null) params[key] = p.default;
    return params;
  }

  function showExample() {
    const area = $('#job-params');
    area.value = JSON.stringify(exampleFor($('#job-kind').value), null, 2);
    area.classList.remove('invalid');
    exampleShown = true;
  }

  function describeAllowed(p) {
    if (p.enum) return p.enum.join(', ');
    const lo = p.minimum ?? p.exclusiveMinimum;
    const hi = p.maximum ?? p.exclusiveMaximum;
    if (lo !== undefined || hi !== undefined) return `${lo ?? '…'} .. ${hi ?? '…'}`;
    return '';
  }

  function kindChanged() {
    const kind = kinds.get($('#job-kind').value);
    $('#kind-summary').textContent = kind?.summary || '';
    if (exampleShown || !$('#job-params').value.trim()) showExample();
    const body = $('#params-help-body');
    body.replaceChildren();
    const props = kind?.params_schema?.properties || {};
    for (const [key, p] of Object.entries(props)) {
      const type = Array.isArray(p.type) ? p.type.join(' | ') : p.type || (p.enum ? 'enum' : '');
      const row = el(
        'tr',
        { title: p.description || '' },
        el('td', {}, el('code', { textContent: key })),
        el('td', { textContent: type }),
        el('td', { textContent: p.default === undefined ? '' : JSON.stringify(p.default) }),
        el('td', { textContent: describeAllowed(p) }),
      );
      body.append(row);
    }
    $('#params-help').hidden = body.children.length === 0;
  }

  /** The request the form describes, or a problem naming the bad field. */
  function readForm() {
    const kind = $('#job-kind').value;
    const text = $('#job-params').value.trim();
    let params = {};
    if (text) {
      try {
        params = JSON.parse(text);
      } catch (err) {
        return { problem: { title: 'Invalid params', detail: `params is not valid JSON: ${err.message}` } };
      }
      if (params === null || typeof params !== 'object' || Array.isArray(params))
        return { problem: { title: 'Invalid params', detail: 'params must be a JSON object, such as {"length": 12}' } };
    }
    const request = { kind, params };
    const seedText = $('#job-seed').value.trim();
    if (seedText) {
      const seed = Number(seedText);
      if (!/^\d+$/.test(seedText) || !Number.isSafeInteger(seed))
        return { problem: { title: 'Invalid seed', detail: `seed '${seedText}' must be a whole number in 0..9007199254740991` } };
      request.seed = seed;
    }
    return { request };
  }

  async function submitJob(event) {
    event.preventDefault();
    const errorBox = $('#submit-error');
    const result = $('#submit-result');
    result.textContent = '';
    const { request, problem } = readForm();
    $('#job-params').classList.toggle('invalid', !!problem && /params/.test(problem.title));
    if (problem) {
      showProblem(errorBox, problem);
      return;
    }
    showProblem(errorBox, null);
    const button = $('#job-submit');
    button.disabled = true;
    const res = await api('POST', '/v1/jobs', { json: request, headers: { 'Idempotency-Key': idempotencyKey } });
    button.disabled = false;
    if (res.status !== 202 && res.status !== 200) {
      showProblem(errorBox, res.body);
      // A refused request created nothing: the same key may be used again.
      return;
    }
    idempotencyKey = newKey();
    const job = res.body;
    result.replaceChildren('Submitted ', el('code', { textContent: job.id, dataset: { jobId: job.id } }));
    upsertJob(job, { top: true });
    watch(job.id);
  }

  /* ---- the jobs table ---- */

  const jobs = new Map(); // id -> the last job document seen
  const rows = new Map(); // id -> <tr>

  /**
   * Records `job` and redraws its row. Progress only moves forward while a
   * job's state stays the same: a list answer may be older than an event
   * that arrived while it was in flight.
   */
  function upsertJob(job, { top = false } = {}) {
    const old = jobs.get(job.id);
    if (old && old.state === job.state && !FINAL.has(job.state) && old.progress.generation > job.progress.generation)
      job = { ...job, progress: old.progress };
    if (old && FINAL.has(old.state) && !FINAL.has(job.state)) job = old; // never un-finish a job
    if (old && old.mean !== undefined && job.mean === undefined) job = { ...job, mean: old.mean }; // events only
    jobs.set(job.id, job);
    let row = rows.get(job.id);
    if (!row) {
      row = el('tr', { dataset: { jobId: job.id } });
      rows.set(job.id, row);
      const body = $('#jobs-body');
      if (top) body.prepend(row);
      else body.append(row);
    }
    drawRow(row, job);
    $('#jobs-empty').hidden = rows.size > 0;
  }

  function progressOf(job) {
    const { generation = 0, of = 0 } = job.progress || {};
    if (job.state === 'succeeded') return 1;
    return of > 0 ? Math.min(1, generation / of) : 0;
  }

  function drawRow(row, job) {
    row.dataset.state = job.state;
    const fraction = progressOf(job);
    const percent = Math.round(fraction * 100);
    const { generation = 0, of = 0, best } = job.progress || {};
    let label = `${percent}%`;
    if (job.state === 'running' && of > 0) label = `${generation} / ${of}`;
    else if (job.state === 'queued') label = 'waiting';
    else if (job.state === 'failed' || job.state === 'cancelled') label = job.state;

    const fill = el('div', { className: 'fill' });
    fill.style.width = `${percent}%`;
    const bar = el(
      'div',
      {
        className: `bar${job.state === 'succeeded' ? ' done' : ''}${job.state === 'failed' ? ' failed' : ''}`,
        role: 'progressbar',
        'aria-valuemin': '0',
        'aria-valuemax': '100',
        'aria-valuenow': String(percent),
        title: generation === 0 ? '' : `generation ${generation}: best fitness ${best}${job.mean === undefined ? '' : `, mean ${job.mean.toFixed(2)}`}`,
      },
      fill,
      el('span', { className: 'label', textContent: label }),
    );

    const levels = el('td', { className: 'levels' });
    for (const id of job.level_ids || [])
      levels.append(el('a', { href: `#/levels/${encodeURIComponent(id)}`, className: 'level-link', textContent: shortId(id), title: id, dataset: { levelId: id } }), ' ');
    if (job.state === 'failed' && job.error) levels.append(el('span', { className: 'muted', textContent: job.error }));

    const actions = el('td', { className: 'actions-cell', dataset: { label: '' } });
    if (!FINAL.has(job.state)) {
      const cancel = el('button', { type: 'button', className: 'link cancel', textContent: 'Cancel', 'aria-label': `Cancel job ${shortId(job.id)}` });
      cancel.addEventListener('click', () => cancelJob(job.id));
      actions.append(cancel, ' ');
    }
    const again = el('button', { type: 'button', className: 'link run-again', textContent: 'Run again', 'aria-label': `Run again: job ${shortId(job.id)}` });
    again.addEventListener('click', () => runAgain(job.id));
    actions.append(again);

    // Full dates: created, and started and finished once they are known.
    const dates = el('div', { className: 'dates' }, timeEl(job.created_at));
    dates.firstChild.classList.add('created');
    if (job.started_at) dates.append(el('div', { className: 'muted' }, timeEl(job.started_at, 'started ')));
    if (job.finished_at) dates.append(el('div', { className: 'muted' }, timeEl(job.finished_at, 'finished ')));

    levels.dataset.label = 'levels';
    row.replaceChildren(
      el('td', { dataset: { label: 'job' } }, el('span', { className: 'id', textContent: shortId(job.id), title: job.id }), el('div', { className: 'kind', textContent: job.kind })),
      el('td', { dataset: { label: 'state' } }, el('span', { className: `state state-${job.state}`, textContent: job.state }), dates),
      el(
        'td',
        { className: 'run', dataset: { label: 'seed, params' } },
        el('div', {}, 'seed ', el('code', { className: 'seed', textContent: String(job.seed) })),
        // One line, spaced so that it wraps between members (a JSON string
        // never holds a raw newline, so only the layout's are collapsed).
        el('code', { className: 'params', textContent: JSON.stringify(job.params ?? {}, null, 1).replace(/\n\s*/g, ' ') }),
      ),
      el('td', { dataset: { label: 'progress' } }, bar),
      levels,
      actions,
    );
  }

  /** The form filled in with job `id`'s kind, params and seed, to edit and submit. */
  function runAgain(id) {
    const job = jobs.get(id);
    if (!job) return;
    if (currentRoute.view !== 'jobs') location.hash = '#/';
    exampleShown = false;
    const select = $('#job-kind');
    if (![...select.options].some((o) => o.value === job.kind)) select.append(el('option', { value: job.kind, textContent: job.kind }));
    select.value = job.kind;
    $('#job-params').value = JSON.stringify(job.params ?? {}, null, 2);
    $('#job-params').classList.remove('invalid');
    kindChanged();
    $('#job-seed').value = String(job.seed);
    showProblem($('#submit-error'), null);
    $('#submit-result').replaceChildren('The form holds job ', el('code', { textContent: shortId(job.id), title: job.id }), "'s kind, params and seed: edit them and submit.");
    $('#submit').scrollIntoView({ block: 'start' });
    $('#job-params').focus();
  }

  /** "Show older jobs": the next page after the last one shown, added below. */
  async function loadOlderJobs() {
    if (!olderToken) return;
    const button = $('#jobs-more');
    button.disabled = true;
    const res = await api('GET', `/v1/jobs?page_size=${JOBS_PAGE}&page_token=${encodeURIComponent(olderToken)}`);
    button.disabled = false;
    showProblem($('#jobs-error'), res.ok ? null : res.body);
    if (!res.ok) return;
    const body = $('#jobs-body');
    for (const job of res.body.jobs) {
      upsertJob(job);
      body.append(rows.get(job.id));
    }
    olderPages++;
    olderToken = res.body.next_page_token;
    showOlderButton();
    $('#jobs-body').dataset.pages = String(olderPages + 1);
  }

  async function cancelJob(id) {
    const res = await api('DELETE', `/v1/jobs/${encodeURIComponent(id)}`);
    if (res.ok) upsertJob(res.body);
    showProblem($('#jobs-error'), res.ok ? null : res.body);
  }

  let listTimer = null;
  const JOBS_PAGE = 25;
  // The next_page_token after the last page shown: "Show older jobs" reads
  // that page. undefined until the first page came; null when there is no
  // more. Tokens are cursors (jobs older than one), so a token stays right
  // while newer jobs arrive.
  let olderToken;
  let olderPages = 0;

  function showOlderButton() {
    $('#jobs-more').hidden = !olderToken;
  }

  /** GET /v1/jobs: the newest jobs, drawn in the service's order at the top; then again in a while. */
  async function refreshJobs() {
    clearTimeout(listTimer);
    const res = await api('GET', `/v1/jobs?page_size=${JOBS_PAGE}`);
    showProblem($('#jobs-error'), res.ok ? null : res.body);
    let active = false;
    if (res.ok) {
      const body = $('#jobs-body');
      // Newest first, as listed, above any older page loaded before.
      for (const job of [...res.body.jobs].reverse()) {
        upsertJob(job);
        body.prepend(rows.get(job.id));
      }
      for (const job of res.body.jobs) {
        if (!FINAL.has(job.state)) {
          active = true;
          watch(job.id);
        }
      }
      if (olderPages === 0) olderToken = res.body.next_page_token;
      showOlderButton();
    }
    active ||= watchers.size > 0;
    listTimer = setTimeout(refreshJobs, active ? LIST_ACTIVE_MS : LIST_IDLE_MS);
  }

  /* ---- live progress ---- */

  const watchers = new Map(); // id -> { stop() }
  // Whether the service streams events: unknown until a stream opens
  // ('yes') or fails before opening ('no': the route answered 404, say).
  let streams = window.fetch && window.TextDecoderStream ? 'unknown' : 'no';

  function showLiveMode() {
    const text = { yes: 'live: events', no: 'live: polling every second', unknown: '' }[streams];
    $('#jobs-live').textContent = text;
  }

  function watch(id) {
    const job = jobs.get(id);
    if (watchers.has(id) || !job || FINAL.has(job.state) || watchers.size >= MAX_WATCHED) return;
    if (streams !== 'no') watchEvents(id);
    else watchPolling(id);
  }

  function unwatch(id) {
    watchers.get(id)?.stop();
    watchers.delete(id);
  }

  /** GET /v1/jobs/{id} once and redraw; resolves with the job or null. */
  async function refreshJob(id) {
    const res = await api('GET', `/v1/jobs/${encodeURIComponent(id)}`);
    if (!res.ok) return null;
    upsertJob(res.body);
    return res.body;
  }

  /** One event of a job's stream: a generation's progress, or the job's end. */
  function applyEvent(id, data) {
    const job = jobs.get(id);
    if (!job || !data || typeof data !== 'object') return;
    if (data.job && data.job.id === id) {
      upsertJob(data.job);
      return;
    }
    const next = { ...job, progress: { ...job.progress } };
    // "progress" events carry the generation's fields at the top level; the
    // final "end" event nests them under "progress".
    const progress = data.progress && typeof data.progress === 'object' ? data.progress : data;
    if (typeof progress.generation === 'number') {
      next.progress.generation = progress.generation;
      if (typeof progress.of === 'number') next.progress.of = progress.of;
      if (typeof progress.best === 'number') next.progress.best = progress.best;
      if (typeof progress.mean === 'number') next.mean = progress.mean;
      if (next.state === 'queued') next.state = 'running';
    }
    if (typeof data.state === 'string') next.state = data.state;
    if (Array.isArray(data.level_ids)) next.level_ids = data.level_ids;
    if (data.error !== undefined) next.error = data.error;
    upsertJob(next);
  }

  /**
   * Reads the Server-Sent Events at `path` with fetch(), not EventSource:
   * an EventSource cannot send the Authorization header, so under
   * --auth-reads it could not open (and a token in its URL would reach the
   * logs). Calls onOpen() once the service answers 200 with an event
   * stream, onEvent({ event, data }) per event, and onEnd(opened) once the
   * stream ends, breaks or is refused; the returned function stops it
   * (onEnd is then not called).
   */
  function readEvents(path, { onOpen, onEvent, onEnd }) {
    const abort = new AbortController();
    let stopped = false;
    (async () => {
      let opened = false;
      try {
        const headers = { Accept: 'text/event-stream' };
        const token = sessionStorage.getItem('starforge-token');
        if (token) headers.Authorization = `Bearer ${token}`;
        const res = await fetch(path, { headers, cache: 'no-store', signal: abort.signal });
        if (!res.ok || !res.body || !/^text\/event-stream/.test(res.headers.get('Content-Type') || '')) {
          await res.body?.cancel().catch(() => {});
        } else {
          opened = true;
          onOpen();
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = '';
          let event = { event: 'message', data: [] };
          for (;;) {
            const { value, done } = await reader.read();
            if (done || stopped) break;
            buffer += value;
            for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
              const line = buffer.slice(0, nl).replace(/\r$/, '');
              buffer = buffer.slice(nl + 1);
              if (line === '') {
                if (event.data.length) onEvent({ event: event.event, data: event.data.join('\n') });
                event = { event: 'message', data: [] };
              } else if (!line.startsWith(':')) {
                const colon = line.indexOf(':');
                const field = colon < 0 ? line : line.slice(0, colon);
                const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
                if (field === 'event') event.event = text;
                else if (field === 'data') event.data.push(text);
              }
            }
          }
        }
      } catch {
        // Aborted, or the connection broke: onEnd says which it was.
      }
      if (!stopped) onEnd(opened);
    })();
    return () => {
      stopped = true;
      abort.abort();
    };
  }

  function watchEvents(id) {
    let stopReading = null;
    const stop = () => stopReading?.();
    watchers.set(id, { stop });
    stopReading = readEvents(`/v1/jobs/${encodeURIComponent(id)}/events`, {
      onOpen() {
        streams = 'yes';
        showLiveMode();
      },
      // Named events (openapi.yaml, watchJob): one "progress" per
      // generation, then "end" with the state and level ids; all read alike.
      onEvent(event) {
        let data;
        try {
          data = JSON.parse(event.data);
        } catch {
          return;
        }
        applyEvent(id, data);
        if (typeof data.state === 'string' && FINAL.has(data.state)) {
          // The last event: stop, and read the whole job once (finished_at, error).
          unwatch(id);
          refreshJob(id);
        }
      },
      // A refused stream (a 404 from a service without the route), or the
      // stream's end before the job's: stop, and find out from the job
      // itself whether there is anything left to watch.
      async onEnd(opened) {
        unwatch(id);
        if (!opened && streams !== 'yes') {
          streams = 'no';
          showLiveMode();
        }
        const job = await refreshJob(id);
        if (job && !FINAL.has(job.state)) {
          // A stream that ended early (the service restarting): try again
          // in a while, as events if streams work at all, else by polling.
          // (watch(), not a watcher made here: the table's refresh may have
          // started one meanwhile.)
          if (opened) setTimeout(() => watch(id), POLL_MS);
          else watch(id);
        }
      },
    });
  }

  function watchPolling(id) {
    let timer = null;
    let stopped = false;
    watchers.set(id, {
      stop() {
        stopped = true;
        clearTimeout(timer);
      },
    });
    const tick = async () => {
      const job = await refreshJob(id);
      if (stopped) return;
      if (!job || FINAL.has(job.state)) unwatch(id);
      else timer = setTimeout(tick, POLL_MS);
    };
    timer = setTimeout(tick, POLL_MS);
  }

  /* ---- routes ---- */

  // The route shown: { view: 'jobs' | 'level' | 'browse' | 'compare', ... }.
  let currentRoute = { view: 'none' };
  // The level the play hook was last told about (starforge:level), or null.
  let announcedLevel = null;

  function parseRoute(hash) {
    let m = /^#\/levels\/([^/?]+)$/.exec(hash);
    if (m) return { view: 'level', id: decodeURIComponent(m[1]) };
    m = /^#\/levels\/?(?:\?(.*))?$/.exec(hash);
    if (m) return { view: 'browse', query: new URLSearchParams(m[1] || '') };
    m = /^#\/compare\/([^/?]+)\/([^/?]+)$/.exec(hash);
    if (m) return { view: 'compare', a: decodeURIComponent(m[1]), b: decodeURIComponent(m[2]) };
    return { view: 'jobs' };
  }

  /** Tells web/play.js that the level it was given is no longer shown. */
  function leaveLevel() {
    if (announcedLevel === null) return;
    announcedLevel = null;
    document.dispatchEvent(new CustomEvent('starforge:leave'));
  }

  function routeFromHash() {
    const route = parseRoute(location.hash);
    if (route.view !== 'level' || route.id !== currentRoute.id) leaveLevel();
    currentRoute = route;
    const views = { jobs: ['#submit', '#jobs'], level: ['#level'], browse: ['#browse'], compare: ['#compare'] };
    for (const [view, sections] of Object.entries(views)) for (const sel of sections) $(sel).hidden = view !== route.view;
    document.body.dataset.view = route.view;
    for (const [nav, view] of [['#nav-jobs', 'jobs'], ['#nav-levels', 'browse']]) {
      if (route.view === view) $(nav).setAttribute('aria-current', 'page');
      else $(nav).removeAttribute('aria-current');
    }
    if (route.view === 'jobs') document.title = 'Starforge: jobs';
    if (route.view === 'level') showLevel(route.id);
    else if (route.view === 'browse') showBrowse(route.query);
    else if (route.view === 'compare') showCompare(route.a, route.b);
    else $('#level').removeAttribute('data-level-id');
  }

  /* ---- the level view ---- */

  const STAR_LABELS = ['★', '★★', '★★★'];
  const levelPath = (id) => `/v1/levels/${encodeURIComponent(id)}`;

  /** A definition list of a level's key stats (its kind's filter values). */
  function fillStats(dl, level) {
    dl.replaceChildren();
    for (const [name, value] of keyStats(level)) dl.append(el('div', { dataset: { stat: name } }, el('dt', { textContent: name.replace(/_/g, ' ') }), el('dd', { textContent: value })));
  }

  async function showLevel(id) {
    const section = $('#level');
    section.dataset.levelId = id;
    delete section.dataset.ready;
    document.title = `Starforge: level ${shortId(id)}`;
    $('#level-title').textContent = `Level ${id}`;
    $('#level-meta').textContent = 'loading…';
    $('#level-stats').replaceChildren();
    const json = $('#level-json');
    setServed(json, 'href', levelPath(id));
    json.download = `${id}.json`;
    const svg = $('#level-svg');
    setServed(svg, 'href', `${levelPath(id)}.svg`);
    svg.download = `${id}.svg`;
    setServed($('#level-open-svg'), 'href', `${levelPath(id)}.svg`);
    setServed($('#level-picture-full'), 'href', `${levelPath(id)}.svg`);
    for (const [jobId, row] of rows) row.classList.toggle('selected', (jobs.get(jobId).level_ids || []).includes(id));
    showProblem($('#level-error'), null);

    const picture = $('#level-picture');
    const note = $('#level-picture-note');
    note.textContent = '';
    delete picture.dataset.state;
    picture.onload = () => {
      picture.dataset.state = 'loaded';
      note.textContent = 'Tap or click the picture to open it full size.';
    };
    picture.onerror = () => {
      picture.dataset.state = 'failed';
      note.textContent = 'No picture: the service did not answer an image for this level.';
    };
    picture.alt = `Picture of level ${id}`;
    setServed(picture, 'src', `${levelPath(id)}.svg`);

    const res = await api('GET', levelPath(id));
    if (currentRoute.view !== 'level' || section.dataset.levelId !== id) return; // another route was chosen meanwhile
    if (!res.ok) {
      $('#level-meta').textContent = '';
      showProblem($('#level-error'), res.body);
      return;
    }
    const level = res.body;
    const bits = [`kind ${level.kind}`, `seed ${level.seed}`];
    if (level.puzzle?.sequence) bits.push(`${level.puzzle.lattice} ${level.puzzle.sequence}`);
    $('#level-meta').textContent = bits.join(' · ');
    drawStars(level.stars);
    fillStats($('#level-stats'), level);
    section.dataset.ready = 'true';
    section.scrollIntoView({ block: 'nearest' });
    announcedLevel = id;
    document.dispatchEvent(new CustomEvent('starforge:level', { detail: { level, root: document.getElementById('play') } }));
  }

  /* ---- the level browser ---- */

  // Tokens of the pages before the one shown, for "Previous page".
  let browseBack = [];
  let browseToken = null; // the page_token of the page shown
  let browseSeq = 0;
  // The levels chosen for compare, oldest first (at most two), across pages.
  let chosen = [];

  /** The filter fields of `kind`, filled from `query`. */
  function drawFilterFields(kind, query) {
    const box = $('#browse-filter-fields');
    box.replaceChildren();
    const filters = filtersOf(kind);
    $('#browse-filters').hidden = filters.length === 0;
    for (const f of filters) {
      const label = f.name.replace(/_/g, ' ');
      const id = `browse-f-${f.name}`;
      if (f.text && f.values) {
        const select = el('select', { id, name: f.name }, el('option', { value: '', textContent: 'any' }));
        for (const v of f.values) select.append(el('option', { value: v, textContent: v }));
        select.value = query.get(f.name) || '';
        box.append(el('div', { className: 'field' }, el('label', { htmlFor: id, textContent: label }), select));
      } else if (f.text) {
        const input = el('input', { id, name: f.name, type: 'text', spellcheck: false, value: query.get(f.name) || '', placeholder: 'any' });
        box.append(el('div', { className: 'field' }, el('label', { htmlFor: id, textContent: label }), input));
      } else {
        const exact = el('input', { id, name: f.name, type: 'number', step: 'any', value: query.get(f.name) || '', placeholder: '=' });
        const min = el('input', {
          id: `${id}-min`,
          name: `min_${f.name}`,
          type: 'number',
          step: 'any',
          value: query.get(`min_${f.name}`) || '',
          placeholder: '≥',
          'aria-label': `${label}, at least`,
        });
        box.append(el('div', { className: 'field number' }, el('label', { htmlFor: id, textContent: label }), exact, min));
      }
    }
  }

  /** The query the browser's form describes (without page_token). */
  function browseQuery() {
    const q = new URLSearchParams();
    const kind = $('#browse-kind').value;
    if (kind) q.set('kind', kind);
    for (const input of $('#browse-filter-fields').querySelectorAll('input, select')) {
      const v = input.value.trim();
      if (v) q.set(input.name, v);
    }
    const size = $('#browse-page-size').value.trim();
    if (size) q.set('page_size', size);
    return q;
  }

  function goBrowse(query, token) {
    const q = new URLSearchParams(query);
    if (token) q.set('page_token', token);
    const text = q.toString();
    const hash = text ? `#/levels?${text}` : '#/levels';
    if (location.hash === hash) routeFromHash(); // the same page again: read it afresh
    else location.hash = hash;
  }

  function drawChosen() {
    const names = chosen.map(shortId);
    $('#browse-chosen').textContent = chosen.length
      ? `Chosen to compare: ${names.join(' and ')}${chosen.length < 2 ? ' (choose one more)' : ''}`
      : 'Choose two levels to compare them.';
    $('#browse-compare').disabled = chosen.length !== 2;
    for (const box of document.querySelectorAll('#browse-list input.choose')) box.checked = chosen.includes(box.value);
  }

  function toggleChosen(id, on) {
    chosen = chosen.filter((c) => c !== id);
    if (on) chosen.push(id);
    if (chosen.length > 2) chosen = chosen.slice(-2);
    drawChosen();
  }

  /** One level in the browser's list. */
  function levelCard(level) {
    const link = `#/levels/${encodeURIComponent(level.id)}`;
    const box = el('input', { type: 'checkbox', className: 'choose', value: level.id, id: `choose-${level.id}` });
    box.addEventListener('change', () => toggleChosen(level.id, box.checked));
    const stats = el('dl', { className: 'stats' });
    fillStats(stats, level);
    const thumb = el('img', { alt: '', loading: 'lazy' });
    setServed(thumb, 'src', `${levelPath(level.id)}.svg`);
    return el(
      'li',
      { className: 'level-card', dataset: { levelId: level.id, kind: level.kind } },
      el('a', { href: link, className: 'thumb', 'aria-label': `Open level ${level.id}` }, thumb),
      el(
        'div',
        { className: 'card-body' },
        el('a', { href: link, className: 'level-link id', textContent: shortId(level.id), title: level.id, dataset: { levelId: level.id } }),
        el('div', { className: 'muted' }, `${level.kind} · seed ${level.seed}`),
        el('div', { className: 'stars-line', textContent: starsText(level.stars) }),
        stats,
        el('div', { className: 'choose-row' }, box, el('label', { htmlFor: box.id, textContent: 'compare', title: `Choose ${level.id} to compare` })),
      ),
    );
  }

  async function showBrowse(query) {
    const section = $('#browse');
    delete section.dataset.ready;
    document.title = 'Starforge: levels';
    const kind = query.get('kind') || '';
    const select = $('#browse-kind');
    if (kind && ![...select.options].some((o) => o.value === kind)) select.append(el('option', { value: kind, textContent: kind }));
    select.value = kind;
    $('#browse-page-size').value = query.get('page_size') || '';
    drawFilterFields(kind, query);
    const token = query.get('page_token');
    if (!token) browseBack = [];
    else if (browseToken !== token && browseBack.at(-1) === token) browseBack.pop(); // came back with the browser's Back
    browseToken = token;

    const seq = ++browseSeq;
    $('#browse-status').textContent = 'loading…';
    const res = await api('GET', `/v1/levels?${query.toString()}`);
    if (seq !== browseSeq || currentRoute.view !== 'browse') return;
    showProblem($('#browse-error'), res.ok ? null : res.body);
    const list = $('#browse-list');
    list.replaceChildren();
    if (!res.ok) {
      $('#browse-status').textContent = '';
      $('#browse-next').hidden = true;
      $('#browse-prev').hidden = !token;
      section.dataset.ready = 'true';
      return;
    }
    for (const level of res.body.levels) list.append(levelCard(level));
    const n = res.body.levels.length;
    const page = !token ? 'page 1' : browseBack.length ? `page ${browseBack.length + 1}` : 'a later page';
    $('#browse-status').textContent = n ? `${n} level${n === 1 ? '' : 's'}, ${page}` : 'No level matches these filters.';
    const next = res.body.next_page_token;
    const nextButton = $('#browse-next');
    nextButton.hidden = !next;
    nextButton.dataset.token = next || '';
    $('#browse-prev').hidden = !token;
    drawChosen();
    section.dataset.ready = 'true';
  }

  function browseNext() {
    const next = $('#browse-next').dataset.token;
    if (!next) return;
    const q = new URLSearchParams(currentRoute.query);
    q.delete('page_token');
    browseBack.push(browseToken || '');
    browseToken = next;
    goBrowse(q, next);
  }

  function browsePrev() {
    const q = new URLSearchParams(currentRoute.query);
    q.delete('page_token');
    const token = browseBack.pop() || '';
    browseToken = token || null;
    goBrowse(q, token);
  }

  /* ---- compare ---- */

  async function showCompare(a, b) {
    const section = $('#compare');
    delete section.dataset.ready;
    section.dataset.levels = `${a} ${b}`;
    document.title = `Starforge: ${shortId(a)} and ${shortId(b)}`;
    showProblem($('#compare-error'), null);
    const sides = $('#compare-sides');
    sides.replaceChildren();
    $('#compare-stats tbody').replaceChildren();
    const [ra, rb] = await Promise.all([api('GET', levelPath(a)), api('GET', levelPath(b))]);
    if (currentRoute.view !== 'compare' || section.dataset.levels !== `${a} ${b}`) return;
    const bad = [ra, rb].find((r) => !r.ok);
    if (bad) {
      showProblem($('#compare-error'), bad.body);
      section.dataset.ready = 'true';
      return;
    }
    const levels = [ra.body, rb.body];
    levels.forEach((level, i) => {
      const name = i ? 'B' : 'A';
      const svg = `${levelPath(level.id)}.svg`;
      const image = el('img', { alt: `Picture of level ${level.id}` });
      setServed(image, 'src', svg);
      const full = el('a', { target: '_blank', rel: 'noopener', className: 'picture-link', title: 'Open the picture full size' }, image);
      setServed(full, 'href', svg);
      const stars = el('ul', { className: 'stars-list' });
      if (Array.isArray(level.stars.thresholds)) {
        const sign = level.stars.better === 'lower' ? '≤' : '≥';
        const unit = level.stars.unit ? ` ${level.stars.unit}` : '';
        level.stars.thresholds.forEach((t, k) =>
          stars.append(el('li', { dataset: { stars: String(k + 1) } }, el('span', { className: `stars stars-${k + 1}`, textContent: STAR_LABELS[k] }), ` ${sign} ${formatValue(t)}${unit}`)),
        );
      } else stars.append(el('li', { textContent: starsText(level.stars) }));
      sides.append(
        el(
          'article',
          { className: 'compare-side', dataset: { levelId: level.id }, 'aria-labelledby': `compare-side-${name}` },
          el('h3', { id: `compare-side-${name}` }, `${name}: `, el('a', { href: `#/levels/${encodeURIComponent(level.id)}`, className: 'id', textContent: shortId(level.id), title: level.id })),
          el('p', { className: 'muted', textContent: `${level.kind} · seed ${level.seed} · ${level.stars.metric} (${level.stars.better === 'lower' ? 'lower' : 'higher'} is better)` }),
          full,
          stars,
        ),
      );
    });
    $('#compare-head-a').textContent = `A ${shortId(a)}`;
    $('#compare-head-b').textContent = `B ${shortId(b)}`;
    const rowsOut = new Map();
    for (const [i, level] of levels.entries())
      for (const [name, value] of keyStats(level)) {
        if (!rowsOut.has(name)) rowsOut.set(name, ['–', '–']);
        rowsOut.get(name)[i] = value;
      }
    rowsOut.set('kind', [levels[0].kind, levels[1].kind]);
    rowsOut.set('stars', [starsText(levels[0].stars), starsText(levels[1].stars)]);
    const body = $('#compare-stats tbody');
    for (const [name, [va, vb]] of rowsOut)
      body.append(el('tr', { dataset: { stat: name } }, el('th', { scope: 'row', textContent: name.replace(/_/g, ' ') }), el('td', { textContent: va }), el('td', { textContent: vb })));
    section.dataset.ready = 'true';
  }

  function drawStars(stars) {
    const body = $('#level-stars tbody');
    body.replaceChildren();
    const unit = stars.unit ? ` ${stars.unit}` : '';
    const sign = stars.better === 'lower' ? '≤' : '≥';
    if (Array.isArray(stars.thresholds)) {
      stars.thresholds.forEach((t, i) => {
        body.append(
          el(
            'tr',
            { dataset: { stars: String(i + 1) } },
            el('th', {}, el('span', { className: `stars stars-${i + 1}`, textContent: STAR_LABELS[i] })),
            el('td', { className: 'threshold', textContent: `${sign} ${t}${unit}` }),
          ),
        );
      });
    }
    const better = stars.better === 'lower' ? 'lower is better' : 'higher is better';
    let text = `${stars.metric} (${better}), placed by the ${stars.strategy} rule`;
    if (stars.fractions) text += ` (fractions ${stars.fractions.join(', ')})`;
    if (!Array.isArray(stars.thresholds)) text = `No thresholds: ${stars.reason || 'unknown reason'}. ${text}`;
    $('#level-stars-note').textContent = text + '.';
  }

  /* ---- start ---- */

  function start() {
    $('#job-form').addEventListener('submit', submitJob);
    $('#api-token').value = sessionStorage.getItem('starforge-token') || '';
    $('#api-token').addEventListener('input', (e) => {
      const token = e.target.value.trim();
      if (token) sessionStorage.setItem('starforge-token', token);
      else sessionStorage.removeItem('starforge-token');
    });
    $('#job-kind').addEventListener('change', kindChanged);
    $('#job-example').addEventListener('click', showExample);
    $('#job-params').addEventListener('input', () => {
      exampleShown = false;
    });
    $('#jobs-more').addEventListener('click', loadOlderJobs);

    $('#browse-kind').addEventListener('change', () => drawFilterFields($('#browse-kind').value, new URLSearchParams()));
    $('#browse-form').addEventListener('submit', (event) => {
      event.preventDefault();
      goBrowse(browseQuery());
    });
    $('#browse-clear').addEventListener('click', () => {
      const q = new URLSearchParams();
      if ($('#browse-kind').value) q.set('kind', $('#browse-kind').value);
      goBrowse(q);
    });
    $('#browse-next').addEventListener('click', browseNext);
    $('#browse-prev').addEventListener('click', browsePrev);
    $('#browse-compare').addEventListener('click', () => {
      if (chosen.length === 2) location.hash = `#/compare/${encodeURIComponent(chosen[0])}/${encodeURIComponent(chosen[1])}`;
    });

    window.addEventListener('hashchange', routeFromHash);
    showLiveMode();
    const kindsLoaded = loadKinds();
    refreshJobs();
    // The first route once the kinds (their level filters) are known and
    // every deferred script (web/play.js) has run, so that the play part
    // hears the first starforge:level.
    const firstRoute = () => kindsLoaded.then(routeFromHash);
    if (document.readyState === 'complete') firstRoute();
    else document.addEventListener('DOMContentLoaded', firstRoute, { once: true });
  }

  // The helpers web/play.js builds on, before any level loads.
  window.starforge = { api, el, $ };
  start();
})();
