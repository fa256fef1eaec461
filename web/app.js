// vidembed web page. A plain browser module: no framework, no bundler, nothing from elsewhere.
// It talks only to the public HTTP API (docs/api.md) with the user's key, sent in the X-API-Key
// header and kept in this tab's sessionStorage; <img> and <video> (which cannot send headers)
// use an HttpOnly cookie that POST /ui/session sets, valid for thumbnails and video files only.
// Nothing here ever logs or puts the key in an address.

import { $, el, enc, fmtTime } from './dom.js';
import { createTranscript } from './transcript.js';
import { createPlayer } from './player.js';
import { createVideoView } from './video-view.js';
import { isWeak, searchSummary } from './results.js';

const KEY = 'vidembed.key';
const COLLECTION = 'vidembed.collection';
const POLL_MS = 1000;
/** Results per search page ("Show more" asks for the next). */
const PAGE = 20;
/** The largest picture the API takes as a query. */
const MAX_PICTURE_BYTES = 32 * 1024 * 1024;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let config = { auth: true, filters: {} };
let collections = [];
const state = { key: sessionStorage.getItem(KEY), collection: sessionStorage.getItem(COLLECTION), gridTimer: 0, query: null, picture: null };

class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** An error body ({detail, code}; detail may be a list of {loc, msg}) as one sentence. */
function describe(status, body) {
  const d = body && body.detail;
  if (Array.isArray(d)) return d.map((i) => `${(i.loc || []).filter((p) => p !== 'body').join('.')}: ${i.msg}`).join('; ');
  if (typeof d === 'string') return d;
  return `the server answered ${status}`;
}

function authHeaders() {
  return config.auth && state.key ? { 'X-API-Key': state.key } : {};
}

async function api(method, path, body) {
  const headers = { Accept: 'application/json', ...authHeaders() };
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'the server cannot be reached: is vidembed still running?');
  }
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const err = new ApiError(res.status, describe(res.status, json), json && json.code);
    if (res.status === 401 && config.auth && path !== '/ui/login') signedOut('The server refused the key: sign in again.');
    throw err;
  }
  return json;
}

// ---- messages ---------------------------------------------------------------------------------

let noticeTimer = 0;
function notice(msg) {
  $('notice').textContent = msg;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => ($('notice').textContent = ''), 6000);
}
function showError(err) {
  $('error').textContent = err ? (err instanceof Error ? err.message : String(err)) : '';
}
/** Runs an action from a control, showing its failure instead of throwing. */
const guarded = (fn) => async (...args) => {
  try {
    showError('');
    await fn(...args);
  } catch (err) {
    showError(err);
  }
};

// ---- signing in -------------------------------------------------------------------------------

function signedOut(why) {
  state.key = null;
  sessionStorage.removeItem(KEY);
  $('app').hidden = true;
  $('sign-out').hidden = true;
  $('login').hidden = false;
  if (why) showError(why);
}

/** The media cookie for <img> and <video>; with --no-auth nothing is needed. */
async function openMediaSession() {
  if (config.auth) await api('POST', '/ui/session');
}

async function start() {
  config = await api('GET', '/ui/config');
  fillFilters();
  if (config.auth) {
    const m = /(?:^#|&)login=([^&]+)/.exec(location.hash);
    if (m) {
      // The token works once: take it out of the address (and history) before using it.
      history.replaceState(null, '', location.pathname + location.search);
      try {
        const r = await api('POST', '/ui/login', { token: decodeURIComponent(m[1]) });
        state.key = r.api_key;
        sessionStorage.setItem(KEY, state.key);
      } catch (err) {
        showError(`${err.message}`);
      }
    }
    if (!state.key) return signedOut();
    try {
      await openMediaSession();
    } catch (err) {
      if (err.status !== 401) showError(err);
      return;
    }
  }
  await enter();
}

async function enter() {
  $('login').hidden = true;
  $('app').hidden = false;
  $('sign-out').hidden = !config.auth;
  await loadCollections();
  const m = /^#video=([^&]+)/.exec(location.hash);
  if (m) await videoView.open(decodeURIComponent(m[1])).catch(showError);
}

$('login-form').addEventListener(
  'submit',
  guarded(async (ev) => {
    ev.preventDefault();
    const input = $('api-key');
    state.key = input.value.trim();
    input.value = '';
    if (!state.key) return;
    await openMediaSession(); // checks the key too: a 401 shows the form again
    sessionStorage.setItem(KEY, state.key);
    showError('');
    await enter();
  }),
);

$('sign-out').addEventListener(
  'click',
  guarded(async () => {
    try {
      await api('DELETE', '/ui/session');
    } finally {
      const playing = player.videoId();
      if (playing) player.forget(playing);
      videoView.close();
      signedOut();
      notice('Signed out.');
    }
  }),
);

// ---- collections ------------------------------------------------------------------------------

async function loadCollections(select) {
  collections = await api('GET', '/collections?limit=1000');
  const sel = $('collection');
  sel.replaceChildren(
    ...collections.map((c) => el('option', { value: c.id, text: `${c.name}${c.owner && c.owner !== 'default' ? ` (${c.owner})` : ''} — ${c.video_count} video${c.video_count === 1 ? '' : 's'}` })),
  );
  if (!collections.length) sel.append(el('option', { value: '', text: 'no collections yet: create one' }));
  const want = select ?? state.collection;
  sel.value = collections.some((c) => c.id === want) ? want : (collections[0]?.id ?? '');
  setCollection(sel.value);
}

function setCollection(id) {
  state.collection = id || null;
  if (id) sessionStorage.setItem(COLLECTION, id);
  const none = !id;
  for (const c of ['file-input', 'search-text', 'delete-collection', 'refresh']) $(c).disabled = none;
  $('results').replaceChildren();
  $('more-results').hidden = true;
  $('search-status').textContent = '';
  state.query = null;
  void loadVideos().catch(showError);
}

$('collection').addEventListener('change', (ev) => setCollection(ev.target.value));

$('new-collection').addEventListener(
  'submit',
  guarded(async (ev) => {
    ev.preventDefault();
    const input = $('new-collection-name');
    const created = await api('POST', '/collections', { name: input.value.trim() });
    input.value = '';
    await loadCollections(created.collection_id);
    notice(`Collection ${created.name} created.`);
  }),
);

$('delete-collection').addEventListener(
  'click',
  guarded(async () => {
    const c = collections.find((x) => x.id === state.collection);
    if (!c || !confirm(`Delete the collection "${c.name}" with its videos? This cannot be undone.`)) return;
    await api('DELETE', `/collections/${enc(c.id)}`);
    state.collection = null;
    await loadCollections();
    notice(`Collection ${c.name} deleted.`);
  }),
);

// ---- videos grid ------------------------------------------------------------------------------

const details = new Map(); // video id -> GET /videos/{id} (for the tags of a result's segment)

async function loadVideos() {
  clearTimeout(state.gridTimer);
  const id = state.collection;
  if (!id) return $('videos').replaceChildren();
  const videos = await api('GET', `/collections/${enc(id)}/videos?limit=1000`);
  if (id !== state.collection) return;
  const grid = $('videos');
  grid.replaceChildren(...videos.map(videoCard));
  if (!videos.length) grid.append(el('li', { text: 'No videos yet: upload some above.' }));
  // While anything is being processed, look again shortly.
  if (videos.some((v) => v.status === 'uploaded' || v.status === 'processing')) state.gridTimer = setTimeout(() => void loadVideos().catch(() => {}), 2 * POLL_MS);
}

function videoCard(v) {
  const processed = v.status === 'processed';
  const status = v.status === 'processing' && typeof v.progress === 'number' ? `processing ${Math.round(v.progress)}%` : v.status;
  const del = el('button', { type: 'button', class: 'danger', text: 'Delete', 'aria-label': `Delete ${v.filename}` });
  del.addEventListener('click', guarded(() => deleteVideo(v)));
  const play = el('button', { type: 'button', class: 'secondary', text: 'Play', 'aria-label': `Play ${v.filename}` });
  play.addEventListener('click', () => player.play({ video_id: v.video_id, start: 0, end: v.duration ?? 0, filename: v.filename }));
  const moments = el('button', { type: 'button', class: 'secondary', text: 'Moments', 'aria-label': `Moments of ${v.filename}` });
  moments.addEventListener('click', guarded(() => videoView.open(v.video_id)));
  return el(
    'li',
    { class: 'card', 'data-video-id': v.video_id, 'data-status': v.status },
    processed ? el('img', { class: 'thumb', src: `/videos/${enc(v.video_id)}/thumbnail`, alt: `Poster of ${v.filename}`, loading: 'lazy' }) : el('div', { class: 'thumb', role: 'img', 'aria-label': 'no poster yet' }),
    el('p', { class: 'title', text: v.filename }),
    el('p', { class: `meta status-${v.status}`, text: `${status}${v.duration ? ` · ${fmtTime(v.duration)}` : ''}${v.error_message ? `: ${v.error_message}` : ''}` }),
    el('div', { class: 'row' }, play, moments, del),
  );
}

async function deleteVideo(v) {
  if (!confirm(`Delete ${v.filename}? Its file is removed from the server.`)) return;
  await api('DELETE', `/videos/${enc(v.video_id)}`);
  details.delete(v.video_id);
  for (const r of document.querySelectorAll(`#results .result[data-video-id="${CSS.escape(v.video_id)}"]`)) r.closest('li')?.remove();
  const left = $('results').querySelectorAll('.result').length;
  if (state.query) $('search-status').textContent = `${left} result${left === 1 ? '' : 's'} left for ${state.query.label}.`;
  player.forget(v.video_id);
  if (videoView.current() === v.video_id) videoView.close();
  await loadVideos();
  void refreshCounts();
  notice(`${v.filename} deleted.`);
}

/** The collection picker's video counts, quietly. */
async function refreshCounts() {
  try {
    const keep = state.collection;
    collections = await api('GET', '/collections?limit=1000');
    const sel = $('collection');
    for (const opt of sel.options) {
      const c = collections.find((x) => x.id === opt.value);
      if (c) opt.textContent = `${c.name}${c.owner && c.owner !== 'default' ? ` (${c.owner})` : ''} — ${c.video_count} video${c.video_count === 1 ? '' : 's'}`;
    }
    sel.value = keep ?? '';
  } catch {
    /* the counts are a nicety */
  }
}

$('refresh').addEventListener('click', guarded(loadVideos));

// ---- uploads ----------------------------------------------------------------------------------

const queue = [];
let uploading = false;

function addFiles(files) {
  if (!state.collection) return showError('Create or pick a collection first.');
  for (const file of files) {
    const bar = el('progress', { max: 1, value: 0, 'aria-label': `Upload of ${file.name}` });
    const status = el('span', { class: 'status', text: 'waiting' });
    const item = el('li', { 'data-status': 'waiting' }, el('span', { class: 'name', text: file.name }), status, bar);
    $('uploads').prepend(item);
    queue.push({ file, collection: state.collection, item, bar, status });
  }
  if (!uploading) void drain();
}

async function drain() {
  uploading = true;
  while (queue.length) {
    const job = queue.shift();
    try {
      await uploadOne(job);
    } catch (err) {
      setUpload(job, 'failed', err.message);
    }
  }
  uploading = false;
}

function setUpload(job, status, text, fraction) {
  job.item.dataset.status = status;
  job.status.textContent = text;
  job.status.className = `status${status === 'failed' ? ' failed' : ''}`;
  if (fraction === undefined) job.bar.removeAttribute('value');
  else job.bar.value = fraction;
}

function send(job) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/collections/${enc(job.collection)}/videos/upload`);
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) setUpload(job, 'uploading', `uploading ${Math.round((100 * e.loaded) / e.total)}%`, e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      let body;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = undefined;
      }
      if (xhr.status === 202 && body) resolve(body);
      else {
        if (xhr.status === 401 && config.auth) signedOut('The server refused the key: sign in again.');
        reject(new ApiError(xhr.status, describe(xhr.status, body)));
      }
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'the upload was cut off: is vidembed still running?')));
    const form = new FormData();
    form.append('file', job.file, job.file.name);
    setUpload(job, 'uploading', 'uploading 0%', 0);
    xhr.send(form);
  });
}

async function uploadOne(job) {
  const accepted = await send(job);
  const id = accepted.video_id;
  job.item.dataset.videoId = id;
  if (accepted.duplicate) notice(`${job.file.name}: the collection already holds these bytes.`);
  if (job.collection === state.collection) void loadVideos().catch(() => {});
  // Follow the processing until it ends (the upload's progress bar becomes the processing one).
  for (;;) {
    let s;
    try {
      s = await api('GET', `/videos/${enc(id)}/status`);
    } catch (err) {
      if (err.status === 429) {
        await sleep(2 * POLL_MS);
        continue;
      }
      throw err;
    }
    if (s.status === 'processed') {
      setUpload(job, 'processed', accepted.duplicate ? 'already there' : 'processed', 1);
      break;
    }
    if (s.status === 'failed') {
      setUpload(job, 'failed', `failed: ${s.error_message ?? 'the video could not be processed'}`, 0);
      break;
    }
    const pct = typeof s.progress === 'number' ? s.progress : undefined;
    // Searchable before it is processed: the pictures are done, speech is still listening.
    const what = s.searchable ? 'searchable, speech on its way' : s.status;
    setUpload(job, s.status, pct === undefined ? what : `${what} ${Math.round(pct)}%`, pct === undefined ? undefined : pct / 100);
    await sleep(POLL_MS);
  }
  if (job.collection === state.collection) await loadVideos().catch(() => {});
  void refreshCounts();
}

$('file-input').addEventListener('change', (ev) => {
  addFiles([...ev.target.files]);
  ev.target.value = '';
});
const drop = $('drop');
for (const type of ['dragenter', 'dragover']) {
  drop.addEventListener(type, (ev) => {
    ev.preventDefault();
    drop.classList.add('over');
  });
}
for (const type of ['dragleave', 'drop']) drop.addEventListener(type, () => drop.classList.remove('over'));
drop.addEventListener('drop', (ev) => {
  ev.preventDefault();
  const files = [...(ev.dataTransfer?.files ?? [])];
  if (files.length) addFiles(files);
});
// A file dropped beside the zone must not navigate away from the page.
window.addEventListener('dragover', (ev) => ev.preventDefault());
window.addEventListener('drop', (ev) => ev.preventDefault());

// ---- search -----------------------------------------------------------------------------------

/** One menu per filterable tag kind the server names (its tag registry), in its order. */
function fillFilters() {
  const menus = Object.entries(config.filters ?? {}).map(([kind, labels]) => {
    const sel = el('select', { id: `f-${kind}` }, el('option', { value: '', text: 'any' }), ...labels.map((l) => el('option', { value: l, text: l.replaceAll('_', ' ') })));
    sel.dataset.filter = kind;
    sel.addEventListener('change', guarded(again));
    return el('label', {}, `${config.filter_titles?.[kind] ?? kind.replaceAll('_', ' ')} `, sel);
  });
  $('filter-menus').replaceChildren(...menus);
}

/** What the form asks (words, what is said, a picture), or null when it asks nothing. */
function formQuery() {
  const text = $('search-text').value.trim();
  // Said only: the words are looked for in what is said (the transcripts), nowhere else.
  if ($('said-only').checked) return text ? { base: { said: text }, label: `“${text}” said` } : null;
  const pic = state.picture;
  if (!text && !pic) return null;
  const base = {};
  // Seen only: the words are looked for in the pictures (what analysis saw, the picture embedding).
  if (text) base[$('seen-only').checked ? 'seen' : 'text'] = text;
  if (pic) base.image_base64 = pic.base64;
  return { base, label: [text && `“${text}”`, pic && `the picture ${pic.name}`].filter(Boolean).join(' and '), fromForm: true };
}

/** The query with the page's filters, Explain and paging. */
function withOptions(base, offset) {
  const body = { ...base, top_k: PAGE };
  if (offset) body.offset = offset;
  for (const sel of document.querySelectorAll('[data-filter]')) if (sel.value) body[sel.dataset.filter] = sel.value;
  if ($('explain').checked) body.explain = true;
  return body;
}

async function search() {
  if (!state.collection) return;
  const q = formQuery();
  if (!q) return void ($('search-status').textContent = 'Type some words, or choose a picture, to search.');
  await runSearch(q);
}

/** The last search again, as the filters and switches now say (a form search reads the form again). */
async function again() {
  if (!state.query) return;
  if (state.query.fromForm) return search();
  await runSearch(state.query);
}

/** A new search: its first page replaces the results. */
async function runSearch(q) {
  const body = withOptions(q.base);
  state.query = { ...q, next: undefined, likely: 0, weak: 0, shown: 0 };
  $('search-status').textContent = 'Searching…';
  $('more-results').hidden = true;
  const out = await api('POST', `/collections/${enc(state.collection)}/search`, body);
  // Likely matches first; the weak ones (confidence "low") under a line of their own.
  $('results').replaceChildren(el('li', { class: 'weak-line', hidden: true }, el('h3', { text: 'Weaker matches' })));
  showPage(out, body.explain === true);
}

/** Appends a page of results: likely ones above the weaker-matches line, weak ones below it. */
function showPage(out, explain) {
  const q = state.query;
  const list = $('results');
  const line = list.querySelector('.weak-line');
  for (const r of out.results) {
    const weak = isWeak(r);
    const li = el('li', { ...(weak ? { class: 'weak' } : {}), 'data-kinds': (r.kinds ?? []).join(' ') }, ...resultCard(r, explain));
    if (weak) list.append(li);
    else line.before(li);
    q[weak ? 'weak' : 'likely']++;
  }
  line.hidden = q.weak === 0;
  q.next = out.next_offset;
  $('more-results').hidden = !q.next;
  $('search-status').textContent = searchSummary({ likely: q.likely, weak: q.weak, label: q.label, warnings: out.warnings ?? [] });
  showKindFilter();
  void fillTags(out.results);
}

$('more-results').addEventListener(
  'click',
  guarded(async () => {
    const q = state.query;
    if (!q?.next) return;
    const body = withOptions(q.base, q.next);
    const out = await api('POST', `/collections/${enc(state.collection)}/search`, body);
    if (state.query !== q) return;
    showPage(out, body.explain === true);
  }),
);

/** A result: the moment (a button that plays it) and "More like this" (a search by that moment). */
function resultCard(r, explain) {
  const b = el('button', { type: 'button', class: 'result', 'data-video-id': r.video_id, 'data-start': r.start, 'data-end': r.end, 'data-confidence': r.confidence_label });
  b.setAttribute('aria-label', `Play ${r.filename} from ${fmtTime(r.start)} to ${fmtTime(r.end)}${r.said ? `, where it says “${r.said.text.replaceAll('*', '')}”` : ''}`);
  const thumb = typeof r.thumbnail_url === 'string' && r.thumbnail_url.startsWith('/') ? r.thumbnail_url : `/videos/${enc(r.video_id)}/thumbnail?t=${r.start}`;
  b.append(
    el('img', { class: 'thumb', src: thumb, alt: '', loading: 'lazy' }),
    el('p', { class: 'title', text: r.filename }),
    el('p', { class: 'meta', text: `${r.confidence_label} confidence ${r.confidence.toFixed(2)} · ${fmtTime(r.start)}–${fmtTime(r.end)}` }),
    badges(r),
    el('ul', { class: 'tags', 'aria-label': 'tags' }),
  );
  if (r.said) b.append(saidSnippet(r.said));
  for (const k of ['seen', 'written']) {
    const snippet = r.evidence?.[k]?.snippet;
    if (snippet) b.append(el('p', { class: `snippet snippet-${k}` }, el('span', { class: 'said-label', text: k === 'seen' ? 'seen ' : 'on screen ' }), snippet));
  }
  if (explain) {
    if (r.description) b.append(el('p', { class: 'meta', text: `saw: ${r.description}` }));
    b.append(el('p', { class: 'meta', text: r.matched_words?.length ? `matched words: ${r.matched_words.join(', ')}` : 'no query word matched: found by similarity' }));
    for (const k of r.kinds ?? []) {
      const e = r.evidence[k];
      const parts = e.parts ? Object.entries(e.parts).map(([n, v]) => `${n} ${v}`).join(', ') : '';
      b.append(el('p', { class: 'meta explain-kind', text: `${k}: probability ${e.probability.toFixed(2)}${parts ? ` (${parts})` : ''}` }));
    }
  }
  b.addEventListener('click', () => player.play(r, b));
  const like = el('button', { type: 'button', class: 'secondary like', text: 'More like this', 'aria-label': `More like ${r.filename} at ${fmtTime(r.start)}` });
  like.addEventListener(
    'click',
    guarded(() => runSearch({ base: { like: { video_id: r.video_id, t: r.start } }, label: `moments like ${r.filename} at ${fmtTime(r.start)}` })),
  );
  return [b, like];
}

/** The kinds of evidence that matched, each a badge with its own probability. */
function badges(r) {
  const ul = el('ul', { class: 'badges', 'aria-label': 'evidence' });
  for (const k of r.kinds ?? []) {
    const p = r.evidence?.[k]?.probability;
    ul.append(el('li', { class: `badge badge-${k}`, title: `${k}: probability ${p?.toFixed(2) ?? '?'} that this is what you asked for`, text: k }));
  }
  return ul;
}

/** The kind filter: shown once results are there, and applied to every result. */
function showKindFilter() {
  $('kind-filter').hidden = $('results').querySelectorAll('.result').length === 0;
  applyKindFilter();
}

function applyKindFilter() {
  const kind = state.kindFilter ?? '';
  for (const li of $('results').querySelectorAll('li[data-kinds]')) li.hidden = kind !== '' && !li.dataset.kinds.split(' ').includes(kind);
  for (const b of $('kind-filter').querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.kind === kind));
}

for (const b of $('kind-filter').querySelectorAll('button')) {
  b.addEventListener('click', () => {
    state.kindFilter = b.dataset.kind;
    applyKindFilter();
  });
}

/** What is said around a spoken match, its matched words (between asterisks in `said.text`) marked. */
function saidSnippet(said) {
  const p = el('p', { class: 'said' }, el('span', { class: 'said-label', text: 'said ' }));
  said.text.split('*').forEach((part, i) => p.append(i % 2 ? el('mark', { text: part }) : part));
  return p;
}

/** Each result's tags: those of its moment, in the result; from GET /videos/{id} for an older server. */
async function fillTags(results) {
  await Promise.all(
    results.map(async (r) => {
      if (r.tags) return showTags(r, tagWords(r.tags));
      let d = details.get(r.video_id);
      if (!d) {
        d = api('GET', `/videos/${enc(r.video_id)}`).catch(() => null);
        details.set(r.video_id, d);
      }
      const video = await d;
      if (!video) return details.delete(r.video_id);
      const seg = (video.segments ?? []).reduce((best, s) => (s.start <= r.start + 1e-3 && (!best || s.start > best.start) ? s : best), null);
      showTags(r, tagWords(seg?.tags ?? video.tags));
    }),
  );
}

function showTags(r, tags) {
  for (const b of document.querySelectorAll(`#results .result[data-video-id="${CSS.escape(r.video_id)}"][data-start="${CSS.escape(String(r.start))}"] .tags`)) {
    b.replaceChildren(...tags.map((t) => el('li', { text: t })));
  }
}

function tagWords(tags) {
  if (!tags) return [];
  const out = [];
  for (const k of Object.keys(config.filters ?? {})) {
    const label = tags[k]?.label;
    if (typeof label === 'string') out.push(label.replaceAll('_', ' '));
  }
  return out;
}

$('search-form').addEventListener(
  'submit',
  guarded(async (ev) => {
    ev.preventDefault();
    await search();
  }),
);
$('said-only').addEventListener('change', (ev) => {
  if (ev.target.checked) $('seen-only').checked = false;
  $('search-text').placeholder = ev.target.checked ? 'words that are said' : 'a dog on the grass';
});
for (const id of ['explain', 'said-only', 'seen-only']) $(id).addEventListener('change', guarded(again));
// Only what is said and only what is seen exclude each other.
$('seen-only').addEventListener('change', (ev) => {
  if (ev.target.checked && $('said-only').checked) $('said-only').checked = false;
});

// ---- search by picture ------------------------------------------------------------------------

/** Takes a picture as (part of) the query, shows it, and searches. */
async function setPicture(file) {
  if (!file) return;
  if (!/^image\//.test(file.type)) throw new Error(`${file.name} is not a picture: choose a JPEG, PNG or WebP image.`);
  if (file.size > MAX_PICTURE_BYTES) throw new Error(`${file.name} is over 32 MiB: choose a smaller picture.`);
  const base64 = await new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(new Error(`${file.name} could not be read`));
    reader.readAsDataURL(file);
  });
  clearPicture();
  state.picture = { name: file.name, base64, url: URL.createObjectURL(file) };
  $('search-picture-img').src = state.picture.url;
  $('search-picture-name').textContent = file.name;
  $('search-picture').hidden = false;
  if ($('said-only').checked) $('said-only').checked = false; // a picture is not something said
  await search();
}

function clearPicture() {
  if (state.picture) URL.revokeObjectURL(state.picture.url);
  state.picture = null;
  $('search-picture').hidden = true;
  $('search-picture-img').removeAttribute('src');
  $('search-image').value = '';
}

$('search-image').addEventListener('change', guarded((ev) => setPicture(ev.target.files?.[0])));
$('clear-picture').addEventListener('click', () => {
  clearPicture();
  $('search-text').focus();
});
const pictureZone = $('search-form');
for (const type of ['dragenter', 'dragover']) {
  pictureZone.addEventListener(type, (ev) => {
    ev.preventDefault();
    $('picture-drop').classList.add('over');
  });
}
for (const type of ['dragleave', 'drop']) pictureZone.addEventListener(type, () => $('picture-drop').classList.remove('over'));
pictureZone.addEventListener(
  'drop',
  guarded(async (ev) => {
    ev.preventDefault();
    ev.stopPropagation();
    await setPicture([...(ev.dataTransfer?.files ?? [])][0]);
  }),
);

// ---- player and the page of one video ---------------------------------------------------------

const transcript = createTranscript({ api, player: $('player'), box: $('transcript'), status: $('transcript-status') });
const player = createPlayer({ api, transcript, onMoments: (id) => guarded(() => videoView.open(id))() });
const videoView = createVideoView({ api, player, tagWords });

start().catch(showError);
