// The playing video's transcript (GET /videos/{id}/transcript): every word a button that plays
// the video from it, the word being spoken highlighted as playback goes (and kept in view inside
// the panel), and the words a search matched marked. Keyboard: Tab reaches one word (the current
// one), the arrow keys move between words, Home and End go to the first and last, Enter or Space
// plays from the word.

import { el, enc, fmtTime } from './dom.js';

/** A word stays highlighted this long after its end (the pause before the next one). */
const LINGER_S = 0.4;
/** How far outside a search match's times a word may start or end and still be one of its words. */
const MATCH_SLACK_S = 0.05;

const norm = (w) => String(w).toLowerCase().replace(/[^\p{L}\p{N}']+/gu, '');

/** The index of the word being said at `t` seconds (the last one started, while it lasts), or -1. */
export function wordAt(words, t) {
  let lo = 0;
  let hi = words.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (words[mid].start <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && t < words[found].end + LINGER_S ? found : -1;
}

/**
 * The indexes of the words a search matched (`said` of a result: its times and matched words):
 * the words said within the match's times whose text is one of `said.matched`; all the words
 * within those times when none is (a match by sound may spell the query's words differently).
 */
export function matchedWords(words, said) {
  if (!said || !Number.isFinite(said.start) || !Number.isFinite(said.end)) return [];
  const within = [];
  words.forEach((w, i) => {
    if (w.start >= said.start - MATCH_SLACK_S && w.end <= said.end + MATCH_SLACK_S) within.push(i);
  });
  const wanted = new Set((said.matched ?? []).map(norm).filter(Boolean));
  const byText = within.filter((i) => wanted.has(norm(words[i].w)));
  return byText.length ? byText : within;
}

/**
 * The transcript panel. `api(method, path)` is the page's API call (it sends the key);
 * `player` the <video>; `box` the element the words go in; `status` a line for what it is doing.
 * Returns `show(videoId, said?)` (when a video starts playing; `said` marks a search's match) and
 * `clear()`.
 */
export function createTranscript({ api, player, box, status }) {
  let videoId = null;
  let words = [];
  let buttons = [];
  let current = -1;
  let loading = null; // the show() in flight: a later one wins
  let ready = false;

  function setStatus(text) {
    status.textContent = text;
  }

  function clear(text = 'Play a video to see what is said in it.') {
    videoId = null;
    words = [];
    buttons = [];
    current = -1;
    ready = false;
    loading = null;
    box.replaceChildren();
    box.hidden = true;
    setStatus(text);
  }

  async function show(id, said) {
    if (id === videoId && ready) return mark(said);
    clear('Loading the transcript…');
    videoId = id;
    const mine = {};
    loading = mine;
    let t;
    try {
      t = await api('GET', `/videos/${enc(id)}/transcript`);
    } catch (err) {
      if (loading === mine) setStatus(`No transcript: ${err.message}`);
      return;
    }
    if (loading !== mine) return;
    loading = null;
    ready = true;
    words = Array.isArray(t?.words) ? t.words : [];
    if (!words.length) return setStatus(`No transcript: ${t?.reason || 'nothing was heard'}`);
    setStatus(`${words.length} word${words.length === 1 ? '' : 's'} heard${t.engine ? ` by ${t.engine}` : ''}: choose one to play from it.`);
    buttons = words.map((w, i) => {
      const b = el('button', { type: 'button', class: 'word', text: w.w, tabIndex: i === 0 ? 0 : -1, 'data-start': w.start, 'data-end': w.end, 'data-index': i });
      b.setAttribute('aria-label', `${w.w}, at ${fmtTime(w.start)}`);
      return b;
    });
    const frag = document.createDocumentFragment();
    buttons.forEach((b, i) => frag.append(...(i ? [' ', b] : [b])));
    box.replaceChildren(frag);
    box.hidden = false;
    mark(said);
    follow();
  }

  /** Marks the words of a search's match (and brings the first into view); unmarks the others. */
  function mark(said) {
    for (const b of box.querySelectorAll('button.word.matched')) {
      b.classList.remove('matched');
      b.textContent = words[Number(b.dataset.index)].w;
    }
    const hits = matchedWords(words, said);
    for (const i of hits) {
      buttons[i].classList.add('matched');
      buttons[i].replaceChildren(el('mark', { text: words[i].w }));
    }
    if (hits.length) reveal(buttons[hits[0]]);
  }

  /** Scrolls the panel (only the panel, never the page) so `b` is in view. */
  function reveal(b) {
    const top = b.offsetTop;
    const bottom = top + b.offsetHeight;
    if (top < box.scrollTop || bottom > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  }

  /** Highlights the word being said now. */
  function follow() {
    if (!buttons.length || player.dataset.videoId !== videoId) return;
    const i = wordAt(words, player.currentTime);
    if (i === current) return;
    if (current >= 0) {
      buttons[current].classList.remove('current');
      buttons[current].removeAttribute('aria-current');
    }
    current = i;
    if (i < 0) return;
    buttons[i].classList.add('current');
    buttons[i].setAttribute('aria-current', 'true');
    if (!box.contains(document.activeElement)) rove(i, false);
    reveal(buttons[i]);
  }

  /** Makes word `i` the one Tab reaches (and focuses it when asked). */
  function rove(i, focus) {
    for (const b of box.querySelectorAll('button.word[tabindex="0"]')) b.tabIndex = -1;
    buttons[i].tabIndex = 0;
    if (focus) buttons[i].focus();
  }

  box.addEventListener('click', (ev) => {
    const b = ev.target.closest('button.word');
    if (!b || !box.contains(b)) return;
    const i = Number(b.dataset.index);
    rove(i, false);
    // A seek that is not the page's own: the player's stop-at-the-result's-end is dropped.
    player.currentTime = words[i].start;
    player.play().catch(() => {
      /* the user can press play */
    });
  });

  box.addEventListener('keydown', (ev) => {
    const b = ev.target.closest('button.word');
    if (!b) return;
    const i = Number(b.dataset.index);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: buttons.length - 1 }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    rove(Math.min(buttons.length - 1, Math.max(0, to)), true);
  });

  player.addEventListener('timeupdate', follow);
  player.addEventListener('seeked', follow);

  clear();
  return { show, clear };
}
