/**
 * The web page end to end, in real headless Chromium (Debian's `chromium`, driven by
 * playwright-core): `vidembed ui --no-open` as a real process, its one-time link, uploads through
 * the page (file input and drag-and-drop), processing, search with filters and explain, thumbnails
 * that decode, the player seeking to a result's moment (by click and by keyboard) and stopping at
 * its end, delete — at 360 px wide. Screenshots of failures go to a temp dir (printed).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ffmpeg, isCI, removeDir, tempDir } from '../helpers/clips.js';
import { http } from '../helpers/server.js';
import { CHROMIUM, haveChromium, launchChromium, startUi, stop, type Ui } from '../helpers/web-ui.js';

if (!haveChromium && !isCI) {
  process.stderr.write(`\n!!! SKIPPING the web page e2e test: ${CHROMIUM} not found (apt-get install chromium; .ci/run does it) !!!\n\n`);
}

const VIEWPORT = { width: 360, height: 800 };
const PROCESS_TIMEOUT_MS = 240_000;

/** Short, small, real H.264 clips from ffmpeg's own test sources (no shared data needed). */
async function makeClips(dir: string): Promise<string[]> {
  const sources = { 'bars.mp4': 'smptebars', 'pattern.mp4': 'testsrc2', 'fractal.mp4': 'mandelbrot' };
  const out: string[] = [];
  for (const [name, src] of Object.entries(sources)) {
    const file = path.join(dir, name);
    await ffmpeg(['-f', 'lavfi', '-i', `${src}=size=320x180:rate=25`, '-t', '6', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-g', '25', '-movflags', '+faststart', file]);
    out.push(file);
  }
  return out;
}

describe.skipIf(!haveChromium && !isCI)('the web page in real Chromium (vidembed ui)', () => {
  let dir: string;
  let shots: string | undefined;
  let ui: Ui;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let clips: string[];
  let token: string;
  let key: string;
  const pageErrors: string[] = [];

  const shoot = async (name: string) => {
    if (!page) return;
    shots ??= mkdtempSync(path.join(os.tmpdir(), 'vidembed-web-shots-'));
    const file = path.join(shots, `${name.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 80)}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    process.stderr.write(`web page e2e: screenshot of the failure: ${file}\n`);
  };

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`${CHROMIUM} not found: it is required under CI (.ci/run installs the Debian package chromium)`);
    dir = tempDir('vidembed-e2e-web-');
    clips = await makeClips(dir);
    ui = await startUi(path.join(dir, 'home'));
    token = ui.link.split('#login=')[1];
    browser = await launchChromium();
    context = await browser.newContext({ viewport: VIEWPORT });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // The page breaks none of its own Content-Security-Policy (no inline script or style, nothing from elsewhere).
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
    page.on('dialog', (d) => void d.accept());
    try {
      await page.goto(ui.link);
      await page.locator('#app').waitFor({ state: 'visible', timeout: 30_000 });
    } catch (err) {
      await shoot('sign-in');
      throw err;
    }
  });

  beforeEach(({ onTestFailed, task }) => {
    onTestFailed(() => shoot(task.name));
  });

  afterAll(async () => {
    await browser?.close();
    if (ui) expect(await stop(ui.proc)).toBe(0);
    if (dir) removeDir(dir);
    if (shots) process.stderr.write(`web page e2e: failure screenshots are in ${shots}\n`);
  });

  it('signs in with the one-time link: the token leaves the address, the key stays in session storage, the media cookie is HttpOnly', async () => {
    expect(new URL(page.url()).hash).toBe('');
    expect(page.url()).not.toContain(token);
    key = await page.evaluate(() => sessionStorage.getItem('vidembed.key') ?? '');
    expect(key).toMatch(/^vku_/);
    const cookies = await context.cookies();
    const media = cookies.find((c) => c.name === 'vidembed_media');
    expect(media).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.evaluate(() => document.cookie)).toBe(''); // script cannot read it
    // The key works on the API; the link's token does not work a second time.
    expect((await http(ui.base, 'GET', '/collections', { key })).status).toBe(200);
    expect((await http(ui.base, 'POST', '/ui/login', { json: { token } })).status).toBe(401);
    // The login link opened again (a second tab) no longer signs in: it asks for a key instead.
    const again = await context.newPage();
    try {
      await again.goto(ui.link);
      await again.locator('#login').waitFor({ state: 'visible' });
      await expect.poll(() => again.locator('#error').textContent(), { timeout: 15_000 }).toMatch(/already used|expired/);
    } finally {
      await again.close();
    }
  });

  it('creates a collection, uploads clips (file input and drag-and-drop) with progress, and follows their processing', async () => {
    await page.fill('#new-collection-name', 'web clips');
    await page.click('#new-collection button[type=submit]');
    await expect.poll(() => page.locator('#collection option:checked').textContent(), { timeout: 15_000 }).toMatch(/^web clips/);

    await page.setInputFiles('#file-input', clips.slice(0, 2));
    // The third by drag-and-drop onto the zone.
    const bytes = readFileSync(clips[2]).toString('base64');
    const name = path.basename(clips[2]);
    await page.evaluate(
      ([b64, fileName]) => {
        const raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([raw], fileName, { type: 'video/mp4' }));
        document.getElementById('drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      },
      [bytes, name] as const,
    );
    const uploads = page.locator('#uploads li');
    await expect.poll(() => uploads.count(), { timeout: 15_000 }).toBe(3);
    // Every upload ends processed, its bar full, its video id known.
    await page.waitForFunction(() => [...document.querySelectorAll('#uploads li')].every((li) => (li as HTMLElement).dataset.status === 'processed' || (li as HTMLElement).dataset.status === 'failed'), null, {
      timeout: PROCESS_TIMEOUT_MS,
      polling: 500,
    });
    const states = await uploads.evaluateAll((lis) => lis.map((li) => ({ name: li.querySelector('.name')!.textContent, status: (li as HTMLElement).dataset.status, id: (li as HTMLElement).dataset.videoId, bar: (li.querySelector('progress') as HTMLProgressElement).value, text: li.querySelector('.status')!.textContent })));
    expect(states.map((s) => s.name).sort()).toEqual(clips.map((c) => path.basename(c)).sort());
    for (const s of states) {
      expect(s, JSON.stringify(s)).toMatchObject({ status: 'processed', bar: 1, text: 'processed' });
      expect(s.id).toMatch(/^vid_/);
    }

    // The grid: three cards, processed, posters decoded.
    const cards = page.locator('#videos li.card[data-status="processed"]');
    await expect.poll(() => cards.count(), { timeout: 30_000 }).toBe(3);
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('#videos img.thumb')].every((i) => i.complete), null, { timeout: 30_000 });
    const posters = await page.locator('#videos img.thumb').evaluateAll((imgs) => (imgs as HTMLImageElement[]).map((i) => i.naturalWidth));
    expect(posters).toHaveLength(3);
    for (const w of posters) expect(w).toBeGreaterThan(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORT.width);
  });

  it('searches: results carry video id and start, thumbnails that decode, confidence, evidence badges, tags and time range', async () => {
    await page.fill('#search-text', 'colour bars test pattern');
    await page.press('#search-text', 'Enter');
    const results = page.locator('#results .result');
    await expect.poll(() => results.count(), { timeout: 30_000 }).toBe(3);
    const ids = await page.locator('#videos li.card').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.videoId));
    const found = await results.evaluateAll((bs) => bs.map((b) => ({ id: (b as HTMLElement).dataset.videoId, start: Number((b as HTMLElement).dataset.start), end: Number((b as HTMLElement).dataset.end), text: b.textContent })));
    expect(found.map((r) => r.id).sort()).toEqual([...ids].sort());
    for (const r of found) {
      expect(r.start).toBeGreaterThanOrEqual(0);
      expect(r.end).toBeGreaterThan(r.start);
      expect(r.text).toMatch(/(high|medium|low) confidence \d\.\d{2}/);
      expect(r.text).not.toMatch(/relevance/);
      expect(r.text).toMatch(/\d:\d\d(\.\d)?–\d:\d\d(\.\d)?/);
    }
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('#results img.thumb')].every((i) => i.complete), null, { timeout: 30_000 });
    const widths = await page.locator('#results img.thumb').evaluateAll((imgs) => (imgs as HTMLImageElement[]).map((i) => i.naturalWidth));
    expect(widths).toHaveLength(3);
    for (const w of widths) expect(w).toBeGreaterThan(0);
    // Tags of each result's segment (shot size at least) arrive from GET /videos/{id}.
    await expect.poll(() => page.locator('#results .result').evaluateAll((bs) => bs.every((b) => b.querySelectorAll('.tags li').length > 0)), { timeout: 30_000 }).toBe(true);
    // Each result says which kinds of evidence matched (no speech here: seen or written), and the
    // page shows results by kind: "said" hides them all, "all" brings them back.
    const kinds = await results.evaluateAll((bs) => bs.map((b) => [...b.querySelectorAll('.badges .badge')].map((x) => x.textContent)));
    for (const k of kinds) {
      expect(k.length).toBeGreaterThan(0);
      for (const x of k) expect(['seen', 'written']).toContain(x);
    }
    await page.click('#kind-filter button[data-kind="said"]');
    expect(await page.locator('#results li[data-kinds]:visible').count()).toBe(0);
    await page.click('#kind-filter button[data-kind="seen"]');
    expect(await page.locator('#results li[data-kinds]:visible').count()).toBe(kinds.filter((k) => k.includes('seen')).length);
    await page.click('#kind-filter button[data-kind=""]');
    expect(await page.locator('#results li[data-kinds]:visible').count()).toBe(3);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORT.width);
  });

  it('filters by shot size and explains matches', async () => {
    /** Does `change`, and answers the search request it causes (its body) and the API's answer. */
    const searched = async (change: () => Promise<unknown>) => {
      const response = page.waitForResponse((r) => r.request().method() === 'POST' && /\/collections\/[^/]+\/search$/.test(new URL(r.url()).pathname), { timeout: 30_000 });
      await change();
      const r = await response;
      const answer = (await r.json()) as { results: { video_id: string }[] };
      // The page shows what the API answered.
      await expect.poll(() => page.locator('#results .result').evaluateAll((bs) => bs.map((b) => (b as HTMLElement).dataset.videoId)), { timeout: 15_000 }).toEqual(answer.results.map((x) => x.video_id));
      return { body: r.request().postDataJSON() as Record<string, unknown>, answer };
    };
    // Filter by the shot size the first result's segment was tagged with: that video stays.
    const first = page.locator('#results .result').first();
    const id = await first.getAttribute('data-video-id');
    const shotSize = (await first.locator('.tags li').first().textContent())!.replaceAll(' ', '_');
    const filtered = await searched(() => page.selectOption('#f-shot_size', shotSize));
    expect(filtered.body).toMatchObject({ text: 'colour bars test pattern', shot_size: shotSize });
    expect(filtered.answer.results.map((r) => r.video_id)).toContain(id);
    const unfiltered = await searched(() => page.selectOption('#f-shot_size', ''));
    expect(unfiltered.body.shot_size).toBeUndefined();
    expect(unfiltered.answer.results).toHaveLength(3);

    const explained = await searched(() => page.check('#explain'));
    expect(explained.body.explain).toBe(true);
    await expect.poll(() => page.locator('#results .result').first().textContent(), { timeout: 15_000 }).toMatch(/matched words: |no query word matched/);
  });

  it('plays a clicked result from its start and pauses at its end; Enter on a result seeks back to it', async () => {
    const results = page.locator('#results .result');
    // Click the result that starts latest (a seek away from 0, when there is one).
    const all = await results.evaluateAll((bs) => bs.map((b) => ({ id: (b as HTMLElement).dataset.videoId!, start: Number((b as HTMLElement).dataset.start), end: Number((b as HTMLElement).dataset.end) })));
    const pick = all.reduce((a, b) => (b.start > a.start ? b : a));
    const target = page.locator(`#results .result[data-video-id="${pick.id}"]`);
    const seekedAt = () =>
      page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const v = document.getElementById('player') as HTMLVideoElement;
            v.addEventListener('seeked', () => resolve(v.currentTime), { once: true });
          }),
      );
    const seeked = seekedAt();
    await target.click();
    const t = await seeked;
    expect(Math.abs(t - pick.start), `seeked to ${t}, result starts at ${pick.start}`).toBeLessThanOrEqual(0.5);
    expect(await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).currentSrc)).toBe(`${ui.base}/videos/${pick.id}/file`);
    // It plays, then stops at the moment's end.
    await page.waitForFunction(
      (end) => {
        const v = document.getElementById('player') as HTMLVideoElement;
        return v.paused && v.currentTime >= end - 0.35;
      },
      pick.end,
      { timeout: 30_000, polling: 100 },
    );
    const stoppedAt = await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).currentTime);
    expect(stoppedAt).toBeLessThanOrEqual(pick.end + 0.5);

    // Move the player away from the start (its own controls), then Enter on the result seeks back.
    const away = pick.end - pick.start > 0.6 ? pick.end : pick.start + 1;
    // (Its seek must be over before the next listener starts, or that one would hear this seek's end.)
    const movedTo = await page.evaluate(
      (to) =>
        new Promise<number>((resolve) => {
          const v = document.getElementById('player') as HTMLVideoElement;
          v.addEventListener('seeked', () => resolve(v.currentTime), { once: true });
          v.currentTime = to;
        }),
      away,
    );
    expect(Math.abs(movedTo - pick.start)).toBeGreaterThan(0.5);
    const back = seekedAt();
    await target.focus();
    await page.keyboard.press('Enter');
    const t2 = await back;
    expect(Math.abs(t2 - pick.start), `seeked to ${t2}, result starts at ${pick.start}`).toBeLessThanOrEqual(0.5);
  });

  it('deletes a video: gone from the grid, the results and the API', async () => {
    const card = page.locator('#videos li.card').first();
    const id = (await card.getAttribute('data-video-id'))!;
    await card.locator('button', { hasText: 'Delete' }).click();
    await expect.poll(() => page.locator(`#videos li.card[data-video-id="${id}"]`).count(), { timeout: 30_000 }).toBe(0);
    expect(await page.locator('#videos li.card').count()).toBe(2);
    expect(await page.locator(`#results .result[data-video-id="${id}"]`).count()).toBe(0);
    expect((await http(ui.base, 'GET', `/videos/${id}`, { key })).status).toBe(404);
    expect(pageErrors).toEqual([]);
  });

  it('never writes the token, the key or the cookie to the request log', async () => {
    const cookie = (await context.cookies()).find((c) => c.name === 'vidembed_media')!.value;
    const lines = ui.output().split('\n');
    const logged = lines.filter((l) => l.startsWith('{'));
    // The log is on and saw the page's calls...
    expect(logged.some((l) => l.includes('"url":"/ui/login"'))).toBe(true);
    expect(logged.some((l) => l.includes('/thumbnail'))).toBe(true);
    // ...but none of the secrets, anywhere but the one line that prints the link.
    const rest = lines.filter((l) => !l.includes('#login=')).join('\n');
    for (const secret of [token, key, cookie]) expect(rest).not.toContain(secret);
  });
});
