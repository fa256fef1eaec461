/**
 * Near-duplicate thresholds: `node dist/eval/duplicates.js [tuning|check] [--json]`.
 *
 * For one half of the held-out split (eval/split.ts) it makes, with the real ffmpeg, a re-encode,
 * a resize and a 1 s trim of every clip of that half (trims only where ≥ 2 s remain) and of 6 s
 * pans over that half's photos, and measures the signatures the engine stores
 * (src/duplicates/duplicates.ts, frames sampled as ingest samples them): how similar each variant is
 * to its source, and how similar distinct sources are to each other, for several frame-match
 * thresholds. The thresholds in DUPLICATE_THRESHOLDS were chosen from the tuning half's output;
 * the check half is only reported (and asserted on by test/e2e/duplicates.test.ts).
 */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DUPLICATE_THRESHOLDS, pairSimilarity, SignatureBuilder, nearestFrames, type VideoSignature } from '../src/duplicates/duplicates.js';
import { probe, sampleFrames } from '../src/media/index.js';
import { evalDir, requireEvalDir } from './catalog.js';
import { pool, run, tempDir } from './clips.js';
import { halfOf, type Half } from './split.js';

/** The kinds of copy `upload --skip-duplicates` and `duplicates` must recognise. */
export type VariantKind = 'reencode' | 'resize' | 'trim';

/**
 * A copy of `src` at `out` (mp4, H.264): `reencode` at a visibly lower quality (CRF 32), `resize`
 * to half the width (CRF 23), `trim` without its first second (decoded from the start: exact).
 */
export async function makeVariant(src: string, out: string, kind: VariantKind): Promise<string> {
  const enc = ['-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-an'];
  if (kind === 'reencode') await run(['-y', '-i', src, ...enc, '-crf', '32', out]);
  else if (kind === 'resize') await run(['-y', '-i', src, '-vf', 'scale=trunc(iw/4)*2:-2', ...enc, '-crf', '23', out]);
  else await run(['-y', '-i', src, '-ss', '1', ...enc, '-crf', '23', out]);
  return out;
}

/** A 6 s 320×180 pan across a photo (H.264): a clip long enough to trim, with moving pictures. */
export async function makePhotoPan(photo: string, out: string): Promise<string> {
  const fps = 25;
  const seconds = 6;
  const travel = 200;
  await run([
    '-y', '-i', photo,
    '-filter_complex', `[0:v]scale=${320 + travel}:180:force_original_aspect_ratio=increase,crop=${320 + travel}:180,setsar=1,loop=loop=-1:size=1:start=0,setpts=N/${fps}/TB,crop=320:180:x='${travel / seconds}*t':y=0,format=yuv420p[v]`,
    '-map', '[v]', '-t', String(seconds), '-r', String(fps),
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', out,
  ]);
  return out;
}

/** The signature ingest stores for a file: frames sampled at 4 fps, 512 px, skip_frame noref (as src/pipeline/pipeline.ts does). */
export async function signatureOf(file: string, maxSide = 512): Promise<VideoSignature> {
  const b = new SignatureBuilder();
  for await (const f of sampleFrames(file, { fps: 4, maxSide, fastDecode: true })) b.push(f);
  return b.finish();
}

interface Source {
  name: string;
  file: string;
  duration: number;
}

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function measure(half: Half, hammings = [6, 8, 10, 12, 14]) {
  const dir = requireEvalDir();
  const tmp = tempDir('vidembed-dups-');
  try {
    const videos: Source[] = [];
    for (const f of readdirSync(join(dir, 'videos')).filter((f) => halfOf(f) === half).sort()) {
      const file = join(dir, 'videos', f);
      videos.push({ name: f, file, duration: (await probe(file)).durationSec });
    }
    const photos = readdirSync(join(evalDir(), 'photos')).filter((f) => f.endsWith('.jpg') && halfOf(f) === half).sort();
    const pans = await pool(photos, 2, async (p) => {
      const out = join(tmp.dir, `pan-${basename(p, '.jpg')}.mp4`);
      return { name: `pan:${p}`, file: await makePhotoPan(join(dir, 'photos', p), out), duration: 6 };
    });
    const sources = [...videos, ...pans];
    const sigs = await pool(sources, 2, (s) => signatureOf(s.file));

    // Variants of every source.
    const variants: { source: number; kind: VariantKind; sig: VideoSignature }[] = [];
    await pool(
      sources.flatMap((s, i) => (['reencode', 'resize', 'trim'] as VariantKind[]).filter((k) => k !== 'trim' || s.duration >= 3).map((k) => ({ i, k }))),
      2,
      async ({ i, k }) => {
        const out = join(tmp.dir, `v${i}-${k}.mp4`);
        await makeVariant(sources[i].file, out, k);
        variants.push({ source: i, kind: k, sig: await signatureOf(out) });
      },
    );

    variants.sort((x, y) => x.source - y.source || x.kind.localeCompare(y.kind));
    const positives = variants.map((v) => {
      const src = sigs[v.source];
      const d = Array.from(nearestFrames(v.sig, src).distance).filter((x) => x <= 64);
      return {
        source: sources[v.source].name,
        kind: v.kind,
        frame_distance: { median: quantile(d, 0.5), p90: quantile(d, 0.9), max: Math.max(...d) },
        similarity: Object.fromEntries(hammings.map((h) => [h, r3(pairSimilarity(v.sig, src, h)?.similarity ?? NaN)])),
        coverage: Object.fromEntries(hammings.map((h) => [h, r3(pairSimilarity(v.sig, src, h)?.aInB ?? NaN)])),
      };
    });
    const negatives: { a: string; b: string; min_distance: number; similarity: Record<number, number>; coverage: Record<number, number> }[] = [];
    for (let i = 0; i < sources.length; i++) {
      for (let j = i + 1; j < sources.length; j++) {
        const d = Array.from(nearestFrames(sigs[i], sigs[j]).distance).filter((x) => x <= 64);
        negatives.push({
          a: sources[i].name,
          b: sources[j].name,
          min_distance: d.length ? Math.min(...d) : 65,
          similarity: Object.fromEntries(hammings.map((h) => [h, r3(pairSimilarity(sigs[i], sigs[j], h)?.similarity ?? 0)])),
          coverage: Object.fromEntries(hammings.map((h) => {
            const p = pairSimilarity(sigs[i], sigs[j], h);
            return [h, r3(Math.max(p?.aInB ?? 0, p?.bInA ?? 0))];
          })),
        });
      }
    }
    const summary = hammings.map((h) => ({
      max_hamming: h,
      lowest_variant_similarity: Math.min(...positives.map((p) => p.similarity[h])),
      lowest_variant_coverage: Math.min(...positives.map((p) => p.coverage[h])),
      highest_distinct_similarity: Math.max(...negatives.map((n) => n.similarity[h])),
      highest_distinct_coverage: Math.max(...negatives.map((n) => n.coverage[h])),
    }));
    return { half, sources: sources.length, variants: positives.length, distinct_pairs: negatives.length, thresholds: DUPLICATE_THRESHOLDS, summary, positives, negatives };
  } finally {
    tmp.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const half = (process.argv.slice(2).find((a) => !a.startsWith('-')) ?? 'tuning') as Half;
  const res = await measure(half);
  if (process.argv.includes('--json')) process.stdout.write(JSON.stringify(res, null, 2) + '\n');
  else {
    process.stdout.write(`${half} half: ${res.sources} sources, ${res.variants} variants, ${res.distinct_pairs} distinct pairs\n`);
    for (const s of res.summary) process.stdout.write(JSON.stringify(s) + '\n');
    process.stdout.write('variants:\n');
    for (const p of res.positives) process.stdout.write(`  ${p.kind.padEnd(8)} ${p.source}  frame d ${JSON.stringify(p.frame_distance)}  sim ${JSON.stringify(p.similarity)}\n`);
    process.stdout.write('closest distinct pairs:\n');
    for (const n of [...res.negatives].sort((a, b) => b.similarity[14] - a.similarity[14] || a.min_distance - b.min_distance).slice(0, 12)) {
      process.stdout.write(`  ${n.a} ~ ${n.b}: min d ${n.min_distance}, sim ${JSON.stringify(n.similarity)}, cov ${JSON.stringify(n.coverage)}\n`);
    }
  }
}
