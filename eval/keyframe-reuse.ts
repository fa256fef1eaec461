/**
 * Keyframe reuse threshold: `node dist/eval/keyframe-reuse.js [tuning|check] [--json]`.
 *
 * For one half of the held-out split (eval/split.ts) it makes, with the real ffmpeg, 9 s 640×360
 * clips of each of that half's photos — a still shot with sensor noise, a slow and a medium pan, a
 * slow zoom, a slow fade (the light drops) and a subject crossing a still background — and takes
 * the half's videos as they are. It samples frames as ingest does (4 fps, 512 px, skip_frame noref)
 * and pairs the keyframe at 0.5 s (the one the models analysed) with the frames at 1, 2, 4 and 8 s
 * (later keyframes that might reuse it). For every pair it measures the thumbnail difference the
 * pipeline gates on (src/pipeline/keyframe-reuse.ts) and what reuse would change: the perception
 * facts of the later frame analysed afresh versus with the earlier keyframe's observation reused
 * (objects, faces, people, shot size, angle), and the ImageNet classes of the two frames when the
 * classifier is installed (VIDEMBED_MODELS_DIR).
 *
 * A pair *changes* when reuse moves some fact's confidence by more than {@link CHANGE} (a fact that
 * appears or disappears moves by its whole confidence), the number of faces or people, or the shot
 * size or angle label. Pairs of the still clips measure how much the models disagree with
 * themselves on the same picture (noise): reuse cannot do worse than that.
 */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PerceptionAnalyzer } from '../src/analysis/perception.js';
import type { AnalyzerOutput, Fact } from '../src/analysis/types.js';
import { KEYFRAME_REUSE, keyframeDiff, keyframeThumb } from '../src/pipeline/keyframe-reuse.js';
import { probe, sampleFrames } from '../src/media/index.js';
import type { Frame } from '../src/media/types.js';
import { evalDir, requireEvalDir } from './catalog.js';
import { pool, run, tempDir } from './clips.js';
import { halfOf, type Half } from './split.js';

/** A fact moving by more than this (confidence, 0–1) counts as a change. */
export const CHANGE = 0.2;
/** Times of the later keyframes paired with the one at 0.5 s. */
const LATER = [1, 2, 4, 8];
const GRID = [0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06];

export type ClipKind = 'still' | 'pan-slow' | 'pan' | 'zoom-slow' | 'fade' | 'subject' | 'video';

const W = 640;
const H = 360;
const FPS = 25;
const SECONDS = 9;
const ENC = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-an'];

function cover(w: number, h: number): string {
  return `scale=${w}:${h}:force_original_aspect_ratio=increase,crop=${w}:${h},setsar=1,format=rgb24,loop=loop=-1:size=1:start=0,setpts=N/${FPS}/TB`;
}

/** A 9 s 640×360 clip of `photo` with the given movement (`subject`: a second photo crossing it). */
export async function makeReuseClip(photo: string, out: string, kind: Exclude<ClipKind, 'video'>, subject?: string): Promise<string> {
  const n = SECONDS * FPS;
  let inputs = ['-i', photo];
  let graph: string;
  if (kind === 'still') graph = `[0:v]${cover(W, H)},format=yuv420p,noise=alls=8:allf=t[v]`;
  else if (kind === 'pan-slow' || kind === 'pan') {
    const v = (kind === 'pan' ? 0.04 : 0.01) * W; // px/s: 1% or 4% of the width per second
    graph = `[0:v]${cover(Math.round(W * 1.5), Math.round(H * 1.5))},crop=${W}:${H}:x='${W * 0.25}+${v}*t':y='${H * 0.25}':exact=1[v]`;
  } else if (kind === 'zoom-slow') {
    graph = `[0:v]${cover(W * 2, H * 2)},zoompan=z='pow(1.02,on/${FPS})':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=1:s=${W}x${H}:fps=${FPS}[v]`;
  } else if (kind === 'fade') {
    graph = `[0:v]${cover(W, H)},format=yuv420p,eq=brightness='-0.012*t':eval=frame[v]`;
  } else {
    if (!subject) throw new Error('a subject clip needs a subject photo');
    inputs = ['-i', photo, '-i', subject];
    const sw = Math.round(W * 0.3);
    const sh = Math.round(sw * 0.75);
    graph = `[0:v]${cover(W, H)}[bg];[1:v]scale=${sw}:${sh}:force_original_aspect_ratio=increase,crop=${sw}:${sh},setsar=1,format=rgb24[fg];[bg][fg]overlay=x='-${sw}+${(W + sw) / SECONDS}*t':y='${Math.round((H - sh) / 2)}':eval=frame[v]`;
  }
  await run(['-y', ...inputs, '-filter_complex', graph, '-map', '[v]', '-frames:v', String(n), '-r', String(FPS), ...ENC, out]);
  return out;
}

/** The frames nearest to 0.5 s and to each of LATER, sampled as ingest samples them. */
async function keyframesOf(file: string, duration: number): Promise<{ anchor: Frame; later: Frame[] }> {
  const want = [0.5, ...LATER.filter((t) => t < duration - 0.25)];
  const got = new Map<number, Frame>();
  for await (const f of sampleFrames(file, { fps: 4, maxSide: 512, fastDecode: true })) {
    for (const t of want) if (!got.has(t) && f.t >= t - 1e-6) got.set(t, f);
    if (got.size === want.length) break;
  }
  const anchor = got.get(0.5);
  if (!anchor) throw new Error(`${file}: no frame at 0.5 s`);
  return { anchor, later: want.slice(1).map((t) => got.get(t)).filter((f): f is Frame => !!f) };
}

interface ImagenetLike {
  analyzeSegment(frames: Frame[], ctx: { start: number; end: number }): Promise<AnalyzerOutput>;
}

function confidences(facts: Fact[], kinds: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const f of facts) if (kinds.includes(f.kind)) m.set(`${f.kind}:${f.label}`, Math.max(m.get(`${f.kind}:${f.label}`) ?? 0, f.confidence));
  return m;
}

/** Largest confidence move between two sets of facts (a missing fact has confidence 0). */
function largestMove(a: Map<string, number>, b: Map<string, number>): number {
  let d = 0;
  for (const k of new Set([...a.keys(), ...b.keys()])) d = Math.max(d, Math.abs((a.get(k) ?? 0) - (b.get(k) ?? 0)));
  return d;
}

const countOf = (facts: Fact[], kind: string) => facts.filter((f) => f.kind === kind).reduce((s, f) => s + (f.count ?? 1), 0);
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

export interface PairResult {
  source: string;
  kind: ClipKind;
  t: number;
  diff: number;
  /** Largest confidence move of an object / face / people fact (perception). */
  objectMove: number;
  countsChange: boolean;
  tagChange: boolean;
  /** Largest probability move of an ImageNet class (null: classifier not installed). */
  imagenetMove: number | null;
  changes: boolean;
}

export async function measure(half: Half): Promise<{ half: Half; pairs: PairResult[]; imagenet: boolean }> {
  const dir = requireEvalDir();
  const tmp = tempDir('vidembed-reuse-');
  const perception = new PerceptionAnalyzer({ frameMaxSide: 512 });
  await perception.load();
  let imagenet: ImagenetLike | null = null;
  try {
    const { openImagenetAnalyzer } = await import('../src/analysis/imagenet.js');
    imagenet = await openImagenetAnalyzer();
  } catch {
    imagenet = null;
  }
  try {
    const photos = readdirSync(join(evalDir(), 'photos')).filter((f) => f.endsWith('.jpg') && halfOf(f) === half).sort();
    const sources: { name: string; kind: ClipKind; file: string; duration: number }[] = [];
    for (const f of readdirSync(join(dir, 'videos')).filter((f) => halfOf(f) === half).sort()) {
      const file = join(dir, 'videos', f);
      sources.push({ name: f, kind: 'video', file, duration: (await probe(file)).durationSec });
    }
    const kinds: Exclude<ClipKind, 'video'>[] = ['still', 'pan-slow', 'pan', 'zoom-slow', 'fade', 'subject'];
    const jobs = photos.flatMap((p, i) => kinds.map((k) => ({ p, k, subject: photos[(i + 7) % photos.length] })));
    const made = await pool(jobs, 2, async ({ p, k, subject }) => {
      const out = join(tmp.dir, `${k}-${basename(p, '.jpg')}.mp4`);
      await makeReuseClip(join(dir, 'photos', p), out, k, join(dir, 'photos', subject));
      return { name: p, kind: k as ClipKind, file: out, duration: SECONDS };
    });
    sources.push(...made);

    const pairs: PairResult[] = [];
    const ctx = { start: 0, end: 1 };
    for (const s of sources) {
      const { anchor, later } = await keyframesOf(s.file, s.duration);
      const a = await perception.analyzeSegment([anchor], ctx);
      const aClasses = imagenet ? confidences((await imagenet.analyzeSegment([anchor], ctx)).facts, ['thing']) : null;
      for (const b of later) {
        const fresh = await perception.analyzeSegment([b], ctx);
        const reused = await perception.analyzeSegment([b], { ...ctx, reuse: { from: 0, analysis: { perception: a } } });
        if (reused.details?.reused_from !== 0) throw new Error('perception did not reuse the keyframe');
        const objectMove = largestMove(confidences(fresh.facts, ['object', 'face']), confidences(reused.facts, ['object', 'face']));
        const countsChange = countOf(fresh.facts, 'face') !== countOf(reused.facts, 'face') || countOf(fresh.facts, 'people') !== countOf(reused.facts, 'people');
        const tagChange = (['shot_size', 'shooting_angle'] as const).some((k) => fresh.tags?.[k]?.label !== reused.tags?.[k]?.label);
        const imagenetMove = imagenet && aClasses ? largestMove(aClasses, confidences((await imagenet.analyzeSegment([b], ctx)).facts, ['thing'])) : null;
        const changes = objectMove > CHANGE || countsChange || tagChange || (imagenetMove ?? 0) > CHANGE;
        pairs.push({ source: s.name, kind: s.kind, t: b.t, diff: r4(keyframeDiff(keyframeThumb(anchor), keyframeThumb(b))), objectMove: r4(objectMove), countsChange, tagChange, imagenetMove: imagenetMove === null ? null : r4(imagenetMove), changes });
      }
    }
    return { half, pairs, imagenet: !!imagenet };
  } finally {
    await perception.dispose();
    tmp.cleanup();
  }
}

/** Per threshold: how many pairs would reuse, and how many of those reuse would change. */
export function summarise(pairs: PairResult[], grid = GRID) {
  const still = pairs.filter((p) => p.kind === 'still');
  return {
    noise: { still_pairs: still.length, max_diff: Math.max(...still.map((p) => p.diff)), changing: still.filter((p) => p.changes).length },
    thresholds: grid.map((t) => {
      const reused = pairs.filter((p) => p.diff <= t);
      const moving = reused.filter((p) => p.kind !== 'still');
      return {
        max_diff: t,
        reused: reused.length,
        of: pairs.length,
        changing: reused.filter((p) => p.changes).length,
        moving_reused: moving.length,
        moving_changing: moving.filter((p) => p.changes).length,
        by_kind: Object.fromEntries([...new Set(pairs.map((p) => p.kind))].map((k) => [k, `${reused.filter((p) => p.kind === k).length}/${pairs.filter((p) => p.kind === k).length}`])),
      };
    }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const half = (process.argv.slice(2).find((a) => !a.startsWith('-')) ?? 'tuning') as Half;
  const res = await measure(half);
  const summary = summarise(res.pairs);
  if (process.argv.includes('--json')) process.stdout.write(JSON.stringify({ ...res, summary, current: KEYFRAME_REUSE }, null, 2) + '\n');
  else {
    process.stdout.write(`${half} half: ${res.pairs.length} keyframe pairs, ImageNet ${res.imagenet ? 'on' : 'not installed'}, current maxDiff ${KEYFRAME_REUSE.maxDiff}\n`);
    process.stdout.write(`noise (still clips): ${JSON.stringify(summary.noise)}\n`);
    for (const t of summary.thresholds) process.stdout.write(JSON.stringify(t) + '\n');
    process.stdout.write('pairs that change, by difference:\n');
    for (const p of res.pairs.filter((p) => p.changes).sort((a, b) => a.diff - b.diff).slice(0, 25)) process.stdout.write(`  ${JSON.stringify(p)}\n`);
  }
}
