import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { analyzersFor } from '../src/analysis/index.js';
import { analyzeVideo } from '../src/engine/pipeline.js';
import { LocalEngine } from '../src/engine/engine.js';
import { sampleFrames } from '../src/media/index.js';
import { getEmbedder } from '../src/models/registry.js';
import { Store } from '../src/store/index.js';
import { framingPixelCues } from '../src/tagging/framing.js';
import { PIXEL_TAGGING_SAMPLING, estimatePairMotion, prepareMotionFrame } from '../src/tagging/index.js';
import type { Frame } from '../src/media/types.js';
import { benchDir, makeMovingPhotoClip, round } from './util.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/vidembed');

/**
 * Per-frame cost of the pixel taggers on the first `seconds` of `clip` (ms, mean of `reps` passes
 * after a warm-up pass; the unit tests do not time anything): camera motion — preparing a frame and
 * matching it with the previous one at {@link PIXEL_TAGGING_SAMPLING} — and the framing pixel cues
 * of one 512-px keyframe (what the perception layer measures per analysed keyframe).
 */
export async function benchTaggingCost(clip: string, seconds = 8, reps = 3): Promise<Record<string, number | string>> {
  const grab = async (fps: number, maxSide: number): Promise<Frame[]> => {
    const out: Frame[] = [];
    for await (const f of sampleFrames(clip, { fps, maxSide, start: 0, end: seconds })) out.push(f);
    return out;
  };
  const { fps, maxSide } = PIXEL_TAGGING_SAMPLING;
  const small = await grab(fps, maxSide);
  const keyframes = await grab(1, 512);
  if (small.length < 2 || keyframes.length < 1) throw new Error(`tagging cost: too few frames (${small.length}, ${keyframes.length})`);
  const motionPass = (): void => {
    let prev = prepareMotionFrame(small[0]);
    for (let i = 1; i < small.length; i++) {
      const cur = prepareMotionFrame(small[i]);
      estimatePairMotion(prev, cur);
      prev = cur;
    }
  };
  const cuesPass = (): void => {
    for (const f of keyframes) framingPixelCues(f);
  };
  const time = (pass: () => void, items: number): number => {
    pass(); // warm-up
    const t0 = performance.now();
    for (let k = 0; k < reps; k++) pass();
    return (performance.now() - t0) / (reps * items);
  };
  const perPair = time(motionPass, small.length - 1);
  return {
    motion_frame: `${small[0].width}x${small[0].height} at ${fps} fps`,
    motion_per_frame_pair: round(perPair),
    motion_per_video_minute: round(perPair * fps * 60),
    framing_pixel_cues_frame: `${keyframes[0].width}x${keyframes[0].height}`,
    framing_pixel_cues_per_keyframe: round(time(cuesPass, keyframes.length)),
  };
}

/**
 * Ingest real-time factor at defaults (4 s segments, 1 fps) on a 60 s 1080p h264 clip, split into
 * decode (a decode-only pass), models (the rest of the analysis) and store (the write); plus the
 * pixel taggers' per-frame cost on the same clip (`tagging_ms`, {@link benchTaggingCost}).
 */
export async function benchIngest(seconds = 60): Promise<Record<string, unknown>> {
  const dir = benchDir();
  try {
    const clip = makeMovingPhotoClip(path.join(dir, 'in.mp4'), { seconds, width: 1920, height: 1080 });
    const embedder = getEmbedder();
    const tLoad = performance.now();
    await embedder.load();
    // The analyzers the engine runs before this embedder (perception, ImageNet where installed, text).
    const analyzers = process.env.VIDEMBED_BENCH_NO_ANALYZERS === '1' ? [] : await analyzersFor(embedder);
    const loadMs = performance.now() - tLoad;

    const tDecode = performance.now();
    let frames = 0;
    for await (const _f of sampleFrames(clip, { fps: 1, maxSide: embedder.frameMaxSide })) frames++;
    const decodeMs = performance.now() - tDecode;

    const tAll = performance.now();
    const analyzed = await analyzeVideo(clip, embedder, { segmentSeconds: 4, fps: 1, analyzers });
    const analyzeMs = performance.now() - tAll;

    const store = Store.open(path.join(dir, 'db.sqlite'));
    const c = store.collections.insert({ name: 'b', description: '', model: embedder.id, dim: embedder.dim });
    store.videos.insert({ id: 'v', collection_id: c.id, filename: 'in.mp4', path: clip, size_bytes: 1 });
    const tStore = performance.now();
    store.segments.replaceForVideo('v', c.id, embedder.dim, analyzed.segments.map((s) => ({ idx: s.idx, start: s.start, end: s.end, description: s.description, vector: s.vector })));
    const storeMs = performance.now() - tStore;
    store.close();

    const totalMs = analyzeMs + storeMs;
    const taggingMs = await benchTaggingCost(clip);
    return {
      video: `${seconds} s 1920x1080 h264 30 fps`,
      analyzers: analyzers.map((a) => `${a.name}@${a.version}`),
      segments: analyzed.segments.length,
      frames_sampled: frames,
      realtime_factor: round(seconds / (totalMs / 1000)),
      target_realtime_factor: 5,
      seconds: { total: round(totalMs / 1000), decode_only_pass: round(decodeMs / 1000), models_and_rest: round((analyzeMs - decodeMs) / 1000), store: round(storeMs / 1000), model_load_once: round(loadMs / 1000) },
      note: 'decode runs in the ffmpeg child process concurrently with the models, so decode + models > total is expected',
      tagging_ms: taggingMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function vmHwmKb(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Peak RSS (VmHWM) of a real `vidembed worker` process ingesting a 10-minute video. */
export async function benchWorkerRss(seconds = 600): Promise<Record<string, unknown>> {
  const dir = benchDir();
  try {
    const clip = makeMovingPhotoClip(path.join(dir, 'long.mp4'), { seconds, width: 1280, height: 720, preset: 'ultrafast' });
    const home = path.join(dir, 'home');
    const engine = new LocalEngine({ home });
    await engine.createCollection({ name: 'rss' });
    const { video_id } = await engine.uploadVideo('rss', { path: clip, filename: 'long.mp4' });
    await engine.close();
    const t0 = performance.now();
    const child = spawn(process.execPath, [BIN, 'worker', '--idle-exit', '1'], { env: { ...process.env, VIDEMBED_HOME: home }, stdio: 'ignore' });
    let peakKb = 0;
    const timer = setInterval(() => {
      peakKb = Math.max(peakKb, vmHwmKb(child.pid!) ?? 0);
    }, 200);
    await new Promise((resolve) => child.on('exit', resolve));
    clearInterval(timer);
    const wallS = (performance.now() - t0) / 1000;
    const check = new LocalEngine({ home });
    const status = await check.videoStatus(video_id);
    await check.close();
    return {
      video: `${seconds} s 1280x720 h264 30 fps`,
      status: status.status,
      peak_rss_mb: round(peakKb / 1024, 1),
      target_peak_rss_mb: 1536,
      wall_s: round(wallS, 1),
      realtime_factor_including_startup: round(seconds / wallS),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
