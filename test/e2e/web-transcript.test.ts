/**
 * What is said, on the web page, in real headless Chromium at 390 px wide: a clip whose soundtrack
 * is recorded speech (a LibriVox reading shipped with pocketsphinx, under an ffmpeg test picture)
 * and a silent one, uploaded through the page and processed by the real engine (pocketsphinx
 * hears it); a search for what is said ("Only what is said": the body carries `said`, not `text`)
 * whose result shows the words around the match with the match marked; the transcript panel of
 * the playing video — its words, the matched ones marked, a click on a word seeks the player to
 * it, the arrow keys move between words, the word being said is highlighted — and "No
 * transcript: <reason>" for the silent clip; the audio filter. With VIDEMBED_WEB_SHOTS=<dir>,
 * screenshots at 1280x900 and 390x844 are written there.
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeSpeechClip } from '../../eval/speech-data.js';
import { findPocketsphinx } from '../../src/speech/pocketsphinx.js';
import { ffmpeg, isCI, removeDir, tempDir } from '../helpers/clips.js';
import { http } from '../helpers/server.js';
import { CHROMIUM, haveChromium, launchChromium, startUi, stop, type Ui } from '../helpers/web-ui.js';

const SPEECH_WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
const havePocketsphinx = findPocketsphinx() !== undefined && existsSync(SPEECH_WAV);
const runnable = haveChromium && havePocketsphinx;
if (!runnable && !isCI) {
  process.stderr.write(
    `\n!!! SKIPPING the web page transcript e2e test: ${haveChromium ? '' : `${CHROMIUM} not found (apt-get install chromium) `}${havePocketsphinx ? '' : 'pocketsphinx or its test recordings not found (apt-get install pocketsphinx pocketsphinx-en-us)'} !!!\n\n`,
  );
}

const VIEWPORT = { width: 390, height: 844 };
const PROCESS_TIMEOUT_MS = 240_000;

interface Word {
  w: string;
  start: number;
  end: number;
}

/** The reading under ffmpeg's test picture (the speech tests' clip maker), and a silent clip (no audio track). */
async function makeClips(dir: string): Promise<{ speech: string; silent: string }> {
  const speech = await makeSpeechClip(SPEECH_WAV, path.join(dir, 'reading.mp4'));
  const silent = path.join(dir, 'silent.mp4');
  await ffmpeg(['-f', 'lavfi', '-i', 'smptebars=size=320x180:rate=25', '-t', '4', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-g', '25', '-movflags', '+faststart', silent]);
  return { speech, silent };
}

describe.skipIf(!runnable && !isCI)('the web page shows what is said (vidembed ui, real Chromium, real speech)', () => {
  let dir: string;
  let shots: string | undefined;
  let ui: Ui;
  let browser: Browser;
  let page: Page;
  let key: string;
  let speechId: string;
  let silentId: string;
  let clips: { speech: string; silent: string };
  const pageErrors: string[] = [];

  const shoot = async (name: string) => {
    if (!page) return;
    shots ??= mkdtempSync(path.join(os.tmpdir(), 'vidembed-web-shots-'));
    const file = path.join(shots, `${name.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 80)}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    process.stderr.write(`web transcript e2e: screenshot of the failure: ${file}\n`);
  };

  /** Does `change`, and answers the body of the search request it causes and the API's answer. */
  const searched = async (change: () => Promise<unknown>) => {
    const response = page.waitForResponse((r) => r.request().method() === 'POST' && /\/collections\/[^/]+\/search$/.test(new URL(r.url()).pathname), { timeout: 30_000 });
    await change();
    const r = await response;
    const answer = (await r.json()) as { results: { video_id: string; start: number; said?: { text: string; matched: string[]; start: number; end: number } }[] };
    await expect.poll(() => page.locator('#results .result').evaluateAll((bs) => bs.map((b) => (b as HTMLElement).dataset.videoId)), { timeout: 15_000 }).toEqual(answer.results.map((x) => x.video_id));
    return { body: r.request().postDataJSON() as Record<string, unknown>, answer };
  };

  /** Resolves with the player's time at its next `seeked` (listen before causing the seek). */
  const nextSeek = () =>
    page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const v = document.getElementById('player') as HTMLVideoElement;
          v.addEventListener('seeked', () => resolve(v.currentTime), { once: true });
        }),
    );

  const transcriptOf = async (id: string) => {
    const r = await http(ui.base, 'GET', `/videos/${id}/transcript`, { key });
    expect(r.status).toBe(200);
    return r.body as { words: Word[]; reason?: string };
  };

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`${CHROMIUM} not found: it is required under CI (.ci/run installs the Debian package chromium)`);
    if (!havePocketsphinx) throw new Error(`pocketsphinx_continuous or ${SPEECH_WAV} not found: they are required under CI (apt-get install pocketsphinx pocketsphinx-en-us)`);
    dir = tempDir('vidembed-e2e-web-speech-');
    clips = await makeClips(dir);
    ui = await startUi(path.join(dir, 'home'));
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
    try {
      await page.goto(ui.link);
      await page.locator('#app').waitFor({ state: 'visible', timeout: 30_000 });
    } catch (err) {
      await shoot('set-up');
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
    if (shots) process.stderr.write(`web transcript e2e: screenshots are in ${shots}\n`);
  });

  it('uploads a clip that speaks and a silent one through the page; the engine processes both', async () => {
    key = await page.evaluate(() => sessionStorage.getItem('vidembed.key') ?? '');
    await page.fill('#new-collection-name', 'talks');
    await page.click('#new-collection button[type=submit]');
    await expect.poll(() => page.locator('#collection option:checked').textContent(), { timeout: 15_000 }).toMatch(/^talks/);
    await page.setInputFiles('#file-input', [clips.speech, clips.silent]);
    await expect.poll(() => page.locator('#uploads li').count(), { timeout: 15_000 }).toBe(2);
    await page.waitForFunction(() => [...document.querySelectorAll('#uploads li')].every((li) => ['processed', 'failed'].includes((li as HTMLElement).dataset.status ?? '')), null, {
      timeout: PROCESS_TIMEOUT_MS,
      polling: 500,
    });
    const done = await page.locator('#uploads li').evaluateAll((lis) => lis.map((li) => ({ name: li.querySelector('.name')!.textContent, status: (li as HTMLElement).dataset.status, id: (li as HTMLElement).dataset.videoId! })));
    for (const d of done) expect(d, JSON.stringify(d)).toMatchObject({ status: 'processed' });
    speechId = done.find((d) => d.name === 'reading.mp4')!.id;
    silentId = done.find((d) => d.name === 'silent.mp4')!.id;
    await expect.poll(() => page.locator('#videos li.card[data-status="processed"]').count(), { timeout: 30_000 }).toBe(2);
  });

  it('searches only what is said: the body carries `said`, the result shows the words around the match with the match marked', async () => {
    await page.check('#said-only');
    await page.fill('#search-text', 'to consider');
    const { body, answer } = await searched(() => page.press('#search-text', 'Enter'));
    expect(body).toMatchObject({ said: 'to consider' });
    expect(body.text).toBeUndefined();
    // Only the clip that speaks is found, by what it says.
    expect(answer.results.map((r) => r.video_id)).toEqual([speechId]);
    const said = answer.results[0].said!;
    expect(said.matched).toEqual(['to', 'consider']);
    const result = page.locator('#results .result').first();
    await expect.poll(() => result.locator('.said mark').allTextContents()).toEqual(['to consider']);
    const snippet = (await result.locator('.said').textContent())!;
    expect(snippet).toContain(said.text.replaceAll('*', ''));
    expect(await result.getAttribute('aria-label')).toContain('where it says');
    expect(await page.textContent('#search-status')).toMatch(/1 result for “to consider” said\./);
  });

  it('filters by what the soundtrack holds: the audio menu offers speech, music, silence, other and sends `audio`', async () => {
    expect(await page.locator('#f-audio option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['', 'speech', 'music', 'silence', 'other']);
    const speech = await searched(() => page.selectOption('#f-audio', 'speech'));
    expect(speech.body).toMatchObject({ said: 'to consider', audio: 'speech' });
    expect(speech.answer.results.map((r) => r.video_id)).toEqual([speechId]);
    const any = await searched(() => page.selectOption('#f-audio', ''));
    expect(any.body.audio).toBeUndefined();
    expect(any.answer.results.map((r) => r.video_id)).toEqual([speechId]);
  });

  it('plays the result: the transcript panel lists the words heard, the matched ones marked', async () => {
    const said = (await searched(() => page.press('#search-text', 'Enter'))).answer.results[0].said!;
    const seeked = nextSeek();
    await page.locator('#results .result').first().click();
    const t = await seeked;
    expect(Math.abs(t - said.start)).toBeLessThanOrEqual(0.5);
    const heard = (await transcriptOf(speechId)).words;
    expect(heard.length).toBeGreaterThan(10);
    const words = page.locator('#transcript button.word');
    await expect.poll(() => words.count(), { timeout: 15_000 }).toBe(heard.length);
    expect(await words.allTextContents()).toEqual(heard.map((w) => w.w));
    expect(await page.textContent('#transcript-status')).toMatch(new RegExp(`^${heard.length} words heard by pocketsphinx`));
    // The words the search matched, at the match's times, are marked.
    const marked = await page.locator('#transcript button.word.matched').evaluateAll((bs) => bs.map((b) => ({ w: b.querySelector('mark')?.textContent, start: Number((b as HTMLElement).dataset.start) })));
    expect(marked.map((m) => m.w)).toEqual(['to', 'consider']);
    for (const m of marked) {
      expect(m.start).toBeGreaterThanOrEqual(said.start - 0.05);
      expect(m.start).toBeLessThanOrEqual(said.end);
    }
    // Nothing spills sideways at 390 px.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORT.width);
  });

  it('seeks to a word on click and on Enter (arrow keys move between words), and highlights the word being said', async () => {
    const heard = (await transcriptOf(speechId)).words;
    // A word well after the match (the player is around it now).
    const i = heard.length - 4;
    expect(heard[i].start).toBeGreaterThan(4.5);
    let seeked = nextSeek();
    await page.locator(`#transcript button.word[data-index="${i}"]`).click();
    const t = await seeked;
    expect(Math.abs(t - heard[i].start), `seeked to ${t}, the word starts at ${heard[i].start}`).toBeLessThanOrEqual(0.3);
    // As it plays, the highlighted word is the one being said (it has started, by the player's clock).
    await page.waitForFunction(
      (first) => {
        const cur = document.querySelector<HTMLElement>('#transcript button.word.current');
        const v = document.getElementById('player') as HTMLVideoElement;
        return cur !== null && Number(cur.dataset.index) >= first && Number(cur.dataset.start) <= v.currentTime + 0.05 && cur.getAttribute('aria-current') === 'true';
      },
      i,
      { timeout: 15_000, polling: 100 },
    );
    // The keyboard: the clicked word is the one Tab reaches; ArrowLeft twice, then Enter, plays from there.
    await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).pause());
    await page.locator(`#transcript button.word[data-index="${i}"]`).focus();
    expect(await page.locator('#transcript button.word[tabindex="0"]').getAttribute('data-index')).toBe(String(i));
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.index)).toBe(String(i - 2));
    seeked = nextSeek();
    await page.keyboard.press('Enter');
    const t2 = await seeked;
    expect(Math.abs(t2 - heard[i - 2].start), `seeked to ${t2}, the word starts at ${heard[i - 2].start}`).toBeLessThanOrEqual(0.3);
    await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).pause());
  });

  it('says why there is no transcript when nothing was heard', async () => {
    const { words, reason } = await transcriptOf(silentId);
    expect(words).toEqual([]);
    expect(reason).toBeTruthy();
    await page.locator(`#videos li.card[data-video-id="${silentId}"] button`, { hasText: 'Play' }).click();
    await expect.poll(() => page.textContent('#transcript-status'), { timeout: 15_000 }).toBe(`No transcript: ${reason}`);
    expect(await page.locator('#transcript button.word').count()).toBe(0);
    expect(await page.locator('#transcript').isHidden()).toBe(true);
    // Back to the reading (its Play button): its words again, nothing marked (no search match).
    await page.locator(`#videos li.card[data-video-id="${speechId}"] button`, { hasText: 'Play' }).click();
    await expect.poll(() => page.locator('#transcript button.word').count(), { timeout: 15_000 }).toBeGreaterThan(10);
    expect(await page.locator('#transcript mark').count()).toBe(0);
    await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).pause());
    expect(pageErrors).toEqual([]);
  });

  it('reads well at 1280x900 and 390x844 (screenshots to VIDEMBED_WEB_SHOTS when set)', async () => {
    // Show the search match in the panel again for the pictures.
    await page.locator('#results .result').first().click();
    await expect.poll(() => page.locator('#transcript mark').count(), { timeout: 15_000 }).toBe(2);
    await page.evaluate(() => (document.getElementById('player') as HTMLVideoElement).pause());
    const out = process.env.VIDEMBED_WEB_SHOTS;
    for (const size of [{ width: 1280, height: 900 }, VIEWPORT]) {
      await page.setViewportSize(size);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.width);
      // The transcript panel stays a scrolling box inside the page, not wider than its column.
      const box = await page.locator('#transcript').boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(size.width);
      if (out) {
        mkdirSync(out, { recursive: true });
        await page.screenshot({ path: path.join(out, `transcript-${size.width}x${size.height}.png`), fullPage: true });
      }
    }
    expect(pageErrors).toEqual([]);
  });
});
