/**
 * Media-layer benchmark: sampling 1 fps at maxSide 416 (what ingest does) from two 60 s 1080p30
 * H.264 clips (~5 Mbit/s): an x264-style export (4 s GOP, B-frames) and a phone-camera-style one
 * (1 s GOP, no B-frames). Each is generated once (1-2 min on 2 idle cores) and cached under the
 * OS temp dir.
 *
 * Returned keys (seconds are wall clock; `rtf` = video seconds per wall second; `cpu_s` = ffmpeg's
 * user+sys CPU seconds, Linux only):
 *   media.export_1080p_1fps.*              default settings (auto → full decode, 1 thread)
 *   media.export_1080p_1fps_threads_auto.* ffmpeg picks the thread count
 *   media.export_1080p_1fps_fast.*         + fastDecode (skip non-reference frames)
 *   media.phone_1080p_1fps.*               default settings (auto → keyframe seeking)
 *   media.phone_1080p_1fps_decode.*        forced full decode, for comparison
 *   media.{export,phone}_1080p_4fps*       the engine's pipeline rate (4 fps: full decode wins)
 *   media.probe_ms                         one probe
 */
import { existsSync, renameSync } from 'node:fs';
import { childrenCpuSeconds } from './util.js';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { probeDetails } from '../src/media/probe.js';
import { sampleFrames, type DecodeTuning } from '../src/media/frames.js';
import { evalPhoto, make1080pClip } from '../test/helpers/clips.js';

const SECONDS = 60;

/** Path of a cached benchmark clip, generating it when absent. */
export async function benchClip(kind: 'export' | 'phone' = 'export'): Promise<string> {
  const name = kind === 'export' ? `1080p30-h264-${SECONDS}s-v1.mp4` : `1080p30-h264-phone-${SECONDS}s-v1.mp4`;
  const file = path.join(os.tmpdir(), 'vidembed-bench', name);
  if (!existsSync(file)) {
    const tmp = file.replace(/\.mp4$/, `.${process.pid}.tmp.mp4`);
    const opts = kind === 'phone' ? { gop: 30, bframes: 0 } : {};
    await make1080pClip(evalPhoto('plasma-workspace-wallpapers__Path_1920x1080.jpg'), tmp, SECONDS, opts);
    renameSync(tmp, file);
  }
  return file;
}

async function timeSampling(file: string, fps: number, tuning: DecodeTuning): Promise<{ seconds: number; cpu: number; frames: number }> {
  const probe = await probeDetails(file);
  const cpu0 = childrenCpuSeconds();
  const t0 = performance.now();
  let frames = 0;
  for await (const f of sampleFrames(file, { fps, maxSide: 416, probe, ...tuning })) {
    if (f.data.length !== f.width * f.height * 3) throw new Error('bad frame size');
    frames++;
  }
  const seconds = (performance.now() - t0) / 1000;
  // The child is reaped shortly after its stdout closes.
  await new Promise((r) => setTimeout(r, 50));
  return { seconds, cpu: childrenCpuSeconds() - cpu0, frames };
}

export async function benchMedia(): Promise<Record<string, number>> {
  const clips = { export: await benchClip('export'), phone: await benchClip('phone') };
  const out: Record<string, number> = {};
  const p0 = performance.now();
  const p = await probeDetails(clips.export);
  out['media.probe_ms'] = Number((performance.now() - p0).toFixed(1));
  const duration = p.durationSec || SECONDS;
  const variants: [string, string, number, DecodeTuning][] = [
    ['media.export_1080p_1fps', clips.export, 1, {}],
    ['media.export_1080p_1fps_threads_auto', clips.export, 1, { threads: 0 }],
    ['media.export_1080p_1fps_fast', clips.export, 1, { fastDecode: true }],
    ['media.export_1080p_4fps', clips.export, 4, {}],
    ['media.export_1080p_4fps_fast', clips.export, 4, { fastDecode: true }],
    ['media.phone_1080p_1fps', clips.phone, 1, {}],
    ['media.phone_1080p_1fps_decode', clips.phone, 1, { strategy: 'decode' }],
    ['media.phone_1080p_4fps', clips.phone, 4, {}],
  ];
  for (const [key, file, fps, tuning] of variants) {
    const r = await timeSampling(file, fps, tuning);
    if (r.frames !== Math.ceil(duration * fps)) throw new Error(`${key}: expected ${Math.ceil(duration * fps)} frames, got ${r.frames}`);
    out[`${key}.seconds`] = Number(r.seconds.toFixed(3));
    out[`${key}.rtf`] = Number((duration / r.seconds).toFixed(2));
    if (Number.isFinite(r.cpu)) out[`${key}.cpu_s`] = Number(r.cpu.toFixed(2));
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchMedia().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
