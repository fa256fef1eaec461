/**
 * Near-duplicate videos: a visual signature per video (the pHash of a frame every quarter second,
 * src/media/phash.ts), how much of one video's pictures another holds, and groups of
 * near-identical videos (union-find). docs/engine.md explains the numbers.
 */
import { DUPLICATE_THRESHOLDS } from '../api/defaults.js';
import { ffmpegFastDecode } from '../env.js';
import type { DuplicateGroup, DuplicatesResponse } from '../api/types.js';
import { sampleFrames } from '../media/frames.js';
import { popcount32, round3 } from '../media/kernels/index.js';
import { hamming, phashFrame, type PHash } from '../media/phash.js';
import type { Frame } from '../media/types.js';
import type { Catalog, CatalogTx } from '../store/catalog/types.js';
import type { VideoRow } from '../store/videos.js';

/** Frames per second the signature hashes (the pixel taggers' rate: the pipeline decodes these anyway). */
export const SIGNATURE_FPS = 4;
/** Layout version of a stored signature; another version counts as missing (`vidembed collection reindex`). */
export const SIGNATURE_VERSION = 1;

/** The thresholds (stated with the API's defaults). */
export { DUPLICATE_THRESHOLDS };

/** One video's signature: frame times and hashes in time order. */
export interface VideoSignature {
  /** Seconds. */
  times: Float32Array;
  /** Two words per frame: hi, lo. */
  hashes: Uint32Array;
  /** 1 where the frame is flat (nothing to compare). */
  flat: Uint8Array;
}

/** Collects the signature of a stream of frames (push in time order; frames closer than ~1/SIGNATURE_FPS are skipped). */
export class SignatureBuilder {
  private readonly times: number[] = [];
  private readonly hashes: number[] = [];
  private readonly flat: number[] = [];
  private last = Number.NEGATIVE_INFINITY;
  /** Hash of the last frame pushed (the pipeline reuses it for segment keyframes). */
  private readonly byFrame = new WeakMap<Frame, PHash>();

  /** Hashes the frame if it is due; returns its hash when it was taken. */
  push(frame: Frame): PHash | undefined {
    // 0.9: a frame decoded a little early (skip_frame noref) still counts as the next tick.
    if (frame.t < this.last + 0.9 / SIGNATURE_FPS) return undefined;
    this.last = frame.t;
    const h = phashFrame(frame);
    this.times.push(frame.t);
    this.hashes.push(h.hi, h.lo);
    this.flat.push(h.flat ? 1 : 0);
    this.byFrame.set(frame, h);
    return h;
  }

  /** The frame's hash: the one computed when it was pushed, else computed now. */
  hashOf(frame: Frame): PHash {
    return this.byFrame.get(frame) ?? phashFrame(frame);
  }

  get length(): number {
    return this.times.length;
  }

  finish(): VideoSignature {
    return { times: Float32Array.from(this.times), hashes: Uint32Array.from(this.hashes), flat: Uint8Array.from(this.flat) };
  }
}

/** Bytes of a stored signature: per frame a float32 time, two uint32 words, one flag byte (little-endian). */
export function encodeSignature(sig: VideoSignature): Buffer {
  const n = sig.times.length;
  const buf = Buffer.alloc(n * 13);
  for (let i = 0; i < n; i++) {
    buf.writeFloatLE(sig.times[i], i * 4);
    buf.writeUInt32LE(sig.hashes[2 * i], n * 4 + i * 8);
    buf.writeUInt32LE(sig.hashes[2 * i + 1], n * 4 + i * 8 + 4);
    buf[n * 12 + i] = sig.flat[i];
  }
  return buf;
}

export function decodeSignature(buf: Buffer): VideoSignature {
  if (buf.length % 13 !== 0) throw new Error(`signature of ${buf.length} bytes is not a whole number of frames`);
  const n = buf.length / 13;
  const times = new Float32Array(n);
  const hashes = new Uint32Array(2 * n);
  const flat = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    times[i] = buf.readFloatLE(i * 4);
    hashes[2 * i] = buf.readUInt32LE(n * 4 + i * 8);
    hashes[2 * i + 1] = buf.readUInt32LE(n * 4 + i * 8 + 4);
    flat[i] = buf[n * 12 + i];
  }
  return { times, hashes, flat };
}

/** Frames of a signature that have pictures to compare. */
export function informativeFrames(sig: VideoSignature): number {
  let n = 0;
  for (const f of sig.flat) if (!f) n++;
  return n;
}

/** For every frame of `a`: the index of the closest frame of `b` and its distance (-1 / 65 for flat frames). */
export function nearestFrames(a: VideoSignature, b: VideoSignature): { index: Int32Array; distance: Uint8Array } {
  const n = a.times.length;
  const index = new Int32Array(n).fill(-1);
  const distance = new Uint8Array(n).fill(65);
  const bh = b.hashes;
  for (let i = 0; i < n; i++) {
    if (a.flat[i]) continue;
    const hi = a.hashes[2 * i];
    const lo = a.hashes[2 * i + 1];
    let best = 65;
    let at = -1;
    for (let j = 0; j < b.times.length; j++) {
      if (b.flat[j]) continue;
      const d = hamming({ hi, lo }, { hi: bh[2 * j], lo: bh[2 * j + 1] });
      if (d < best) {
        best = d;
        at = j;
        if (d === 0) break;
      }
    }
    index[i] = at;
    distance[i] = best;
  }
  return { index, distance };
}

/** How many of `a`'s informative frames have a match in `b` (Hamming ≤ maxHamming), and of how many. */
export function coverage(a: VideoSignature, b: VideoSignature, maxHamming = DUPLICATE_THRESHOLDS.maxHamming): { matched: number; total: number } {
  const { distance } = nearestFrames(a, b);
  let matched = 0;
  let total = 0;
  for (let i = 0; i < distance.length; i++) {
    if (a.flat[i]) continue;
    total++;
    if (distance[i] <= maxHamming) matched++;
  }
  return { matched, total };
}

export interface PairSimilarity {
  /** (matched frames of A + matched frames of B) / (informative frames of A + of B): the share of both videos' pictures that the other holds. */
  similarity: number;
  /** Share of A's pictures found in B, and of B's in A. */
  aInB: number;
  bInA: number;
}

/**
 * Similarity of two videos in [0, 1]: the share of the two videos' informative frames (4 per
 * second) whose picture has a match in the other video. 1 for a re-encode or a resize; a trim
 * loses only the trimmed frames ((2n − k) / 2n for k of n frames cut). Undefined when either
 * video has no informative frame.
 */
export function pairSimilarity(a: VideoSignature, b: VideoSignature, maxHamming = DUPLICATE_THRESHOLDS.maxHamming): PairSimilarity | undefined {
  const ab = coverage(a, b, maxHamming);
  const ba = coverage(b, a, maxHamming);
  if (ab.total === 0 || ba.total === 0) return undefined;
  return { similarity: (ab.matched + ba.matched) / (ab.total + ba.total), aInB: ab.matched / ab.total, bInA: ba.matched / ba.total };
}

/** Disjoint sets over 0..n-1 (path halving, union by size). */
export class UnionFind {
  private readonly parent: Int32Array;
  private readonly size: Int32Array;
  constructor(n: number) {
    this.parent = Int32Array.from({ length: n }, (_, i) => i);
    this.size = new Int32Array(n).fill(1);
  }
  find(x: number): number {
    while (this.parent[x] !== x) {
      this.parent[x] = this.parent[this.parent[x]];
      x = this.parent[x];
    }
    return x;
  }
  union(a: number, b: number): boolean {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra === rb) return false;
    if (this.size[ra] < this.size[rb]) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    this.size[ra] += this.size[rb];
    return true;
  }
}

// ---- comparing many videos ----------------------------------------------------------------

/** A video's informative frames (flat ones left out), ready to compare. */
export interface PreparedSignature {
  hi: Uint32Array;
  lo: Uint32Array;
  /** Seconds, per informative frame. */
  t: Float32Array;
}

export function prepareSignature(sig: VideoSignature): PreparedSignature {
  const n = informativeFrames(sig);
  const out = { hi: new Uint32Array(n), lo: new Uint32Array(n), t: new Float32Array(n) };
  for (let i = 0, k = 0; i < sig.times.length; i++) {
    if (sig.flat[i]) continue;
    out.hi[k] = sig.hashes[2 * i];
    out.lo[k] = sig.hashes[2 * i + 1];
    out.t[k++] = sig.times[i];
  }
  return out;
}

/** Whether the hash (hi, lo) has a match in `b`. */
function hasMatch(hi: number, lo: number, b: PreparedSignature, maxHamming: number): boolean {
  const bh = b.hi;
  const bl = b.lo;
  for (let j = 0; j < bh.length; j++) if (popcount32((hi ^ bh[j]) >>> 0) + popcount32((lo ^ bl[j]) >>> 0) <= maxHamming) return true;
  return false;
}

/**
 * How many of `a`'s frames have a match in `b`; -1 as soon as it is clear the count cannot reach
 * `need` (a pair that is not a near-duplicate costs only part of the comparison).
 */
export function countMatches(a: PreparedSignature, b: PreparedSignature, maxHamming: number, need = 0): number {
  let matched = 0;
  const n = a.hi.length;
  for (let i = 0; i < n; i++) {
    if (hasMatch(a.hi[i], a.lo[i], b, maxHamming)) matched++;
    else if (matched + (n - i - 1) < need) return -1;
  }
  return matched;
}

/** A video as the comparison sees it. */
export interface DuplicateCandidate {
  /** Informative frames of its signature. */
  frames: PreparedSignature;
  /** Hashes that stand for the video in the quick first look: its segments' keyframes, else every 4th frame. */
  keys: PreparedSignature;
}

/** Keys for the first look: the segment keyframe pHashes (hex) when there are some, else every 4th informative frame. */
export function candidateOf(sig: VideoSignature, keyframeHashes: (string | null)[] = []): DuplicateCandidate {
  const frames = prepareSignature(sig);
  const hex = keyframeHashes.filter((h): h is string => typeof h === 'string' && /^[0-9a-f]{16}$/i.test(h));
  let keys: PreparedSignature;
  if (hex.length) {
    keys = {
      hi: Uint32Array.from(hex, (h) => parseInt(h.slice(0, 8), 16) >>> 0),
      lo: Uint32Array.from(hex, (h) => parseInt(h.slice(8), 16) >>> 0),
      t: new Float32Array(hex.length),
    };
  } else {
    const pick = (arr: Uint32Array | Float32Array) => arr.filter((_, i) => i % 4 === 0);
    keys = { hi: pick(frames.hi) as Uint32Array, lo: pick(frames.lo) as Uint32Array, t: pick(frames.t) as Float32Array };
  }
  return { frames, keys };
}

/** Below this many frame comparisons a pair is compared in full at once (the first look would save nothing). */
const FIRST_LOOK_MIN_WORK = 8192;
/** The first look needs this many keys on each side to be trusted to reject a pair. */
const FIRST_LOOK_MIN_KEYS = 4;

/**
 * Similarity of two candidates (see pairSimilarity), or undefined when it is below `minSimilarity`
 * (or either has no informative frame). Long pairs first take a quick look: when no keyframe of
 * either video has a match anywhere in the other, they share (almost) no picture and are skipped.
 */
export function candidateSimilarity(a: DuplicateCandidate, b: DuplicateCandidate, minSimilarity: number, maxHamming = DUPLICATE_THRESHOLDS.maxHamming): PairSimilarity | undefined {
  const na = a.frames.hi.length;
  const nb = b.frames.hi.length;
  if (na === 0 || nb === 0) return undefined;
  if (na * nb >= FIRST_LOOK_MIN_WORK && a.keys.hi.length >= FIRST_LOOK_MIN_KEYS && b.keys.hi.length >= FIRST_LOOK_MIN_KEYS) {
    if (countMatches(a.keys, b.frames, maxHamming, 1) < 1 && countMatches(b.keys, a.frames, maxHamming, 1) < 1) return undefined;
  }
  // similarity = (ma + mb) / (na + nb) ≥ s  ⇔  ma ≥ s (na + nb) − nb
  const total = na + nb;
  const need = minSimilarity * total - 1e-9;
  const ma = countMatches(a.frames, b.frames, maxHamming, Math.ceil(need - nb));
  if (ma < 0) return undefined;
  const mb = countMatches(b.frames, a.frames, maxHamming, Math.ceil(need - ma));
  if (mb < 0) return undefined;
  const similarity = (ma + mb) / total;
  if (similarity < minSimilarity) return undefined;
  return { similarity, aInB: ma / na, bInA: mb / nb };
}

export interface DuplicateCluster {
  /** Indexes of the candidates, in input order. */
  members: number[];
  /** The lowest similarity among the links that hold the group together (its weakest link). */
  similarity: number;
}

/**
 * Groups of near-duplicates among `candidates`: every pair at `minSimilarity` or above is a link,
 * and linked videos share a group (union-find; links taken strongest first, so the group's
 * similarity is that of the weakest link of its maximum spanning tree). Strongest groups first.
 */
export function clusterDuplicates(candidates: DuplicateCandidate[], minSimilarity: number, maxHamming = DUPLICATE_THRESHOLDS.maxHamming): DuplicateCluster[] {
  const links: { a: number; b: number; similarity: number }[] = [];
  for (let a = 0; a < candidates.length; a++) {
    for (let b = a + 1; b < candidates.length; b++) {
      const s = candidateSimilarity(candidates[a], candidates[b], minSimilarity, maxHamming);
      if (s) links.push({ a, b, similarity: s.similarity });
    }
  }
  links.sort((x, y) => y.similarity - x.similarity || x.a - y.a || x.b - y.b);
  const uf = new UnionFind(candidates.length);
  const weakest = new Map<number, number>();
  for (const l of links) {
    const ra = uf.find(l.a);
    const rb = uf.find(l.b);
    if (ra === rb) continue;
    const w = Math.min(l.similarity, weakest.get(ra) ?? 1, weakest.get(rb) ?? 1);
    uf.union(ra, rb);
    weakest.set(uf.find(ra), w);
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < candidates.length; i++) {
    const r = uf.find(i);
    groups.set(r, [...(groups.get(r) ?? []), i]);
  }
  return [...groups.entries()]
    .filter(([, m]) => m.length > 1)
    .map(([r, members]) => ({ members, similarity: weakest.get(r)! }))
    .sort((x, y) => y.similarity - x.similarity || y.members.length - x.members.length || x.members[0] - y.members[0]);
}

/** For each segment of `ref`: where its pictures are in `other` and what share of them (frames matched / informative frames of the segment). */
export function alignSegments(
  ref: PreparedSignature,
  refSegments: { start: number; end: number }[],
  other: PreparedSignature,
  otherSegments: { start: number; end: number }[],
  maxHamming = DUPLICATE_THRESHOLDS.maxHamming,
): ({ start: number; end: number; similarity: number } | undefined)[] {
  return refSegments.map((seg) => {
    const at: number[] = [];
    let total = 0;
    for (let i = 0; i < ref.t.length; i++) {
      if (ref.t[i] < seg.start || ref.t[i] >= seg.end) continue;
      total++;
      let best = maxHamming + 1;
      let where = -1;
      for (let j = 0; j < other.t.length; j++) {
        const d = popcount32((ref.hi[i] ^ other.hi[j]) >>> 0) + popcount32((ref.lo[i] ^ other.lo[j]) >>> 0);
        if (d < best) {
          best = d;
          where = j;
        }
      }
      if (where >= 0) at.push(other.t[where]);
    }
    if (total === 0 || at.length === 0) return undefined;
    const sorted = [...at].sort((x, y) => x - y);
    const median = sorted[sorted.length >> 1];
    const hit = otherSegments.find((s) => median >= s.start && median < s.end) ?? otherSegments.find((s) => median >= s.start && median <= s.end);
    const span = hit ?? { start: round3(sorted[0]), end: round3(sorted[sorted.length - 1] + 1 / SIGNATURE_FPS) };
    return { start: span.start, end: span.end, similarity: at.length / total };
  });
}

// ---- the engine's side: signatures in the store ---------------------------------------------

/** Side of the frames a quick signature decodes (the hash reads a 32×32 square; 128 px gives the same bits as ingest's 512 px). */
const QUICK_SIDE = 128;

/**
 * The signature of a file from a quick decode of its own (4 fps, 128 px), for `upload
 * --skip-duplicates` before anything is stored; ingest later stores the one it computes from the
 * frames it decodes anyway.
 */
export async function sampleSignature(file: string, signal?: AbortSignal): Promise<VideoSignature> {
  const b = new SignatureBuilder();
  for await (const f of sampleFrames(file, { fps: SIGNATURE_FPS, maxSide: QUICK_SIDE, signal, fastDecode: ffmpegFastDecode() })) b.push(f);
  return b.finish();
}

/** Stores a video's signature (replacing any earlier one). */
export async function storeSignature(store: Pick<CatalogTx, 'signatures'>, videoId: string, sig: VideoSignature): Promise<void> {
  await store.signatures.put(videoId, SIGNATURE_VERSION, sig.times.length, encodeSignature(sig));
}

interface StoredCandidate extends DuplicateCandidate {
  video: VideoRow;
  segments: { start: number; end: number }[];
}

/** Every video of a collection with a current signature, oldest first, ready to compare. */
async function storedCandidates(store: Pick<Catalog, 'signatures' | 'videos'>, collectionId: string): Promise<StoredCandidate[]> {
  const keys = new Map<string, { start: number; end: number; phash: string | null }[]>();
  for (const k of await store.signatures.segmentKeys(collectionId)) keys.set(k.video_id, [...(keys.get(k.video_id) ?? []), k]);
  const out: StoredCandidate[] = [];
  for (const row of await store.signatures.forCollection(collectionId)) {
    if (row.version !== SIGNATURE_VERSION) continue;
    const video = await store.videos.byId(row.video_id);
    if (!video || video.status === 'failed') continue;
    let sig: VideoSignature;
    try {
      sig = decodeSignature(row.data);
    } catch {
      continue; // unreadable: as if missing (reindex writes a new one)
    }
    const segs = keys.get(row.video_id) ?? [];
    out.push({ ...candidateOf(sig, segs.map((s) => s.phash)), video, segments: segs.map(({ start, end }) => ({ start, end })) });
  }
  return out;
}

/**
 * The video of the collection that holds most of `sig`'s pictures, if it holds at least
 * `minCoverage` of them (`upload --skip-duplicates`); ties go to the earliest added.
 */
export async function nearDuplicateOf(
  store: Pick<Catalog, 'signatures' | 'videos'>,
  collectionId: string,
  sig: VideoSignature,
  minCoverage = DUPLICATE_THRESHOLDS.minCoverage,
): Promise<{ video: VideoRow; coverage: number; similarity: number } | undefined> {
  const mine = candidateOf(sig);
  const n = mine.frames.hi.length;
  if (n === 0) return undefined; // nothing but flat pictures: nothing to recognise
  let best: { video: VideoRow; coverage: number; similarity: number } | undefined;
  for (const c of await storedCandidates(store, collectionId)) {
    const need = Math.ceil(Math.max(minCoverage, best?.coverage ?? 0) * n - 1e-9);
    const matched = countMatches(mine.frames, c.frames, DUPLICATE_THRESHOLDS.maxHamming, need);
    if (matched < 0 || matched / n < minCoverage || (best && matched / n <= best.coverage)) continue;
    const back = countMatches(c.frames, mine.frames, DUPLICATE_THRESHOLDS.maxHamming);
    const total = n + c.frames.hi.length;
    best = { video: c.video, coverage: matched / n, similarity: (matched + Math.max(0, back)) / total };
  }
  return best;
}

/** Groups of near-identical videos of a collection (`vidembed duplicates`, `GET /collections/{id}/duplicates`). */
export async function findDuplicateGroups(
  store: Pick<Catalog, 'signatures' | 'videos'>,
  collection: { id: string; name: string },
  opts: { minSimilarity: number; segments: boolean },
): Promise<DuplicatesResponse> {
  const candidates = await storedCandidates(store, collection.id);
  const withSignature = new Set(candidates.map((c) => c.video.id));
  const counts = { missing: 0, waiting: 0 };
  for (const v of await store.videos.listByCollection(collection.id)) {
    if (withSignature.has(v.id)) continue;
    if (v.status === 'processed') counts.missing++;
    else if (v.status === 'uploaded' || v.status === 'processing') counts.waiting++;
  }
  const blank = candidates.filter((c) => c.frames.hi.length === 0).length;
  const groups: DuplicateGroup[] = clusterDuplicates(candidates, opts.minSimilarity).map((cluster) => {
    const members = cluster.members.map((i) => candidates[i]);
    const first = members[0];
    const group: DuplicateGroup = {
      similarity: round3(cluster.similarity),
      videos: members.map((m, k) => {
        const s = k === 0 ? undefined : candidateSimilarity(first, m, 0);
        return {
          video_id: m.video.id,
          filename: m.video.filename,
          ...(m.video.duration !== null ? { duration: m.video.duration } : {}),
          ...(k === 0 ? {} : { similarity: round3(s?.similarity ?? 0) }),
        };
      }),
    };
    if (opts.segments && first.segments.length) {
      const aligned = members.slice(1).map((m) => alignSegments(first.frames, first.segments, m.frames, m.segments));
      group.segments = first.segments.map((seg, i) => ({
        start: seg.start,
        end: seg.end,
        matches: members.slice(1).flatMap((m, k) => {
          const a = aligned[k][i];
          return a ? [{ video_id: m.video.id, start: a.start, end: a.end, similarity: round3(a.similarity) }] : [];
        }),
      }));
    }
    return group;
  });
  const warnings: string[] = [];
  if (counts.missing) {
    warnings.push(
      `${counts.missing} processed video${counts.missing === 1 ? ' has' : 's have'} no visual signature (processed by an earlier release) and ${counts.missing === 1 ? 'was' : 'were'} not compared: run \`vidembed collection reindex ${collection.name}\``,
    );
  }
  if (counts.waiting) warnings.push(`${counts.waiting} video${counts.waiting === 1 ? ' is' : 's are'} still processing and ${counts.waiting === 1 ? 'was' : 'were'} not compared`);
  if (blank) warnings.push(`${blank} video${blank === 1 ? ' shows' : 's show'} only blank pictures (black, a flat colour): nothing to compare`);
  return {
    collection_id: collection.id,
    min_similarity: opts.minSimilarity,
    groups,
    compared: candidates.length - blank,
    missing_signature: counts.missing,
    ...(warnings.length ? { warnings } : {}),
  };
}
