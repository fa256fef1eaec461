/**
 * JPEG thumbnails from decoded frames, with the real ffmpeg and real photos: format, size budget,
 * dimensions (read back by decoding the JPEG), colour fidelity, no upscaling, incompressible input,
 * batch = one-by-one, and refusal of malformed frames.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeImage } from '../../src/media/index.js';
import { encodeThumbnail, encodeThumbnails, splitJpegStream, thumbnailSize } from '../../src/media/thumbnail.js';
import type { Frame } from '../../src/media/types.js';
import { evalPhotos, evalPhotosDir, isCI, removeDir, requireSharedData, tempDir } from '../helpers/clips.js';

const KB30 = 30 * 1024;
/** Per-channel tolerance on the mean colour (0-255): scaling and JPEG keep the DC, rounding and 4:2:0 chroma cost ~1. */
const MEAN_TOLERANCE = 3;

const haveData = isCI || requireSharedData([evalPhotosDir]);

/** Deterministic "random bytes" (mulberry32), so a failure reproduces. */
function noiseFrame(width: number, height: number, seed = 1): Frame {
  let a = seed >>> 0;
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < data.length; i += 4) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const r = (t ^ (t >>> 14)) >>> 0;
    for (let k = 0; k < 4 && i + k < data.length; k++) data[i + k] = (r >>> (8 * k)) & 0xff;
  }
  return { t: 0, width, height, data };
}

function meanColour(f: Frame): [number, number, number] {
  const s = [0, 0, 0];
  for (let i = 0; i < f.data.length; i += 3) {
    s[0] += f.data[i];
    s[1] += f.data[i + 1];
    s[2] += f.data[i + 2];
  }
  const n = f.width * f.height;
  return [s[0] / n, s[1] / n, s[2] / n];
}

function expectJpeg(jpeg: Buffer): void {
  expect(jpeg.length).toBeGreaterThan(4);
  expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
  expect([jpeg[jpeg.length - 2], jpeg[jpeg.length - 1]]).toEqual([0xff, 0xd9]);
}

describe.skipIf(!haveData)('encodeThumbnail (real ffmpeg, real photos)', () => {
  let dir: string;
  let n = 0;
  /** Decodes a JPEG back by writing it to a temp file (maxSide 0: native size). */
  const readBack = async (jpeg: Buffer): Promise<Frame> => {
    const file = path.join(dir, `thumb-${n++}.jpg`);
    writeFileSync(file, jpeg);
    return decodeImage(file, 0);
  };
  const photo = (name: string): string => {
    const p = evalPhotos().find((f) => path.basename(f) === name);
    if (!p) throw new Error(`evaluation photo ${name} not found under ${evalPhotosDir}`);
    return p;
  };

  beforeAll(() => {
    requireSharedData([evalPhotosDir]); // throws under CI when missing
    dir = tempDir('vidembed-thumbs-');
  });
  afterAll(() => removeDir(dir));

  it('encodes a 512 px photo frame as a 320 px wide JPEG within 30 KB, same picture', async () => {
    // 512x354: 320 * 354 / 512 = 221.25, so the height must round to the even 222.
    const frame = await decodeImage(photo('opencv-doc__building.jpg'), 512);
    expect([frame.width, frame.height]).toEqual([512, 354]);
    const jpeg = await encodeThumbnail(frame);
    expectJpeg(jpeg);
    expect(jpeg.length).toBeLessThanOrEqual(KB30);
    expect(jpeg.length).toBeGreaterThan(3000); // a real picture, not a flat one

    const back = await readBack(jpeg);
    expect(back.width).toBe(320);
    expect(Math.abs(back.height - (320 * frame.height) / frame.width)).toBeLessThanOrEqual(1);
    expect(back.height % 2).toBe(0);
    const [src, got] = [meanColour(frame), meanColour(back)];
    for (let c = 0; c < 3; c++) expect(Math.abs(got[c] - src[c])).toBeLessThan(MEAN_TOLERANCE);
  });

  it('a dozen eval photos: JPEG, within 30 KB, 320 wide, mean colour kept', async () => {
    const photos = evalPhotos().slice(0, 12);
    for (const p of photos) {
      const frame = await decodeImage(p, 512);
      const jpeg = await encodeThumbnail(frame);
      expectJpeg(jpeg);
      expect(jpeg.length, path.basename(p)).toBeLessThanOrEqual(KB30);
      const back = await readBack(jpeg);
      expect(back.width, path.basename(p)).toBe(320);
      expect(Math.abs(back.height - (320 * frame.height) / frame.width), path.basename(p)).toBeLessThanOrEqual(1);
      const [src, got] = [meanColour(frame), meanColour(back)];
      for (let c = 0; c < 3; c++) expect(Math.abs(got[c] - src[c]), `${path.basename(p)} channel ${c}`).toBeLessThan(MEAN_TOLERANCE);
    }
  });

  it('a portrait frame is 320 wide too (height by aspect, even)', async () => {
    const frame = await decodeImage(photo('kphotoalbum__wayne__rotated90.jpg'), 512);
    expect([frame.width, frame.height]).toEqual([384, 512]);
    const back = await readBack(await encodeThumbnail(frame));
    expect(back.width).toBe(320);
    expect(Math.abs(back.height - (320 * 512) / 384)).toBeLessThanOrEqual(1); // 426.67 -> 426
    expect(back.height % 2).toBe(0);
  });

  it('does not upscale a frame narrower than the thumbnail width', async () => {
    const tiny = await decodeImage(photo('lomiri-wallpapers-20.04__Kleiber_by_Lukas_Baubkus.jpg'), 64);
    expect([tiny.width, tiny.height]).toEqual([64, 36]);
    const jpeg = await encodeThumbnail(tiny);
    expectJpeg(jpeg);
    const back = await readBack(jpeg);
    expect([back.width, back.height]).toEqual([64, 36]);
    const [src, got] = [meanColour(tiny), meanColour(back)];
    for (let c = 0; c < 3; c++) expect(Math.abs(got[c] - src[c])).toBeLessThan(MEAN_TOLERANCE);
    // Odd sizes round down to even, still without upscaling.
    expect(thumbnailSize({ width: 63, height: 35 })).toEqual({ width: 62, height: 34 });
  });

  it('honours a custom width', async () => {
    const frame = await decodeImage(photo('opencv-doc__building.jpg'), 512);
    const back = await readBack(await encodeThumbnail(frame, { width: 160 }));
    expect(back.width).toBe(160);
    expect(Math.abs(back.height - (160 * 354) / 512)).toBeLessThanOrEqual(1);
  });

  it('a noisy 1280x720 frame (random bytes) still fits 30 KB at 320 wide', async () => {
    const jpeg = await encodeThumbnail(noiseFrame(1280, 720));
    expectJpeg(jpeg);
    expect(jpeg.length).toBeLessThanOrEqual(KB30);
    const back = await readBack(jpeg);
    expect([back.width, back.height]).toEqual([320, 180]);
  });

  it('steps quality down when the first try is over budget (320x180 noise: no downscale to smooth it)', async () => {
    const frame = noiseFrame(320, 180, 7);
    const jpeg = await encodeThumbnail(frame);
    expectJpeg(jpeg);
    expect(jpeg.length).toBeLessThanOrEqual(KB30);
    const back = await readBack(jpeg);
    expect([back.width, back.height]).toEqual([320, 180]); // coarser quantiser was enough, size kept
    const [src, got] = [meanColour(frame), meanColour(back)];
    for (let c = 0; c < 3; c++) expect(Math.abs(got[c] - src[c])).toBeLessThan(MEAN_TOLERANCE);
  });

  it('past the coarsest quality it shrinks the picture to fit a tight budget', async () => {
    const jpeg = await encodeThumbnail(noiseFrame(320, 180, 3), { maxBytes: 2048 });
    expectJpeg(jpeg);
    expect(jpeg.length).toBeLessThanOrEqual(2048);
    const back = await readBack(jpeg);
    expect(back.width).toBeLessThan(320);
    expect(back.width % 2).toBe(0);
    expect(Math.abs(back.height - (back.width * 180) / 320)).toBeLessThanOrEqual(1);
  });

  it('encodeThumbnails gives the same bytes as one at a time, in order', async () => {
    const photos = evalPhotos().slice(0, 6);
    // Same-size frames (as one video's would be): crop each photo's 512x288 top.
    const frames: Frame[] = [];
    for (const p of photos) {
      const f = await decodeImage(p, 512);
      if (f.width === 512 && f.height >= 288) frames.push({ t: frames.length, width: 512, height: 288, data: f.data.slice(0, 512 * 288 * 3) });
    }
    frames.push({ ...noiseFrame(512, 288, 5), t: frames.length }); // one that needs several tries
    expect(frames.length).toBeGreaterThanOrEqual(4);
    const batch = await encodeThumbnails(frames);
    expect(batch).toHaveLength(frames.length);
    for (let i = 0; i < frames.length; i++) {
      expectJpeg(batch[i]);
      expect(batch[i].length).toBeLessThanOrEqual(KB30);
      expect(batch[i].equals(await encodeThumbnail(frames[i])), `frame ${i}`).toBe(true);
    }
    expect(await encodeThumbnails([])).toEqual([]);
    await expect(encodeThumbnails([frames[0], noiseFrame(64, 36)])).rejects.toThrow(/same size/);
  });

  it('splits a stream of JPEGs at their markers', async () => {
    const a = await encodeThumbnail(noiseFrame(64, 36, 1));
    const b = await encodeThumbnail(noiseFrame(96, 54, 2));
    const parts = splitJpegStream(Buffer.concat([a, b, a]));
    expect(parts.map((p) => p.length)).toEqual([a.length, b.length, a.length]);
    expect(parts[1].equals(b)).toBe(true);
    expect(() => splitJpegStream(Buffer.concat([a, b.subarray(0, b.length - 10)]))).toThrow(/truncated|corrupt/);
  });

  it('refuses a frame whose data length is not width*height*3', async () => {
    const bad: Frame = { t: 0, width: 64, height: 36, data: new Uint8Array(64 * 36 * 3 - 1) };
    await expect(encodeThumbnail(bad)).rejects.toThrow(/6911 bytes, expected 64x36x3 = 6912/);
    await expect(encodeThumbnail({ t: 0, width: 64, height: 36, data: new Uint8Array(64 * 36 * 4) })).rejects.toThrow(/expected 64x36x3/);
    await expect(encodeThumbnails([noiseFrame(64, 36), bad])).rejects.toThrow(/expected 64x36x3/);
    await expect(encodeThumbnail({ t: 0, width: 0, height: 36, data: new Uint8Array(0) })).rejects.toThrow(/positive integers/);
  });

  it('refuses bad options and stops on abort', async () => {
    const f = noiseFrame(64, 36);
    await expect(encodeThumbnail(f, { width: 0 })).rejects.toThrow(/width/);
    await expect(encodeThumbnail(f, { maxBytes: 10 })).rejects.toThrow(/maxBytes/);
    const ac = new AbortController();
    ac.abort(new Error('stop now'));
    await expect(encodeThumbnail(f, { signal: ac.signal })).rejects.toThrow(/stop now/);
  });
});
