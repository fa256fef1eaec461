/**
 * Every clip plays, where the user looks (issue 22), in real headless Chromium (Debian's
 * `chromium`, driven by playwright-core) against `vidembed ui --no-open` as a real process: every
 * video of ../shared/eval/videos is uploaded through the page and processed by the real engine;
 * each reaches `canplay` from the URL the API gives for playback (`playback_url`: the original's
 * file when browsers play it, else the playback copy made at ingest) and seeks. A clicked result
 * opens the player in view at 1280x900 and at 390x844, seeked to its moment; Esc closes it. The
 * page of one video lists its moments and plays from one; search by picture and "More like this"
 * send what the API takes; weak matches sit under their own line; a video that fails to play
 * shows an error instead of a dead player. With `VIDEMBED_WEB_SHOTS=<dir>` it writes screenshots
 * of the playing result at both sizes and of a video's page there.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { playsInBrowser } from '../../src/media/playback.js';
import { probe, probeDetails } from '../../src/media/probe.js';
import { evalPhoto, evalVideos, evalVideosDir, isCI, removeDir, requireSharedData, tempDir } from '../helpers/clips.js';
import { http } from '../helpers/server.js';
import { CHROMIUM, haveChromium, launchChromium, startUi, stop, type Ui } from '../helpers/web-ui.js';

if (!haveChromium && !isCI) {
  process.stderr.write(`\n!!! SKIPPING the web playback e2e test: ${CHROMIUM} not found (apt-get install chromium; .ci/run does it) !!!\n\n`);
}
const haveData = requireSharedData([evalVideosDir], 'the evaluation videos');

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PROCESS_TIMEOUT_MS = 540_000;

interface Uploaded {
  name: string;
  id: string;
}

describe.skipIf((!haveChromium && !isCI) || !haveData)('every clip plays, where the user looks (vidembed ui, real Chromium)', () => {
  let dir: string;
  let shots: string | undefined;
  let ui: Ui;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let key: string;
  let videos: Uploaded[] = [];
  const pageErrors: string[] = [];

  const shoot = async (name: string) => {
    if (!page) return;
    shots ??= mkdtempSync(path.join(os.tmpdir(), 'vidembed-web-shots-'));
    const file = path.join(shots, `${name.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 80)}.png`);
    await page.screenshot({ path: file }).catch(() => {});
    process.stderr.write(`web playback e2e: screenshot of the failure: ${file}\n`);
  };

  /** Does `action`, and answers the body of the search request it causes and the API's answer. */
  const searched = async (action: () => Promise<unknown>) => {
    const response = page.waitForResponse((r) => r.request().method() === 'POST' && /\/collections\/[^/]+\/search$/.test(new URL(r.url()).pathname), { timeout: 60_000 });
    await action();
    const r = await response;
    expect(r.status()).toBe(200);
    const answer = (await r.json()) as { results: { video_id: string; start: number; end: number; confidence_label: string }[] };
    await expect.poll(() => page.locator('#results .result').count(), { timeout: 15_000 }).toBe(answer.results.length);
    return { body: r.request().postDataJSON() as Record<string, unknown>, answer };
  };

  /** The time of the player's next `seeked` (listen before the action that seeks). */
  const nextSeek = () =>
    page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const v = document.getElementById('player') as HTMLVideoElement;
          v.addEventListener('seeked', () => resolve(v.currentTime), { once: true });
        }),
    );

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`${CHROMIUM} not found: it is required under CI (.ci/run installs the Debian package chromium)`);
    dir = tempDir('vidembed-e2e-playback-');
    ui = await startUi(path.join(dir, 'home'));
    browser = await launchChromium();
    context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
    page.on('dialog', (d) => void d.accept());
    await page.goto(ui.link);
    await page.locator('#app').waitFor({ state: 'visible', timeout: 30_000 });
    key = await page.evaluate(() => sessionStorage.getItem('vidembed.key') ?? '');
  });

  beforeEach(({ onTestFailed, task }) => {
    onTestFailed(() => shoot(task.name));
  });

  afterAll(async () => {
    await browser?.close();
    if (ui) expect(await stop(ui.proc)).toBe(0);
    if (dir) removeDir(dir);
    if (shots) process.stderr.write(`web playback e2e: failure screenshots are in ${shots}\n`);
  });

  it('uploads every evaluation video through the page; the engine processes each', async () => {
    await page.fill('#new-collection-name', 'eval videos');
    await page.click('#new-collection button[type=submit]');
    await expect.poll(() => page.locator('#collection option:checked').textContent(), { timeout: 15_000 }).toMatch(/^eval videos/);
    const files = evalVideos();
    await page.setInputFiles('#file-input', files);
    await expect.poll(() => page.locator('#uploads li').count(), { timeout: 15_000 }).toBe(files.length);
    await page.waitForFunction(() => [...document.querySelectorAll('#uploads li')].every((li) => ['processed', 'failed'].includes((li as HTMLElement).dataset.status ?? '')), null, {
      timeout: PROCESS_TIMEOUT_MS,
      polling: 1000,
    });
    const states = await page.locator('#uploads li').evaluateAll((lis) => lis.map((li) => ({ name: li.querySelector('.name')!.textContent!, status: (li as HTMLElement).dataset.status, id: (li as HTMLElement).dataset.videoId!, text: li.querySelector('.status')!.textContent })));
    for (const s of states) expect(s, JSON.stringify(s)).toMatchObject({ status: 'processed' });
    videos = states.map((s) => ({ name: s.name, id: s.id }));
    expect(videos.map((v) => v.name).sort()).toEqual(files.map((f) => path.basename(f)).sort());
  }, 600_000);

  it('gives each video the URL that plays (its own file when browsers play it, else its playback copy): each reaches canplay there and seeks', async () => {
    for (const v of videos) {
      const d = await http(ui.base, 'GET', `/videos/${v.id}`, { key });
      expect(d.status).toBe(200);
      const plays = playsInBrowser(await probe(path.join(evalVideosDir, v.name))).plays;
      expect(d.body, v.name).toMatchObject({ playback: plays ? 'original' : 'proxy', playback_url: plays ? `/videos/${v.id}/file` : `/videos/${v.id}/playback` });
      // Only a video with a playback copy has one to serve.
      if (plays) expect((await http(ui.base, 'GET', `/videos/${v.id}/playback`, { key })).status).toBe(404);
      const duration = d.body.duration as number;
      const target = Math.round(duration * 0.6 * 100) / 100;
      // A fresh <video> in the page, on the URL the API gave (the page's media cookie reads it).
      const got = await page.evaluate(
        ([url, to]) =>
          new Promise<{ ok: boolean; error?: string; width: number; duration: number; seekedAt: number }>((resolve) => {
            const v = document.createElement('video');
            v.muted = true;
            v.preload = 'auto';
            const done = (r: { ok: boolean; error?: string }) => {
              resolve({ ...r, width: v.videoWidth, duration: v.duration, seekedAt: v.currentTime });
              v.removeAttribute('src');
              v.load();
            };
            const timer = setTimeout(() => done({ ok: false, error: `no canplay and seeked within 30 s (readyState ${v.readyState})` }), 30_000);
            v.addEventListener('error', () => {
              clearTimeout(timer);
              done({ ok: false, error: `media error ${v.error?.code}: ${v.error?.message}` });
            });
            v.addEventListener(
              'canplay',
              () => {
                v.addEventListener('seeked', () => {
                  clearTimeout(timer);
                  done({ ok: true });
                }, { once: true });
                v.currentTime = to;
              },
              { once: true },
            );
            v.src = url;
          }),
        [d.body.playback_url as string, target] as const,
      );
      expect(got, `${v.name} from ${d.body.playback_url}`).toMatchObject({ ok: true });
      expect(got.width, v.name).toBeGreaterThan(0);
      expect(Math.abs(got.duration - duration), `${v.name}: the browser's duration ${got.duration}, the API's ${duration}`).toBeLessThan(0.6);
      expect(Math.abs(got.seekedAt - target), `${v.name}: seeked to ${got.seekedAt}, asked ${target}`).toBeLessThanOrEqual(0.25);
    }
  });

  it('sets weak matches apart: likely ones first, the rest under "Weaker matches"; the status says when nothing is likely', async () => {
    await page.fill('#search-text', 'people walking in a hall');
    const { body, answer } = await searched(() => page.press('#search-text', 'Enter'));
    expect(body).toMatchObject({ text: 'people walking in a hall', top_k: 20 });
    expect(answer.results.length).toBe(videos.length);
    const shown = await page.locator('#results > li').evaluateAll((lis) => lis.map((li) => (li.classList.contains('weak-line') ? 'line' : (li.querySelector('.result') as HTMLElement).dataset.confidence)));
    const line = shown.indexOf('line');
    const likely = answer.results.filter((r) => r.confidence_label !== 'low').length;
    const weak = answer.results.length - likely;
    expect(line).toBe(likely);
    expect(shown.slice(0, line).every((c) => c !== 'low')).toBe(true);
    expect(shown.slice(line + 1).every((c) => c === 'low')).toBe(true);
    expect(await page.locator('#results .weak-line').isVisible()).toBe(weak > 0);
    const status = (await page.textContent('#search-status'))!;
    if (likely === 0) expect(status).toMatch(/Nothing likely: only weaker matches\./);
    else if (weak) expect(status).toContain(`${likely} likely, ${weak} weaker.`);
    // Nine videos fit one page: no "Show more".
    expect(await page.locator('#more-results').isHidden()).toBe(true);
  });

  it('"Show more" asks for the page at next_offset and adds it to the results', async () => {
    const full = (await searched(() => page.press('#search-text', 'Enter'))).answer.results;
    // The first answer as a server with pages of 5 would give it: five results, next_offset 5.
    await page.route(
      '**/collections/*/search',
      async (route) => {
        const response = await route.fetch();
        const json = await response.json();
        await route.fulfill({ response, json: { ...json, results: json.results.slice(0, 5), next_offset: 5 } });
      },
      { times: 1 },
    );
    const first = await searched(() => page.press('#search-text', 'Enter'));
    expect(first.answer.results).toHaveLength(5);
    expect(await page.locator('#more-results').isVisible()).toBe(true);
    const response = page.waitForResponse((r) => r.request().method() === 'POST' && /\/collections\/[^/]+\/search$/.test(new URL(r.url()).pathname), { timeout: 60_000 });
    await page.click('#more-results');
    const r = await response;
    expect(r.request().postDataJSON()).toMatchObject({ text: 'people walking in a hall', top_k: 20, offset: 5 });
    expect(((await r.json()) as { results: unknown[] }).results).toHaveLength(full.length - 5);
    // Both pages are shown: the same moments as the whole answer (likely ones still above the line).
    await expect.poll(() => page.locator('#results .result').count(), { timeout: 15_000 }).toBe(full.length);
    const shown = await page.locator('#results .result').evaluateAll((bs) => bs.map((b) => `${(b as HTMLElement).dataset.videoId}@${(b as HTMLElement).dataset.start}`));
    expect([...shown].sort()).toEqual(full.map((x) => `${x.video_id}@${x.start}`).sort());
    expect(await page.locator('#more-results').isHidden()).toBe(true);
  });

  it('plays a clicked result in view, seeked to its moment, at 1280x900 and at 390x844; Esc closes the player', async () => {
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      // The last result: on a phone it is thousands of pixels down the page.
      const target = page.locator('#results .result').last();
      const start = Number(await target.getAttribute('data-start'));
      const end = Number(await target.getAttribute('data-end'));
      await target.scrollIntoViewIfNeeded();
      const seeked = nextSeek();
      await target.click();
      const t = await seeked;
      expect(Math.abs(t - start), `${size.width}: seeked to ${t}, the moment starts at ${start}`).toBeLessThanOrEqual(0.5);
      expect(await page.locator('#player-dock').isVisible()).toBe(true);
      const box = (await page.locator('#player').boundingBox())!;
      expect(box.height).toBeGreaterThan(50);
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, `${size.width}x${size.height}: ${JSON.stringify(box)}`).toBeLessThanOrEqual(size.width);
      expect(box.y + box.height, `${size.width}x${size.height}: ${JSON.stringify(box)}`).toBeLessThanOrEqual(size.height);
      const now = await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).currentTime);
      expect(now).toBeGreaterThanOrEqual(start - 0.5);
      expect(now).toBeLessThanOrEqual(Math.max(end, start) + 0.5);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
      const out = process.env.VIDEMBED_WEB_SHOTS;
      if (out) {
        mkdirSync(out, { recursive: true });
        await page.screenshot({ path: path.join(out, `playing-${size.width}x${size.height}.png`) });
      }
      await page.keyboard.press('Escape');
      await expect.poll(() => page.locator('#player-dock').isHidden()).toBe(true);
      expect(await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).paused)).toBe(true);
    }
    await page.setViewportSize(DESKTOP);
  });

  it('searches by picture and by "More like this"', async () => {
    const byPicture = await searched(() => page.setInputFiles('#search-image', evalPhoto('plasma-workspace-wallpapers__Path_1920x1080.jpg')));
    expect(typeof byPicture.body.image_base64).toBe('string');
    expect((byPicture.body.image_base64 as string).length).toBeGreaterThan(1000);
    expect(await page.locator('#search-picture').isVisible()).toBe(true);
    expect(await page.locator('#search-picture-img').evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    await page.click('#clear-picture');
    expect(await page.locator('#search-picture').isHidden()).toBe(true);
    // A picture dropped on the search form, with words: both are sent.
    await page.fill('#search-text', 'a path');
    const photo = evalPhoto('plasma-workspace-wallpapers__Path_1920x1080.jpg');
    const dropped = await searched(() =>
      page.evaluate(
        ([b64, name]) => {
          const raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const dt = new DataTransfer();
          dt.items.add(new File([raw], name, { type: 'image/jpeg' }));
          document.getElementById('search-form')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
        },
        [readFileSync(photo).toString('base64'), path.basename(photo)] as const,
      ),
    );
    expect(dropped.body).toMatchObject({ text: 'a path', image_base64: byPicture.body.image_base64 });
    expect(await page.textContent('#search-status')).toContain(`for “a path” and the picture ${path.basename(photo)}.`);
    await page.click('#clear-picture');
    await page.fill('#search-text', 'people walking in a hall');

    const first = page.locator('#results > li').filter({ has: page.locator('.result') }).first();
    const id = (await first.locator('.result').getAttribute('data-video-id'))!;
    const start = Number(await first.locator('.result').getAttribute('data-start'));
    const like = await searched(() => first.locator('button.like').click());
    expect(like.body).toMatchObject({ like: { video_id: id, t: start }, top_k: 20 });
    expect(like.body.text).toBeUndefined();
    expect(like.answer.results.length).toBeGreaterThan(0);
    expect(like.answer.results.map((r) => r.video_id)).not.toContain(id);
    expect(await page.textContent('#search-status')).toMatch(/for moments like /);
  });

  it('shows the page of one video: its moments on a timeline, each plays from its start', async () => {
    const v = videos.find((x) => x.name.startsWith('opencv-doc__vtest'))!;
    const d = (await http(ui.base, 'GET', `/videos/${v.id}`, { key })).body as { segments: { start: number; end: number }[] };
    expect(d.segments.length).toBeGreaterThan(2);
    await page.locator(`#videos li.card[data-video-id="${v.id}"] button`, { hasText: 'Moments' }).click();
    await expect.poll(() => page.locator('#video-view').isVisible()).toBe(true);
    expect(new URL(page.url()).hash).toBe(`#video=${v.id}`);
    expect(await page.textContent('#video-h')).toBe(v.name);
    expect(await page.locator('#moments .moment').count()).toBe(d.segments.length);
    expect(await page.locator('#timeline .tick').count()).toBe(d.segments.length);
    // The player opens with the page, on this video, not playing; its transcript panel answers for it.
    await expect.poll(() => page.locator('#player-dock').isVisible()).toBe(true);
    await expect.poll(() => page.textContent('#transcript-status'), { timeout: 15_000 }).toBe('No transcript: no audio track');
    expect(await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).paused)).toBe(true);
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('#moments img.thumb')].every((i) => i.complete && i.naturalWidth > 0), null, { timeout: 30_000 });
    const i = d.segments.length - 2;
    const seeked = nextSeek();
    await page.locator('#moments .moment').nth(i).click();
    expect(Math.abs((await seeked) - d.segments[i].start)).toBeLessThanOrEqual(0.5);
    await expect.poll(() => page.locator('#moments .moment.current').count(), { timeout: 15_000 }).toBe(1);
    const seeked2 = nextSeek();
    await page.locator('#timeline .tick').nth(1).click();
    expect(Math.abs((await seeked2) - d.segments[1].start)).toBeLessThanOrEqual(0.5);
    if (process.env.VIDEMBED_WEB_SHOTS) await page.screenshot({ path: path.join(process.env.VIDEMBED_WEB_SHOTS, 'video-page-1280x900.png') });
    await page.keyboard.press('Escape');
    await page.click('#close-video');
    expect(await page.locator('#video-view').isHidden()).toBe(true);
    expect(new URL(page.url()).hash).toBe('');
  });

  it('shows an error in the page, not a dead player, when a video cannot be played', async () => {
    const v = videos.find((x) => x.name.endsWith('.ogv'))!;
    // The playback copy is made unreachable: the browser gets a 404 for it.
    await page.route(`**/videos/${v.id}/playback`, (route) => route.fulfill({ status: 404, body: 'gone' }));
    try {
      await page.locator(`#videos li.card[data-video-id="${v.id}"] button`, { hasText: 'Play' }).click();
      await expect.poll(() => page.locator('#player-error').isVisible(), { timeout: 15_000 }).toBe(true);
      expect(await page.textContent('#player-error')).toMatch(/could not be played/);
      expect(await page.locator('#player').isHidden()).toBe(true);
    } finally {
      await page.unroute(`**/videos/${v.id}/playback`);
    }
    // Another video plays again in the same player.
    const ok = videos.find((x) => x.name.endsWith('.mp4'))!;
    await page.locator(`#videos li.card[data-video-id="${ok.id}"] button`, { hasText: 'Play' }).click();
    await expect.poll(() => page.locator('#player').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.locator('#player-error').isHidden()).toBe(true);
    await page.keyboard.press('Escape');
    expect(pageErrors).toEqual([]);
  });

  it('keeps each playback copy as an H.264 4:2:0 MP4 of at most 720p with its index first, and removes it with its video', async () => {
    const blobs = path.join(dir, 'home', 'blobs', 'playback');
    const proxied: (Uploaded & { file: string })[] = [];
    for (const v of videos) {
      const d = (await http(ui.base, 'GET', `/videos/${v.id}`, { key })).body as { playback: string };
      expect(d.playback, v.name).not.toBe('none');
      if (d.playback !== 'proxy') continue;
      const file = path.join(blobs, `${v.id}.mp4`);
      const p = await probeDetails(file);
      expect(p, v.name).toMatchObject({ videoCodec: 'h264', pixFmt: 'yuv420p' });
      expect(p.container).toMatch(/mp4/);
      expect(Math.max(p.width, p.height)).toBeLessThanOrEqual(1280);
      expect(Math.min(p.width, p.height)).toBeLessThanOrEqual(720);
      if (p.hasAudio) expect(p.audioCodec).toBe('aac');
      const head = readFileSync(file);
      expect(head.indexOf('moov'), `${v.name}: faststart puts the index before the media`).toBeLessThan(head.indexOf('mdat'));
      proxied.push({ ...v, file });
    }
    expect(proxied.length).toBeGreaterThan(0);
    const gone = proxied[0];
    expect((await http(ui.base, 'DELETE', `/videos/${gone.id}`, { key })).status).toBe(200);
    expect(existsSync(gone.file)).toBe(false);
    expect((await http(ui.base, 'GET', `/videos/${gone.id}/playback`, { key })).status).toBe(404);
  });
});
