// The page of one video (#video=<id>): its moments (GET /videos/{id} segments) on a timeline and
// as a list — keyframe, time range, tags, what the engine saw — each a button that plays the video
// from it in the player dock, which opens with the page (its transcript panel shows what is said).
// The moment playing is marked as the video plays.

import { $, el, enc, fmtTime } from './dom.js';

/** `api` is the page's API call, `player` the dock (player.js), `tagWords(tags)` a moment's tag labels. */
export function createVideoView({ api, player, tagWords }) {
  const view = $('video-view');
  let video = null;
  let buttons = []; // [timeline button, list button] per moment

  async function open(id) {
    const v = await api('GET', `/videos/${enc(id)}`);
    video = v;
    view.hidden = false;
    view.dataset.videoId = v.video_id;
    $('video-h').textContent = v.filename;
    const segs = v.segments ?? [];
    const how = v.playback === 'proxy' ? ' · plays from a browser copy' : v.playback === 'none' ? ' · cannot be played in a browser' : '';
    $('video-meta').textContent = `${v.status}${v.duration ? ` · ${fmtTime(v.duration)}` : ''}${v.width ? ` · ${v.width}x${v.height}` : ''}${v.codec ? ` · ${v.codec}` : ''} · ${segs.length} moment${segs.length === 1 ? '' : 's'}${how}`;
    // Each capability's state (GET /videos/{id} `analysis`): speech may still run while the pictures are searchable.
    $('video-analysis').replaceChildren(
      ...Object.entries(v.analysis ?? {}).map(([name, a]) => {
        const why = a.reason || a.message || '';
        return el('li', { 'data-capability': name, 'data-status': a.status, title: why, text: `${name}: ${a.status}${why ? ` (${why})` : ''}` });
      }),
    );
    const total = v.duration || segs.reduce((m, s) => Math.max(m, s.end), 0) || 1;
    buttons = segs.map((s, i) => {
      const label = `Play moment ${i + 1}, ${fmtTime(s.start)}–${fmtTime(s.end)}${s.description ? `: ${s.description}` : ''}`;
      const bar = el('button', { type: 'button', class: 'tick', 'data-start': s.start, 'data-end': s.end, 'aria-label': label, title: `${fmtTime(s.start)}–${fmtTime(s.end)}` });
      bar.style.flexGrow = String(Math.max(0.01, (s.end - s.start) / total));
      const thumb = typeof s.thumbnail_url === 'string' && s.thumbnail_url.startsWith('/') ? s.thumbnail_url : `/videos/${enc(v.video_id)}/thumbnail?t=${s.start}`;
      const card = el(
        'button',
        { type: 'button', class: 'moment', 'data-start': s.start, 'data-end': s.end, 'aria-label': label },
        el('img', { class: 'thumb', src: thumb, alt: '', loading: 'lazy' }),
        el('p', { class: 'title', text: `${fmtTime(s.start)}–${fmtTime(s.end)}` }),
        el('ul', { class: 'tags', 'aria-label': 'tags' }, ...tagWords(s.tags).map((t) => el('li', { text: t }))),
        s.description ? el('p', { class: 'meta', text: `saw: ${s.description}`, title: s.description }) : null,
      );
      const go = () => player.play({ video_id: v.video_id, start: s.start, end: s.end, filename: v.filename }, card);
      bar.addEventListener('click', go);
      card.addEventListener('click', go);
      return [bar, card];
    });
    $('timeline').replaceChildren(...buttons.map(([b]) => b));
    $('moments').replaceChildren(...buttons.map(([, c]) => el('li', {}, c)));
    if (!segs.length) $('moments').append(el('li', { class: 'meta', text: v.status === 'processed' ? 'No moments.' : `No moments yet: the video is ${v.status}.` }));
    history.replaceState(null, '', `#video=${enc(v.video_id)}`);
    // The player (and its transcript of what is said) opens on this video, unless it plays it already.
    if (player.videoId() !== v.video_id) void player.play({ video_id: v.video_id, start: 0, end: 0, filename: v.filename }, null, { cue: true });
    view.scrollIntoView({ block: 'start' });
    $('video-h').focus?.();
    return v;
  }

  function close() {
    view.hidden = true;
    video = null;
    buttons = [];
    delete view.dataset.videoId;
    if (/^#video=/.test(location.hash)) history.replaceState(null, '', location.pathname + location.search);
  }

  // The moment the player is in is marked on the timeline and in the list.
  player.onTime((id, t) => {
    if (!video || id !== video.video_id) return;
    for (const [bar, card] of buttons) {
      const on = t >= Number(bar.dataset.start) && t < Number(bar.dataset.end);
      bar.classList.toggle('current', on);
      card.classList.toggle('current', on);
      if (on) card.setAttribute('aria-current', 'true');
      else card.removeAttribute('aria-current');
    }
  });

  $('close-video').addEventListener('click', close);
  $('video-h').tabIndex = -1;

  return { open, close, current: () => video?.video_id };
}
