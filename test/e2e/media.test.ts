import { readFileSync, readdirSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaError, ValidationError } from '../../src/api/errors.js';
import { decodeImage, displaySize, extractAudio, probe, probeDetails, readAllFrames, sampleFrames } from '../../src/media/index.js';
import { outputSize, planSample, planStrategy } from '../../src/media/frames.js';
import { lastMeaningfulLine } from '../../src/media/ffmpeg.js';
import type { Frame } from '../../src/media/types.js';
import {
  FORMAT_VARIANTS,
  defaultPanSpeed,
  evalDir,
  evalPhoto,
  evalVideos,
  makeAudioOnlyFile,
  makeConcatClip,
  makeEmptyFile,
  makeFormatVariant,
  makeMovingSubjectClip,
  makeNoDurationWebm,
  makePanClip,
  makeRotatedClip,
  makeShakyClip,
  makeStillClip,
  makeTextFileAsMp4,
  makeTruncatedMp4,
  makeZoomClip,
  removeDir,
  tempDir,
  type FormatVariant,
} from '../helpers/clips.js';

// A textured photo (buildings, sky edges) so that shifts are measurable.
const PHOTO = evalPhoto('opencv-doc__building.jpg');
const SKY = evalPhoto('plasma-workspace-wallpapers__Kite_1920x1080.jpg');

let dir: string;
const clip: Record<string, string> = {};

beforeAll(async () => {
  dir = tempDir('vidembed-media-');
  const jobs: Record<string, () => Promise<string>> = {
    still2: () => makeStillClip(SKY, path.join(dir, 'still2.mp4'), { seconds: 2, width: 320, height: 200 }), // SKY is 16:10
    panRight: () => makePanClip(PHOTO, path.join(dir, 'panRight.mp4'), { direction: 'right' }),
    panLeft: () => makePanClip(PHOTO, path.join(dir, 'panLeft.mp4'), { direction: 'left' }),
    tiltUp: () => makePanClip(PHOTO, path.join(dir, 'tiltUp.mp4'), { direction: 'up' }),
    tiltDown: () => makePanClip(PHOTO, path.join(dir, 'tiltDown.mp4'), { direction: 'down' }),
    zoomIn: () => makeZoomClip(PHOTO, path.join(dir, 'zoomIn.mp4'), { direction: 'in', seconds: 3 }),
    shaky: () => makeShakyClip(PHOTO, path.join(dir, 'shaky.mp4'), { seconds: 3 }),
    subject: () => makeMovingSubjectClip(SKY, path.join(dir, 'subject.mp4'), { seconds: 3 }),
    truncated: () => makeTruncatedMp4(PHOTO, path.join(dir, 'truncated.mp4')),
    truncatedNoIndex: () => makeTruncatedMp4(PHOTO, path.join(dir, 'truncated-noindex.mp4'), { faststart: false }),
    audioOnly: () => makeAudioOnlyFile(path.join(dir, 'audio-only.m4a')),
    audioOnlyMp3: () => makeAudioOnlyFile(path.join(dir, 'audio-only.mp3')),
    noDuration: () => makeNoDurationWebm(PHOTO, path.join(dir, 'noduration.webm')),
    // Like phone footage: 1 s GOP, no B-frames, 30 fps.
    phone: () => makePanClip(PHOTO, path.join(dir, 'phone.mp4'), { direction: 'left', seconds: 5, fps: 30, gop: 30, bframes: 0 }),
  };
  for (const v of Object.keys(FORMAT_VARIANTS) as FormatVariant[]) jobs[v] = () => makeFormatVariant(PHOTO, dir, v);
  // Two at a time: the machine has two cores.
  const names = Object.keys(jobs);
  for (let i = 0; i < names.length; i += 2) {
    await Promise.all(names.slice(i, i + 2).map(async (n) => (clip[n] = await jobs[n]())));
  }
  clip.rot90 = await makeRotatedClip(clip['mp4-h264'], path.join(dir, 'rot90.mp4'), 90);
  clip.concat = await makeConcatClip([clip.still2, clip.panRight, clip['webm-vp9']], path.join(dir, 'concat.mp4'));
  clip.text = makeTextFileAsMp4(path.join(dir, 'text.mp4'));
  clip.empty = makeEmptyFile(path.join(dir, 'empty.mp4'));
  mkdirSync(path.join(dir, 'a-directory.mp4'));
});

afterAll(() => removeDir(dir));

// ---------- pixel helpers ----------

function gray(f: Frame): Float32Array {
  const g = new Float32Array(f.width * f.height);
  for (let i = 0, j = 0; i < g.length; i++, j += 3) g[i] = 0.299 * f.data[j] + 0.587 * f.data[j + 1] + 0.114 * f.data[j + 2];
  return g;
}

function meanAbsDiff(a: Frame, b: Frame): number {
  expect(a.data.length).toBe(b.data.length);
  let s = 0;
  for (let i = 0; i < a.data.length; i++) s += Math.abs(a.data[i] - b.data[i]);
  return s / a.data.length;
}

function stddev(f: Frame): number {
  const g = gray(f);
  let m = 0;
  for (const v of g) m += v;
  m /= g.length;
  let s = 0;
  for (const v of g) s += (v - m) ** 2;
  return Math.sqrt(s / g.length);
}

/**
 * Integer shift (dx, dy) of content from frame a to frame b: b(x, y) ≈ a(x - dx, y - dy), searched
 * along one axis.
 */
function contentShift(a: Frame, b: Frame, axis: 'x' | 'y', range: number): number {
  const ga = gray(a);
  const gb = gray(b);
  const { width: w, height: h } = a;
  let best = 0;
  let bestErr = Infinity;
  for (let d = -range; d <= range; d++) {
    const dx = axis === 'x' ? d : 0;
    const dy = axis === 'y' ? d : 0;
    let err = 0;
    let n = 0;
    for (let y = Math.max(0, dy); y < Math.min(h, h + dy); y += 1) {
      for (let x = Math.max(0, dx); x < Math.min(w, w + dx); x += 2) {
        err += Math.abs(gb[y * w + x] - ga[(y - dy) * w + (x - dx)]);
        n++;
      }
    }
    err /= n;
    if (err < bestErr) {
      bestErr = err;
      best = d;
    }
  }
  return best;
}

function catalog(): Map<string, { width: number; height: number; duration: number }> {
  const lines = readFileSync(path.join(evalDir, 'catalog.tsv'), 'utf8').trim().split('\n');
  const head = lines[0].split('\t');
  const col = (n: string) => head.indexOf(n);
  const out = new Map<string, { width: number; height: number; duration: number }>();
  for (const l of lines.slice(1)) {
    const c = l.split('\t');
    if (c[col('kind')] !== 'video') continue;
    const [w, h] = c[col('width_x_height')].split('x').map(Number);
    out.set(path.basename(c[col('path')]), { width: w, height: h, duration: Number(c[col('duration_s')]) });
  }
  return out;
}

async function expectMediaError(p: Promise<unknown>, file: string, reason: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected MediaError for ${file}`).toBeInstanceOf(MediaError);
  const msg = (err as Error).message;
  expect(msg).toContain(file);
  expect(msg).toMatch(reason);
  expect(msg).not.toContain('\n');
}

/** Polls until no ffmpeg reading `needle` is left (killed processes take a moment to vanish). */
async function expectNoFfmpegFor(needle: string): Promise<void> {
  const until = Date.now() + 3000;
  while (ffmpegProcessesFor(needle).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(ffmpegProcessesFor(needle)).toEqual([]);
}

function ffmpegProcessesFor(needle: string): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(needle) && cmd.includes('rawvideo')) pids.push(Number(d));
    } catch {
      /* process ended */
    }
  }
  return pids;
}

// ---------- eval videos (real, messy) ----------

describe('real evaluation videos', () => {
  const cat = catalog();
  const videos = evalVideos();

  it('finds the shared evaluation videos', () => {
    expect(videos.length).toBeGreaterThanOrEqual(5);
  });

  it.each(videos.map((v) => [path.basename(v), v]))('%s: probes and samples 1 fps', async (name, file) => {
    const p = await probe(file);
    const expected = cat.get(name);
    expect(p.hasVideo).toBe(true);
    expect(p.fps).toBeGreaterThan(0);
    expect(p.videoCodec).toBeTruthy();
    if (expected) {
      expect(`${p.width}x${p.height}`).toBe(`${expected.width}x${expected.height}`);
      expect(Math.abs(p.durationSec - expected.duration)).toBeLessThan(0.1);
    }
    const frames = await readAllFrames(file, { fps: 1, maxSide: 416 });
    const want = Math.ceil(p.durationSec - 1e-6);
    expect(Math.abs(frames.length - want)).toBeLessThanOrEqual(1);
    const size = outputSize(p, 416);
    frames.forEach((f, k) => {
      expect(f.t).toBeCloseTo(k, 6);
      expect(f.width).toBe(size.width);
      expect(f.height).toBe(size.height);
      expect(Math.max(f.width, f.height)).toBe(416);
      expect(f.width % 2 + (f.height % 2)).toBe(0);
      expect(f.data.length).toBe(f.width * f.height * 3);
    });
    // Real pictures, not flat grey/green garbage.
    expect(Math.max(...frames.map(stddev))).toBeGreaterThan(8);
  });

  it('extracts audio where there is some (pcm_u8 in avi, aac in mov)', async () => {
    const movie = videos.find((v) => v.endsWith('kphotoalbum__movie.avi'));
    if (!movie) return;
    const a = await extractAudio(movie);
    expect(a.length / 16000).toBeCloseTo(4.53, 1);
    const noAudio = videos.find((v) => v.endsWith('opencv-doc__vtest.avi'));
    if (noAudio) expect((await extractAudio(noAudio)).length).toBe(0);
  });
});

// ---------- probe ----------

describe('probe', () => {
  it.each(Object.entries(FORMAT_VARIANTS))('%s: codec, size, duration, audio', async (variant, v) => {
    const p = await probe(clip[variant]);
    expect(p.videoCodec).toBe(v.codec);
    expect([p.width, p.height]).toEqual([320, 180]);
    expect(p.fps).toBe(25);
    expect(p.durationSec).toBeGreaterThan(2.9);
    expect(p.durationSec).toBeLessThan(3.1);
    expect(p.hasAudio).toBe(v.audio);
    expect(p.rotation).toBe(0);
    if ('pixFmt' in v) expect(p.pixFmt).toBe(v.pixFmt);
  });

  it('reads display rotation and turns frames upright', async () => {
    const p = await probe(clip.rot90);
    expect(p.rotation).toBe(90);
    expect([p.width, p.height]).toEqual([320, 180]); // stored
    expect(displaySize(p)).toEqual({ width: 180, height: 320 }); // shown
    expect(displaySize({ width: 720, height: 576, sar: 16 / 15, rotation: 0 })).toEqual({ width: 768, height: 576 }); // PAL 4:3 anamorphic pixels
    const [f] = await readAllFrames(clip.rot90, { fps: 1, maxSide: 320 });
    expect([f.width, f.height]).toEqual([180, 320]);
  });

  it('counts the duration of a streamed webm whose header has none', async () => {
    const p = await probeDetails(clip.noDuration);
    expect(p.durationCounted).toBe(true);
    expect(p.durationSec).toBeGreaterThan(2.8);
    expect(p.durationSec).toBeLessThan(3.2);
    expect((await readAllFrames(clip.noDuration, { fps: 1, maxSide: 160 })).length).toBe(3);
  });

  it('rejects unusable input with a one-line MediaError naming the file', async () => {
    const missing = path.join(dir, 'does-not-exist.mp4');
    await expectMediaError(probe(missing), missing, /no such file/);
    const d = path.join(dir, 'a-directory.mp4');
    await expectMediaError(probe(d), d, /directory/);
    await expectMediaError(probe(clip.empty), clip.empty, /empty file \(0 bytes\)/);
    await expectMediaError(probe(clip.text), clip.text, /not a readable media file \(.*Invalid data/);
    await expectMediaError(probe(clip.audioOnly), clip.audioOnly, /no video stream \(audio only/);
    await expectMediaError(probe(clip.audioOnlyMp3), clip.audioOnlyMp3, /no video stream/);
    await expectMediaError(probe(clip.truncatedNoIndex), clip.truncatedNoIndex, /moov atom not found/);
  });

  it('turns ffmpeg noise into a readable last line', () => {
    const s = '[h264 @ 0x5580a2c3e240] Invalid NAL unit size (1 > 0).\n[h264 @ 0x5580a2c3e240] Error splitting the input into NAL units.\nConversion failed!\n';
    expect(lastMeaningfulLine(s)).toBe('h264: Error splitting the input into NAL units.');
  });
});

// ---------- sampleFrames ----------

describe('sampleFrames', () => {
  it('sizes: longest side = maxSide, even, aspect kept, also for odd maxSide and portrait', () => {
    expect(outputSize({ width: 1920, height: 1080 }, 416)).toEqual({ width: 416, height: 234 });
    expect(outputSize({ width: 1080, height: 1920 }, 416)).toEqual({ width: 234, height: 416 });
    expect(outputSize({ width: 1920, height: 1080, rotation: 90 }, 416)).toEqual({ width: 234, height: 416 });
    expect(outputSize({ width: 720, height: 576, sar: 64 / 45 }, 512)).toEqual({ width: 512, height: 288 });
    expect(outputSize({ width: 160, height: 120 }, 417)).toEqual({ width: 416, height: 312 });
    expect(outputSize({ width: 4000, height: 10 }, 416)).toEqual({ width: 416, height: 2 });
  });

  it('a 2-second clip gives 2 frames at 1 fps, 8 at 4 fps, 1 at 0.5 fps', async () => {
    const one = await readAllFrames(clip.still2, { fps: 1, maxSide: 320 });
    expect(one.map((f) => f.t)).toEqual([0, 1]);
    const four = await readAllFrames(clip.still2, { fps: 4, maxSide: 160 });
    expect(four.map((f) => f.t)).toEqual([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75]);
    expect((await readAllFrames(clip.still2, { fps: 0.5, maxSide: 160 })).map((f) => f.t)).toEqual([0]);
  });

  it('frames are RGB in the right order and match the photo (still clip vs decodeImage)', async () => {
    const [f] = await readAllFrames(clip.still2, { fps: 1, maxSide: 320 });
    const img = await decodeImage(SKY, 320);
    expect([img.width, img.height]).toEqual([320, 200]);
    expect(meanAbsDiff(f, img)).toBeLessThan(6);
    // A blue sky: blue channel dominates.
    let r = 0;
    let b = 0;
    for (let i = 0; i < f.data.length; i += 3) {
      r += f.data[i];
      b += f.data[i + 2];
    }
    expect(b).toBeGreaterThan(r * 1.3);
  });

  it.each([
    ['panRight', 'x', -1],
    ['panLeft', 'x', 1],
    ['tiltUp', 'y', 1],
    ['tiltDown', 'y', -1],
  ] as const)('%s: content moves by exactly the known speed each second', async (name, axis, sign) => {
    const frames = await readAllFrames(clip[name], { fps: 1, maxSide: 320 });
    expect(frames.length).toBe(4);
    const dir = name === 'panRight' ? 'right' : name === 'panLeft' ? 'left' : name === 'tiltUp' ? 'up' : 'down';
    const speed = defaultPanSpeed(dir);
    for (let k = 0; k + 1 < frames.length; k++) {
      expect(contentShift(frames[k], frames[k + 1], axis, speed + 6)).toBe(sign * speed);
    }
  });

  it('fastDecode (skip non-reference frames) may take a frame or two before the tick', async () => {
    const frames = await readAllFrames(clip.panRight, { fps: 1, maxSide: 320, fastDecode: true });
    expect(frames.map((f) => f.t)).toEqual([0, 1, 2, 3]);
    const speed = defaultPanSpeed('right');
    for (let k = 0; k + 1 < frames.length; k++) {
      const d = -contentShift(frames[k], frames[k + 1], 'x', speed + 6);
      expect(d).toBeGreaterThanOrEqual(speed - Math.ceil((3 * speed) / 25));
      expect(d).toBeLessThanOrEqual(speed + Math.ceil((3 * speed) / 25));
    }
  });

  it('moving subject: the camera is static (the top band never changes)', async () => {
    const frames = await readAllFrames(clip.subject, { fps: 1, maxSide: 320 });
    const band = (f: Frame) => ({ ...f, height: 30, data: f.data.subarray(0, f.width * 30 * 3) });
    // Only compression noise up there (two different I-frames of the same picture)...
    expect(meanAbsDiff(band(frames[0]), band(frames[2]))).toBeLessThan(3.5);
    // ...while the subject's band changes a lot.
    const mid = (f: Frame) => ({ ...f, height: 60, data: f.data.subarray(f.width * 60 * 3, f.width * 120 * 3) });
    expect(meanAbsDiff(mid(frames[0]), mid(frames[2]))).toBeGreaterThan(15);
  });

  it('zoom and shake clips decode and change over time', async () => {
    const z = await readAllFrames(clip.zoomIn, { fps: 1, maxSide: 320 });
    expect(z.length).toBe(3);
    expect(meanAbsDiff(z[0], z[2])).toBeGreaterThan(5);
    const s = await readAllFrames(clip.shaky, { fps: 1, maxSide: 320 });
    expect(s.length).toBe(3);
  });

  it('concat: hard cuts at the cumulative input durations', async () => {
    const p = await probe(clip.concat);
    expect(p.durationSec).toBeCloseTo(2 + 4 + 3, 1);
    const f = await readAllFrames(clip.concat, { fps: 2, maxSide: 160 });
    expect(f.length).toBe(18);
    expect(meanAbsDiff(f[0], f[3])).toBeLessThan(3); // inside the still shot
    expect(meanAbsDiff(f[3], f[4])).toBeGreaterThan(15); // the cut at 2 s
  });

  it.each(['mp4-h264', 'mp4-h264-yuv444p', 'webm-vp9', 'avi-mpeg4'])('%s: a start/end window gives the same frames as a full decode', async (variant) => {
    const file = clip[variant];
    const full = await readAllFrames(file, { fps: 2, maxSide: 320 });
    const win = await readAllFrames(file, { fps: 2, maxSide: 320, start: 1, end: 2.5 });
    expect(win.map((f) => f.t)).toEqual([1, 1.5, 2]);
    for (const f of win) {
      const ref = full.find((g) => Math.abs(g.t - f.t) < 1e-6)!;
      expect(meanAbsDiff(f, ref)).toBeLessThan(1.5);
      expect(stddev(f)).toBeGreaterThan(8);
    }
  });

  it('H.264 4:4:4 windows decode from the start; others seek before -i', async () => {
    const p444 = await probeDetails(clip['mp4-h264-yuv444p']);
    const plan444 = planSample(clip['mp4-h264-yuv444p'], p444, { fps: 1, maxSide: 320, start: 1 });
    expect(plan444.args.indexOf('-ss')).toBe(-1);
    expect(plan444.args.join(' ')).toMatch(/trim=start=0\.96/); // just after the frame before 1 s
    const p420 = await probeDetails(clip['mp4-h264']);
    const plan420 = planSample(clip['mp4-h264'], p420, { fps: 1, maxSide: 320, start: 1 });
    expect(plan420.args.indexOf('-ss')).toBeLessThan(plan420.args.indexOf('-i'));
    expect(plan420.args.indexOf('-ss')).toBeGreaterThanOrEqual(0);
  });

  it('picks seeking for phone-like GOPs and MP4/MOV only', async () => {
    const phone = await planStrategy(clip.phone, await probeDetails(clip.phone), { fps: 1, maxSide: 320 });
    expect(phone.kind).toBe('seek');
    const sparse = await planStrategy(clip.panRight, await probeDetails(clip.panRight), { fps: 1, maxSide: 320 });
    expect(sparse.kind).toBe('decode');
    const webm = await planStrategy(clip['webm-vp9'], await probeDetails(clip['webm-vp9']), { fps: 1, maxSide: 320 });
    expect(webm.kind).toBe('decode');
    const yuv444 = await planStrategy(clip['mp4-h264-yuv444p'], await probeDetails(clip['mp4-h264-yuv444p']), { fps: 1, maxSide: 320, strategy: 'seek' });
    expect(yuv444.kind).toBe('decode');
  });

  const seekCases: [string, () => string, { start?: number; end?: number; fps: number }][] = [
    ['phone clip', () => clip.phone, { fps: 1 }],
    ['phone clip, 3 fps window', () => clip.phone, { fps: 3, start: 0.9, end: 3.2 }],
    ['B-frame pan', () => clip.panRight, { fps: 2 }],
    ['hevc', () => clip['mp4-hevc'], { fps: 1.5 }],
    ...evalVideos()
      .filter((v) => /\.(mov|mp4)$/.test(v))
      .map((v): [string, () => string, { fps: number }] => [path.basename(v), () => v, { fps: 1 }]),
  ];
  it.each(seekCases)('%s: seek and decode strategies give the same frames', async (_name, file, o) => {
    const a = await readAllFrames(file(), { maxSide: 160, ...o, strategy: 'decode' });
    const b = await readAllFrames(file(), { maxSide: 160, ...o, strategy: 'seek' });
    expect(b.map((f) => f.t)).toEqual(a.map((f) => f.t));
    a.forEach((f, i) => expect(meanAbsDiff(f, b[i]), `t=${f.t}`).toBeLessThan(1));
  });

  it('a window past the end yields nothing; an off-grid start is the first tick', async () => {
    expect(await readAllFrames(clip['mp4-h264'], { fps: 1, maxSide: 160, start: 10 })).toEqual([]);
    const w = await readAllFrames(clip['mp4-h264'], { fps: 1, maxSide: 160, start: 0.7 });
    expect(w.map((f) => f.t)).toEqual([0.7, 1.7, 2.7]);
  });

  it.each(['decode', 'seek'] as const)('a truncated mp4 yields the frames that decode (%s)', async (strategy) => {
    const frames = await readAllFrames(clip.truncated, { fps: 2, maxSide: 160, strategy });
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.length).toBeLessThan(8);
  });

  it('bad files throw MediaError from sampleFrames too', async () => {
    await expectMediaError(readAllFrames(clip.text, { fps: 1, maxSide: 160 }), clip.text, /Invalid data/);
    await expectMediaError(readAllFrames(clip.empty, { fps: 1, maxSide: 160 }), clip.empty, /0 bytes/);
    await expectMediaError(readAllFrames(clip.audioOnly, { fps: 1, maxSide: 160 }), clip.audioOnly, /no video stream/);
    await expectMediaError(readAllFrames(clip.truncatedNoIndex, { fps: 1, maxSide: 160 }), clip.truncatedNoIndex, /moov atom/);
  });

  it('rejects bad options', async () => {
    await expect(readAllFrames(clip.still2, { fps: 0, maxSide: 160 })).rejects.toBeInstanceOf(ValidationError);
    await expect(readAllFrames(clip.still2, { fps: 1, maxSide: 1.5 })).rejects.toBeInstanceOf(ValidationError);
    await expect(readAllFrames(clip.still2, { fps: 1, maxSide: 160, start: 2, end: 1 })).rejects.toBeInstanceOf(ValidationError);
  });

  it.runIf(process.platform === 'linux')('abort kills ffmpeg and rejects with the reason; so does breaking out early', async () => {
    const long = evalVideos().find((v) => v.endsWith('opencv-doc__vtest.avi')) ?? clip.concat;
    const link = path.join(dir, `abort-${Date.now()}${path.extname(long)}`);
    symlinkSync(long, link);

    const ac = new AbortController();
    const got: number[] = [];
    const run = (async () => {
      for await (const f of sampleFrames(link, { fps: 8, maxSide: 416, signal: ac.signal, readAhead: 1 })) {
        got.push(f.t);
        if (got.length === 2) {
          expect(ffmpegProcessesFor(link).length).toBe(1);
          ac.abort(new Error('stop please'));
        }
      }
    })();
    await expect(run).rejects.toThrow('stop please');
    expect(got.length).toBe(2);
    await expectNoFfmpegFor(link);

    for await (const f of sampleFrames(link, { fps: 8, maxSide: 416, readAhead: 1 })) {
      expect(f.t).toBe(0);
      break;
    }
    await expectNoFfmpegFor(link);

    // The seek strategy (several short ffmpeg runs) is killed too.
    const phoneLink = path.join(dir, `abort-phone-${Date.now()}.mp4`);
    symlinkSync(clip.phone, phoneLink);
    const ac2 = new AbortController();
    const run2 = (async () => {
      for await (const f of sampleFrames(phoneLink, { fps: 4, maxSide: 160, signal: ac2.signal, strategy: 'seek' })) {
        if (f.t >= 1) ac2.abort(new Error('enough'));
      }
    })();
    await expect(run2).rejects.toThrow('enough');
    await expectNoFfmpegFor(phoneLink);

    const pre = new AbortController();
    pre.abort();
    // Already aborted: rejects with the signal's own reason, before any ffmpeg starts.
    await expect(readAllFrames(link, { fps: 1, maxSide: 160, signal: pre.signal })).rejects.toBe(pre.signal.reason);
    expect(ffmpegProcessesFor(link)).toHaveLength(0);
  });
});

// ---------- decodeImage ----------

describe('decodeImage', () => {
  it('decodes photos to RGB at the requested longest side', async () => {
    const a = await decodeImage(evalPhoto('python3-skimage__astronaut.jpg'), 256);
    expect([a.width, a.height, a.data.length]).toEqual([256, 256, 256 * 256 * 3]);
    const k = await decodeImage(SKY, 416); // 1600x1000
    expect([k.width, k.height]).toEqual([416, 260]);
    const native = await decodeImage(evalPhoto('python3-skimage__astronaut.jpg'), 0);
    expect([native.width, native.height]).toEqual([512, 512]);
    await expectMediaError(decodeImage(clip.text, 100), clip.text, /Invalid data/);
  });
});

// ---------- audio ----------

describe('extractAudio', () => {
  it('mono float32 at 16 kHz: a 440 Hz sine comes back as one', async () => {
    const a = await extractAudio(clip['mp4-h264-audio']);
    expect(a).toBeInstanceOf(Float32Array);
    expect(a.length / 16000).toBeGreaterThan(2.9);
    expect(a.length / 16000).toBeLessThan(3.1);
    const mid = a.subarray(8000, 40000);
    let crossings = 0;
    let energy = 0;
    for (let i = 1; i < mid.length; i++) {
      if (mid[i - 1] < 0 !== mid[i] < 0) crossings++;
      energy += mid[i] * mid[i];
    }
    expect(crossings / 2 / (mid.length / 16000)).toBeCloseTo(440, -1);
    expect(Math.sqrt(energy / mid.length)).toBeGreaterThan(0.05);
  });

  it('honours sampleRate and a start/end window', async () => {
    const a = await extractAudio(clip['webm-vp9-audio'], { sampleRate: 8000, start: 1, end: 2 });
    expect(Math.abs(a.length - 8000)).toBeLessThan(200);
  });

  it('no audio track → empty array', async () => {
    expect((await extractAudio(clip['mp4-h264'])).length).toBe(0);
    expect((await extractAudio(clip['webm-vp9'])).length).toBe(0);
  });

  it('audio-only files still give their audio; bad files throw MediaError', async () => {
    expect((await extractAudio(clip.audioOnly)).length / 16000).toBeCloseTo(2, 1);
    await expectMediaError(extractAudio(clip.text), clip.text, /Invalid data/);
  });
});
