// The player dock: a clicked result (or a video's Play, or a moment) plays here, in view wherever
// the page is scrolled — fixed at the bottom of the window on a phone, at its bottom right on a
// wider screen — seeked to the moment and stopping at its end. Esc or Close closes it. It plays
// the URL the API gives for playback (`playback_url` of GET /videos/{id}: the original file when
// browsers play it, else the playback copy made at ingest); a video that cannot be played says so
// in the dock instead of leaving a dead player.

import { $, enc, fmtTime } from './dom.js';

/** What plays a video (GET /videos/{id}) in the page: `{url}`, or `{error}` saying why nothing does. */
export function playbackChoice(v) {
  if (v.playback_url) return { url: v.playback_url };
  if (v.status === 'failed') return { error: `${v.filename} cannot be played: its processing failed.` };
  if (v.status !== 'processed') return { error: `${v.filename} cannot be played yet: it is still being processed.` };
  // A server from before playback copies: its original file is all there is.
  if (v.playback === undefined) return { url: `/videos/${enc(v.video_id)}/file` };
  return { error: `${v.filename} cannot be played in a browser: its format is not one browsers play, and no playback copy could be made.` };
}

/**
 * `api(method, path)` is the page's API call; `transcript` the transcript panel; `onMoments(id)`
 * opens the page of one video. Returns `play(moment, button?)`, `close()`, `forget(videoId)` (a
 * deleted video), `videoId()` and `onTime(fn)` (called with the video id and time as it plays).
 */
export function createPlayer({ api, transcript, onMoments }) {
  const dock = $('player-dock');
  const player = $('player');
  const errorLine = $('player-error');
  let pending = null; // the moment to seek to once the file's metadata is in
  let stopAt = null; // pause here (the moment's end)
  let ourSeek = false;
  let asked = 0; // the play() in flight: a later one wins
  let opener = null; // what had the focus before the dock opened (it gets it back on close)
  const listeners = [];

  function open() {
    if (dock.hidden) opener = document.activeElement;
    dock.hidden = false;
    document.body.classList.add('docked');
  }

  function close() {
    player.pause();
    dock.hidden = true;
    document.body.classList.remove('docked');
    if (opener && document.contains(opener) && typeof opener.focus === 'function') opener.focus();
    opener = null;
  }

  function fail(message) {
    pending = null;
    stopAt = null;
    player.pause();
    player.hidden = true;
    errorLine.textContent = message;
    errorLine.hidden = false;
  }

  function clearFailure() {
    player.hidden = false;
    errorLine.hidden = true;
    errorLine.textContent = '';
  }

  async function playbackOf(id) {
    return playbackChoice(await api('GET', `/videos/${enc(id)}`));
  }

  /** Plays moment `r` (`cue: true` loads it and stops there, without playing). */
  async function play(r, button, { cue = false } = {}) {
    const mine = ++asked;
    for (const b of document.querySelectorAll('.result.playing')) b.classList.remove('playing');
    button?.classList.add('playing');
    open();
    $('now-playing').textContent = cue ? r.filename : `${r.filename}: ${fmtTime(r.start)}–${fmtTime(r.end)}`;
    dock.dataset.videoId = r.video_id;
    const moment = { start: Number(r.start) || 0, end: Number(r.end) || 0, cue };
    void transcript.show(r.video_id, r.said);
    if (player.dataset.videoId === r.video_id && player.readyState >= 1 && !player.hidden) return seekTo(moment);
    let found;
    try {
      found = await playbackOf(r.video_id);
    } catch (err) {
      found = { error: `${r.filename} cannot be played: ${err.message}` };
    }
    if (mine !== asked) return;
    if (found.error) {
      player.removeAttribute('src');
      player.load();
      delete player.dataset.videoId;
      return fail(found.error);
    }
    clearFailure();
    pending = moment;
    player.dataset.videoId = r.video_id;
    player.src = found.url;
  }

  function seekTo(m) {
    if (m.cue && m.start === 0) return; // loaded, at its start: nothing to seek or play
    stopAt = m.end > m.start ? m.end : null;
    ourSeek = true;
    player.currentTime = m.start;
    if (m.cue) return;
    player.play().catch(() => {
      /* the user can press play */
    });
  }

  function forget(videoId) {
    if (player.dataset.videoId !== videoId) return;
    player.removeAttribute('src');
    player.load();
    delete player.dataset.videoId;
    $('now-playing').textContent = '';
    transcript.clear();
    close();
  }

  player.addEventListener('loadedmetadata', () => {
    // Sound without a picture is a player that looks dead: say so instead.
    if (player.videoWidth === 0) return fail('This browser plays the sound of this video but cannot show its picture.');
    if (!pending) return;
    const m = pending;
    pending = null;
    seekTo(m);
  });
  player.addEventListener('seeking', () => {
    if (!ourSeek) stopAt = null; // the user took over
    ourSeek = false;
  });
  function checkStop() {
    if (stopAt !== null && player.currentTime >= stopAt) {
      stopAt = null;
      player.pause();
    }
  }
  // timeupdate comes every 15-250 ms; where the browser offers it, every frame is checked too.
  player.addEventListener('timeupdate', () => {
    checkStop();
    for (const fn of listeners) fn(player.dataset.videoId, player.currentTime);
  });
  if ('requestVideoFrameCallback' in HTMLVideoElement.prototype) {
    const onFrame = () => {
      checkStop();
      player.requestVideoFrameCallback(onFrame);
    };
    player.requestVideoFrameCallback(onFrame);
  }
  player.addEventListener('error', () => {
    if (!player.getAttribute('src')) return;
    const code = player.error?.code;
    const why = code === 4 ? 'this browser does not decode its format' : code === 2 ? 'the connection to the server broke' : code === 3 ? 'its data could not be decoded' : 'it could not be loaded';
    fail(`The video could not be played: ${why} (or the session ended: reload the page).`);
  });

  $('close-player').addEventListener('click', close);
  $('dock-moments').addEventListener('click', () => dock.dataset.videoId && onMoments(dock.dataset.videoId));
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && !dock.hidden && !ev.defaultPrevented) {
      ev.preventDefault();
      close();
    }
  });

  return {
    play,
    close,
    forget,
    videoId: () => player.dataset.videoId,
    onTime: (fn) => listeners.push(fn),
  };
}
