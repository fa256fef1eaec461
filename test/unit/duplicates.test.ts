import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  alignSegments,
  candidateOf,
  candidateSimilarity,
  clusterDuplicates,
  countMatches,
  decodeSignature,
  DUPLICATE_THRESHOLDS,
  encodeSignature,
  pairSimilarity,
  prepareSignature,
  SignatureBuilder,
  SIGNATURE_FPS,
  storeSignature,
  type VideoSignature,
} from '../../src/duplicates/duplicates.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { migrate, schemaVersion } from '../../src/store/migrations.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';

/** A deterministic stream of 32-bit words (mulberry32: unlike a plain LCG, its low bits are random too). */
function words(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = x;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** A signature of `n` frames every 1/4 s with random (unrelated) pictures. */
function randomSignature(n: number, seed: number, t0 = 0): VideoSignature {
  const next = words(seed);
  const hashes = new Uint32Array(2 * n);
  for (let i = 0; i < 2 * n; i++) hashes[i] = next();
  return { times: Float32Array.from({ length: n }, (_, i) => t0 + i / SIGNATURE_FPS), hashes, flat: new Uint8Array(n) };
}

/** The same pictures with `bits` bits flipped in each hash (what a re-encode does to them). */
function perturbed(sig: VideoSignature, bits: number, seed: number): VideoSignature {
  const next = words(seed);
  const hashes = Uint32Array.from(sig.hashes);
  for (let i = 0; i < sig.times.length; i++) {
    for (let k = 0; k < bits; k++) {
      const b = next() % 64;
      if (b < 32) hashes[2 * i + 1] ^= 1 << b;
      else hashes[2 * i] ^= 1 << (b - 32);
    }
  }
  return { times: Float32Array.from(sig.times), hashes, flat: Uint8Array.from(sig.flat) };
}

/** The signature without its first `seconds` (times start at 0 again). */
function trimmed(sig: VideoSignature, seconds: number): VideoSignature {
  const k = Math.round(seconds * SIGNATURE_FPS);
  return { times: sig.times.slice(k).map((t) => t - seconds), hashes: sig.hashes.slice(2 * k), flat: sig.flat.slice(k) };
}

describe('video signatures', () => {
  it('hash a frame every quarter second (a frame a little early still counts) and survive the bytes round trip', () => {
    const b = new SignatureBuilder();
    const frame = (t: number, shade: number) => {
      const data = new Uint8Array(48 * 32 * 3);
      for (let i = 0; i < 48 * 32; i++) data.fill((i % 48) * 5 + shade, i * 3, i * 3 + 3);
      return { t, width: 48, height: 32, data };
    };
    const taken = [0, 0.04, 0.08, 0.24, 0.3, 0.5, 0.74, 1.0].map((t, i) => b.push(frame(t, i)) !== undefined);
    expect(taken).toEqual([true, false, false, true, false, true, true, true]);
    const sig = b.finish();
    expect(Array.from(sig.times)).toEqual([0, 0.24, 0.5, 0.74, 1].map((t) => Math.fround(t)));
    expect(Array.from(sig.flat)).toEqual([0, 0, 0, 0, 0]);
    const back = decodeSignature(encodeSignature(sig));
    expect(back).toEqual(sig);
    expect(() => decodeSignature(Buffer.alloc(14))).toThrow(/whole number of frames/);
  });

  it('similarity: 1 for a re-encode, (2n - k) / 2n for a trim of k of n frames, 0 for unrelated pictures; flat frames never match', () => {
    const a = randomSignature(40, 1);
    expect(pairSimilarity(a, perturbed(a, 4, 2))?.similarity).toBe(1);
    const t = pairSimilarity(a, trimmed(a, 1))!; // the trim's frames are all in a; a's are all but 4 in it
    expect(t.aInB).toBeCloseTo(36 / 40, 6);
    expect(t.bInA).toBe(1);
    expect(t.similarity).toBeCloseTo((36 + 36) / (40 + 36), 6);
    expect(pairSimilarity(a, randomSignature(40, 99))?.similarity).toBe(0);
    // Past the threshold a changed picture no longer matches.
    expect(pairSimilarity(a, perturbed(a, DUPLICATE_THRESHOLDS.maxHamming + 6, 3))?.similarity).toBeLessThan(0.2);
    // Black frames (all hash alike) are no evidence: a video of nothing but them cannot be compared.
    const black: VideoSignature = { times: Float32Array.of(0, 0.25), hashes: new Uint32Array(4), flat: Uint8Array.of(1, 1) };
    expect(pairSimilarity(black, black)).toBeUndefined();
  });

  it('counts matches, giving up (-1) as soon as the needed count is out of reach', () => {
    const a = prepareSignature(randomSignature(30, 5));
    const b = prepareSignature(randomSignature(30, 6));
    expect(countMatches(a, a, 0)).toBe(30);
    expect(countMatches(a, b, DUPLICATE_THRESHOLDS.maxHamming)).toBe(0);
    expect(countMatches(a, b, DUPLICATE_THRESHOLDS.maxHamming, 1)).toBe(-1);
  });

  it('groups near-duplicates with union-find: chains join, the group keeps its weakest link, unrelated videos stay out', () => {
    const a = randomSignature(200, 11); // long enough for the keyframe first look
    const b = perturbed(a, 4, 12);
    const c = trimmed(a, 1);
    const d = randomSignature(200, 13);
    const e = perturbed(d, 2, 14);
    const f = randomSignature(20, 15);
    const cands = [a, b, c, d, e, f].map((s) => candidateOf(s));
    const groups = clusterDuplicates(cands, DUPLICATE_THRESHOLDS.minSimilarity);
    expect(groups.map((g) => g.members)).toEqual([[3, 4], [0, 1, 2]]);
    expect(groups[0].similarity).toBe(1);
    expect(groups[1].similarity).toBeCloseTo((196 + 196) / 396, 6);
    // A chain: x ~ y and y ~ z, while x and z share too little to be linked directly.
    const x = randomSignature(40, 21);
    const tail = randomSignature(40, 22);
    const y: VideoSignature = { times: Float32Array.from({ length: 80 }, (_, i) => i / 4), hashes: new Uint32Array([...x.hashes, ...tail.hashes]), flat: new Uint8Array(80) };
    const z = { ...tail, times: tail.times };
    const chain = [x, y, z].map((s) => candidateOf(s));
    expect(candidateSimilarity(chain[0], chain[2], 0.01)).toBeUndefined();
    expect(clusterDuplicates(chain, 0.6).map((g) => g.members)).toEqual([[0, 1, 2]]);
  });

  it('aligns segments: the pictures of a segment are found where the trimmed copy holds them', () => {
    const a = randomSignature(32, 31); // 8 s
    const c = trimmed(a, 1); // 7 s, times shifted by one second
    const aligned = alignSegments(prepareSignature(a), [{ start: 0, end: 4 }, { start: 4, end: 8 }], prepareSignature(c), [{ start: 0, end: 4 }, { start: 4, end: 7 }]);
    expect(aligned[0]).toEqual({ start: 0, end: 4, similarity: 12 / 16 }); // its first second is gone
    expect(aligned[1]).toEqual({ start: 4, end: 7, similarity: 1 });
    const none = alignSegments(prepareSignature(a), [{ start: 0, end: 8 }], prepareSignature(randomSignature(32, 32)), []);
    expect(none).toEqual([undefined]);
  });
});

describe('a library processed before near-duplicate detection (schema 6)', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-dups-migrate-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('migrates (signature table, keyframe column) and says how many videos were not compared and how to fix it', async () => {
    const old = new Database(path.join(home, 'vidembed.db'));
    migrate(old, 6);
    expect(schemaVersion(old)).toBe(6);
    const now = new Date().toISOString();
    old.prepare(`INSERT INTO collections (id, owner, name, description, model, dim, created_at, seq) VALUES ('col_a', 'default', 'archive', '', 'fake-16', 16, ?, 1)`).run(now);
    for (const id of ['vid_1', 'vid_2']) {
      old
        .prepare(`INSERT INTO videos (id, collection_id, filename, path, size_bytes, status, created_at, updated_at) VALUES (?, 'col_a', ?, '/x', 1, 'processed', ?, ?)`)
        .run(id, `${id}.mp4`, now, now);
    }
    old.prepare(`INSERT INTO videos (id, collection_id, filename, path, size_bytes, status, created_at, updated_at) VALUES ('vid_3', 'col_a', 'c.mp4', '/x', 1, 'uploaded', ?, ?)`).run(now, now);
    old.close();

    const fake = new FakeEmbedder();
    const engine = new LocalEngine({ home, embedderFor: () => fake });
    try {
      const db = engine.store.db;
      expect(schemaVersion(db)).toBeGreaterThanOrEqual(7);
      expect((db.prepare(`SELECT name FROM pragma_table_info('segments') WHERE name = 'phash'`).all() as unknown[]).length).toBe(1);
      const res = await engine.findDuplicates('archive');
      expect(res).toMatchObject({ collection_id: 'col_a', groups: [], compared: 0, missing_signature: 2, min_similarity: DUPLICATE_THRESHOLDS.minSimilarity });
      expect(res.warnings?.join('\n')).toContain('vidembed collection reindex archive');
      expect(res.warnings?.join('\n')).toContain('1 video is still processing');

      // Once a video has a signature it is compared; deleting the video deletes its signature.
      await storeSignature(engine.catalog, 'vid_1', randomSignature(8, 1));
      expect((await engine.findDuplicates('archive')).compared).toBe(1);
      await engine.deleteVideo('vid_1');
      expect(db.prepare(`SELECT COUNT(*) AS n FROM video_signatures`).get()).toEqual({ n: 0 });

      for (const bad of [0, -0.1, 1.5, Number.NaN]) await expect(engine.findDuplicates('archive', { min_similarity: bad })).rejects.toMatchObject({ status: 422 });
      await expect(engine.findDuplicates('nope')).rejects.toMatchObject({ status: 404 });
      // Another owner's collection is not there for them.
      await expect(engine.as({ owner: 'bob', admin: false }).findDuplicates('col_a')).rejects.toMatchObject({ status: 404 });
    } finally {
      await engine.close();
    }
  });
});
