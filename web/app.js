// app.js - the Starforge dashboard (web/index.html): a jobs table with live
// progress, a form that submits a job of any kind, and a level view with its
// picture (for lattice, the score histogram with its star bands is part of
// it: core/lattice/svg.c) and its star thresholds. Plain
// browser JavaScript: no framework, no build step, nothing from elsewhere.
//
// Where the data comes from (openapi.yaml has the details):
//   GET  /web/kinds.json        the registered kinds and their params schemas
//   GET  /v1/jobs               the table, refreshed every few seconds
//   POST /v1/jobs               the form (problem+json errors shown as such)
//   GET  /v1/jobs/{id}/events   live progress (Server-Sent Events: a
//                               "progress" event per generation, then "end");
//                               where a stream is refused (a 404 from a
//                               service without the route), GET /v1/jobs/{id}
//                               every second instead
//   DELETE /v1/jobs/{id}        a row's Cancel button
//   GET  /v1/levels/{id}        the level view (#/levels/{id})
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

  function formatTime(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    const today = new Date().toDateString() === d.toDateString();
    return today ? d.toLocaleTimeString() : d.toLocaleString();
  }

  /* ---- kinds and the form ---- */

  const kinds = new Map(); // name -> { name, summary, params_schema }
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

    const actions = el('td');
    if (!FINAL.has(job.state)) {
      const cancel = el('button', { type: 'button', className: 'link', textContent: 'Cancel' });
      cancel.addEventListener('click', () => cancelJob(job.id));
      actions.append(cancel);
    }

    row.replaceChildren(
      el('td', { className: 'id', textContent: shortId(job.id), title: job.id }),
      el('td', { textContent: job.kind }),
      el('td', {}, el('span', { className: `state state-${job.state}`, textContent: job.state })),
      el('td', { textContent: formatTime(job.created_at), title: job.created_at || '' }),
      el('td', {}, bar),
      levels,
      actions,
    );
  }

  async function cancelJob(id) {
    const res = await api('DELETE', `/v1/jobs/${encodeURIComponent(id)}`);
    if (res.ok) upsertJob(res.body);
    showProblem($('#jobs-error'), res.ok ? null : res.body);
  }

  let listTimer = null;

  /** GET /v1/jobs: the newest jobs, drawn in the service's order; then again in a while. */
  async function refreshJobs() {
    clearTimeout(listTimer);
    const res = await api('GET', '/v1/jobs?page_size=25');
    showProblem($('#jobs-error'), res.ok ? null : res.body);
    let active = false;
    if (res.ok) {
      const body = $('#jobs-body');
      for (const job of res.body.jobs) {
        upsertJob(job);
        body.append(rows.get(job.id)); // newest first, as listed
        if (!FINAL.has(job.state)) {
          active = true;
          watch(job.id);
        }
      }
    }
    active ||= watchers.size > 0;
    listTimer = setTimeout(refreshJobs, active ? LIST_ACTIVE_MS : LIST_IDLE_MS);
  }

  /* ---- live progress ---- */

  const watchers = new Map(); // id -> { stop() }
  // Whether the service streams events: unknown until a stream opens
  // ('yes') or fails before opening ('no': the route answered 404, say).
  let streams = window.EventSource ? 'unknown' : 'no';

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

  function watchEvents(id) {
    const source = new EventSource(`/v1/jobs/${encodeURIComponent(id)}/events`);
    let opened = false;
    let stopped = false;
    const stop = () => {
      stopped = true;
      source.close();
    };
    watchers.set(id, { stop });

    const onEvent = (event) => {
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      applyEvent(id, data);
      if (typeof data.state === 'string' && FINAL.has(data.state)) {
        // The last event: close before the browser reconnects, and read the
        // whole job once (finished_at, error).
        unwatch(id);
        refreshJob(id);
      }
    };
    source.onopen = () => {
      opened = true;
      streams = 'yes';
      showLiveMode();
    };
    source.onmessage = onEvent;
    // Named events (openapi.yaml, watchJob): one "progress" per generation,
    // then "end" with the state and level ids; unnamed ones are read alike.
    source.addEventListener('progress', onEvent);
    source.addEventListener('end', onEvent);
    // An error is a refused stream (a 404 from a service without the route:
    // the browser gives up on a non-200 answer), or the stream's end, which a
    // browser would otherwise retry. Either way stop, and find out from the
    // job itself whether there is anything left to watch.
    source.onerror = async () => {
      if (stopped) return;
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
    };
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

  /* ---- the level view ---- */

  const STAR_LABELS = ['★', '★★', '★★★'];

  function routeFromHash() {
    const m = /^#\/levels\/(.+)$/.exec(location.hash);
    if (m) showLevel(decodeURIComponent(m[1]));
  }

  async function showLevel(id) {
    const section = $('#level');
    section.hidden = false;
    section.dataset.levelId = id;
    delete section.dataset.ready;
    $('#level-title').textContent = `Level ${id}`;
    $('#level-meta').textContent = 'loading…';
    $('#level-json').href = `/v1/levels/${encodeURIComponent(id)}`;
    for (const [jobId, row] of rows) row.classList.toggle('selected', (jobs.get(jobId).level_ids || []).includes(id));
    showProblem($('#level-error'), null);

    const picture = $('#level-picture');
    const note = $('#level-picture-note');
    note.textContent = '';
    delete picture.dataset.state;
    picture.onload = () => {
      picture.dataset.state = 'loaded';
      note.textContent = '';
    };
    picture.onerror = () => {
      picture.dataset.state = 'failed';
      note.textContent = 'No picture: the service did not answer an image for this level.';
    };
    picture.alt = `Picture of level ${id}`;
    picture.src = `/v1/levels/${encodeURIComponent(id)}.svg`;

    const res = await api('GET', `/v1/levels/${encodeURIComponent(id)}`);
    if (section.dataset.levelId !== id) return; // another level was chosen meanwhile
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
    section.dataset.ready = 'true';
    section.scrollIntoView({ block: 'nearest' });
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
    window.addEventListener('hashchange', routeFromHash);
    showLiveMode();
    loadKinds();
    refreshJobs();
    routeFromHash();
  }

  start();
})();
