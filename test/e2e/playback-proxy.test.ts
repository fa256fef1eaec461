/**
 * The playback copy from real files (real ffmpeg): what the probe of each kind of file decides,
 * and the copy's codec, size, orientation and audio — a portrait phone-style HEVC MOV (rotation in
 * its metadata), an anamorphic MPEG-2 program stream with MP2 audio, and what plays as it is.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playsInBrowser, withPlaybackProxy } from '../../src/media/playback.js';
import { displaySize, probe, probeDetails } from '../../src/media/probe.js';
import { evalPhoto, ffmpeg, makeRotatedClip, makeStillClip, removeDir, tempDir } from '../helpers/clips.js';

describe('the playback copy of real files', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('vidembed-e2e-proxy-');
  });
  afterAll(() => removeDir(dir));

  /** Probes the copy made of `file` (inside withPlaybackProxy, before it is removed). */
  const copyOf = (file: string) => withPlaybackProxy(file, path.basename(file), (out) => probeDetails(out));

  it('turns a portrait HEVC MOV into an upright H.264 copy within 720x1280, with AAC', async () => {
    const stored = path.join(dir, 'phone-stored.mov');
    await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=30', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '2',
      '-c:v', 'libx265', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', stored]);
    const file = await makeRotatedClip(stored, path.join(dir, 'phone.mov'), 90);
    const media = await probe(file);
    expect(media.rotation).toBe(90);
    expect(playsInBrowser(media)).toEqual({ plays: false, why: 'hevc video in MP4/MOV' });
    const copy = await copyOf(file);
    expect(copy).toMatchObject({ videoCodec: 'h264', pixFmt: 'yuv420p', audioCodec: 'aac', rotation: 0 });
    expect(displaySize(copy)).toEqual({ width: 720, height: 1280 });
    expect(Math.abs(copy.durationSec - 2)).toBeLessThan(0.2);
  });

  it('turns an anamorphic MPEG-2 program stream with MP2 audio into square pixels, its 16:9 kept, and AAC', async () => {
    const file = path.join(dir, 'tape.mpg');
    await ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=720x576:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=11025', '-t', '2',
      '-c:v', 'mpeg2video', '-aspect', '16:9', '-c:a', 'mp2', '-ar', '22050', '-shortest', '-f', 'mpeg', file]);
    const media = await probe(file);
    expect(playsInBrowser(media).plays).toBe(false);
    const shown = displaySize(media);
    expect(shown.width / shown.height).toBeCloseTo(16 / 9, 1);
    const copy = await copyOf(file);
    expect(copy).toMatchObject({ videoCodec: 'h264', pixFmt: 'yuv420p', audioCodec: 'aac' });
    expect(copy.videoStream!.sar).toBe(1);
    expect(copy.width / copy.height).toBeCloseTo(16 / 9, 1);
    expect(copy.height).toBeLessThanOrEqual(720);
  });

  it('leaves what plays as it is: an H.264 MP4 and a VP9 WebM need no copy', async () => {
    const mp4 = await makeStillClip(evalPhoto('plasma-workspace-wallpapers__Path_1920x1080.jpg'), path.join(dir, 'clip.mp4'), { seconds: 1, audio: true });
    const webm = await makeStillClip(evalPhoto('plasma-workspace-wallpapers__Path_1920x1080.jpg'), path.join(dir, 'clip.webm'), { seconds: 1 });
    expect(playsInBrowser(await probe(mp4))).toEqual({ plays: true, why: '' });
    expect(playsInBrowser(await probe(webm))).toEqual({ plays: true, why: '' });
  });
});
