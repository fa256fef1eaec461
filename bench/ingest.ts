import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { analyzersFor } from '../src/capabilities/index.js';
import { PerceptionAnalyzer } from '../src/analysis/perception.js';
import { analyzeVideo, type AnalyzedVideo } from '../src/pipeline/pipeline.js';
import { LocalEngine } from '../src/runtime/engine.js';
import { ffmpegPath, probeDetails, sampleFrames } from '../src/media/index.js';
import { planSample } from '../src/media/frames.js';
import { PIXEL_TAGGING_SAMPLING as SAMPLING } from '../src/tagging/index.js';
import { getEmbedder } from '../src/embedders/registry.js';
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

/** Wall seconds of one ffmpeg run whose output goes nowhere (its own process, like ingest's decoder). */
async function ffmpegWall(args: string[]): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(ffmpegPath(), ['-hide_banner', '-nostdin', '-nostats', '-v', 'error', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${String(code)}`))));
  });
  return (performance.now() - t0) / 1000;
}

const load1 = (): number => round(os.loadavg()[0]);

/**
 * Ingest real-time factor at defaults (4 s segments, 1 fps) on a 60 s 1080p h264 clip, split into
 * decode (a decode-only pass), models (the rest of the analysis) and store (the write); plus the
 * pixel taggers' per-frame cost on the same clip (`tagging_ms`, {@link benchTaggingCost}).
 *
 * Decode-bound figures: `plain_decode_wall_s` is ffmpeg decoding the same file on one thread at its
 * full frame rate to nothing (`-threads 1 -f null -`), `sampled_decode_wall_s` the decode ingest
 * itself runs (4 fps, scaled, skip_frame noref, raw frames to nothing); `ingest_over_plain_decode`
 * is the ingest wall over the plain decode (target ≤ 1.5). The ingest runs with the pixel taggers in
 * a worker thread (the default), then once more on the main thread (`in_thread`) for comparison,
 * both after a warm-up run on the first 8 s;
 * `load_average` is the 1-minute load at the start (other work on the machine) and when each figure
 * was taken (which then also counts the bench's own preceding work: encoding the clip, decoding).
 */
export async function benchIngest(seconds = 60, photo?: string): Promise<Record<string, unknown>> {
  const dir = benchDir();
  const loads: Record<string, number> = { start: load1() };
  try {
    const clip = makeMovingPhotoClip(path.join(dir, 'in.mp4'), { seconds, width: 1920, height: 1080, photo: photo && path.resolve(process.cwd(), '../shared/eval/photos', photo) });
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

    loads.plain_decode = load1();
    const plainDecodeS = await ffmpegWall(['-threads', '1', '-i', clip, '-map', '0:v:0', '-f', 'null', '-']);
    const maxSide = Math.max(embedder.frameMaxSide, ...analyzers.map((a) => a.frameMaxSide));
    const plan = planSample(clip, await probeDetails(clip), { fps: SAMPLING.fps, maxSide, fastDecode: process.env.VIDEMBED_FFMPEG_FAST !== '0' });
    loads.sampled_decode = load1();
    const sampledDecodeS = await ffmpegWall(['-y', ...plan.args.map((a) => (a === 'pipe:1' ? '/dev/null' : a))]);

    const ingest = async (pixelThread: boolean): Promise<{ analyzed: AnalyzedVideo; ms: number }> => {
      const t0 = performance.now();
      const analyzed = await analyzeVideo(clip, embedder, { segmentSeconds: 4, fps: 1, analyzers, pixelThread });
      return { analyzed, ms: performance.now() - t0 };
    };
    // Warm both ways up first (model first calls, the worker thread's start and JIT) on the first 8 s,
    // as a worker that has already processed a video is.
    const warm = path.join(dir, 'warm.mp4');
    await ffmpegWall(['-y', '-i', clip, '-t', '8', '-c', 'copy', warm]);
    for (const pixelThread of [true, false]) await analyzeVideo(warm, embedder, { segmentSeconds: 4, fps: 1, analyzers, pixelThread });

    const perception = analyzers.find((a): a is PerceptionAnalyzer => a instanceof PerceptionAnalyzer);
    perception?.resetTimings();
    loads.ingest = load1();
    const { analyzed, ms: analyzeMs } = await ingest(true);
    const perceptionMs = perception ? Object.fromEntries(Object.entries(perception.timings).map(([k, t]) => [k, { calls: t.calls, ms: round(t.ms) }])) : undefined;
    loads.ingest_in_thread = load1();
    const inThread = await ingest(false);
    loads.end = load1();

    const store = Store.open(path.join(dir, 'db.sqlite'));
    const c = store.collections.insert({ name: 'b', description: '', model: embedder.id, dim: embedder.dim });
    store.videos.insert({ id: 'v', collection_id: c.id, filename: 'in.mp4', path: clip, size_bytes: 1 });
    const tStore = performance.now();
    store.segments.replaceForVideo('v', c.id, embedder.dim, analyzed.segments.map((s) => ({ idx: s.idx, start: s.start, end: s.end, description: s.description, vector: s.vector })));
    const storeMs = performance.now() - tStore;
    store.close();

    const totalMs = analyzeMs + storeMs;
    const taggingMs = await benchTaggingCost(clip);
    const ingestWallS = totalMs / 1000;
    return {
      video: `${seconds} s 1920x1080 h264 30 fps, a window panning over ${photo ?? 'plasma-workspace-wallpapers__Path_1920x1080.jpg'}`,
      analyzers: analyzers.map((a) => `${a.name}@${a.version}`),
      segments: analyzed.segments.length,
      keyframes_reused: analyzed.segments.filter((s) => s.details?.reused_from !== undefined).length,
      frames_sampled: frames,
      realtime_factor: round(seconds / ingestWallS),
      target_realtime_factor: 5,
      ingest_wall_s: round(ingestWallS),
      plain_decode_wall_s: round(plainDecodeS),
      sampled_decode_wall_s: round(sampledDecodeS),
      ingest_over_plain_decode: round(ingestWallS / plainDecodeS),
      target_ingest_over_plain_decode: 1.5,
      in_thread: { ingest_wall_s: round((inThread.ms + storeMs) / 1000), realtime_factor: round(seconds / ((inThread.ms + storeMs) / 1000)), ingest_over_plain_decode: round((inThread.ms + storeMs) / 1000 / plainDecodeS) },
      load_average: loads,
      decode_commands: {
        plain: `ffmpeg -threads 1 -i in.mp4 -map 0:v:0 -f null -`,
        sampled: `ffmpeg ${plan.args.join(' ').replace(clip, 'in.mp4').replace('pipe:1', '/dev/null')}`,
      },
      seconds: { total: round(totalMs / 1000), decode_only_pass: round(decodeMs / 1000), models_and_rest: round((analyzeMs - decodeMs) / 1000), store: round(storeMs / 1000), model_load_once: round(loadMs / 1000) },
      note: 'decode runs in the ffmpeg child process concurrently with the models, so decode + models > total is expected',
      tagging_ms: taggingMs,
      perception_model_ms: perceptionMs,
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
