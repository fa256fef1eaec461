import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError, ValidationError } from '../../src/api/errors.js';
import { encoderThreads } from '../../src/config.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import type { TextEmbedding } from '../../src/embedders/types.js';
import { CachedTextEncoder, normalizeQueryText, type QueryTextEncoder } from '../../src/embedders/text-encoder.js';
import { errorFromWire, errorToWire } from '../../src/api/errors.js';
import { TextEncoderPool } from '../../src/embedders/text-encoder-pool.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { isCI } from '../helpers/clips.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const FAKES = pathToFileURL(path.join(here, '../helpers/text-encoder-fakes.mjs')).href;
const BUILT_WORKER = path.join(here, '../../dist/src/embedders/text-encoder-worker.js');

/** Counts what reaches "the model"; a text's vector is [length, first char code]. */
class CountingEncoder implements QueryTextEncoder {
  readonly calls: string[] = [];
  closed = false;
  fail = false;
  constructor(private readonly dim = 2) {}
  async embedText(embedderId: string, text: string): Promise<TextEmbedding> {
    this.calls.push(`${embedderId}:${text}`);
    await new Promise((r) => setTimeout(r, 1));
    if (this.fail) throw new ModelError('model down');
    const vector = new Float32Array(this.dim);
    vector.set([text.length, text.charCodeAt(0)]);
    return { vector, truncated: text.startsWith('long') };
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

describe('normalizeQueryText', () => {
  it('trims and collapses whitespace, keeps case', () => {
    expect(normalizeQueryText('  a \t dog\n\non  the grass  ')).toBe('a dog on the grass');
    expect(normalizeQueryText('A Dog')).toBe('A Dog');
  });
});

describe('CachedTextEncoder', () => {
  it('a hit skips the model; the least recently used entry is the one evicted', async () => {
    const inner = new CountingEncoder();
    const cache = new CachedTextEncoder(inner, 3);
    for (const t of ['a', 'b', 'c']) await cache.embedText('m', t);
    expect(inner.calls).toEqual(['m:a', 'm:b', 'm:c']);
    // `a` is used again: now `b` is the least recently used.
    expect(Array.from((await cache.embedText('m', 'a')).vector)).toEqual([1, 97]);
    expect(inner.calls.length).toBe(3);
    await cache.embedText('m', 'd'); // evicts b
    expect(cache.stats().entries).toBe(3);
    await cache.embedText('m', 'a');
    await cache.embedText('m', 'c');
    await cache.embedText('m', 'd');
    expect(inner.calls.length).toBe(4);
    await cache.embedText('m', 'b'); // evicted: the model again (and now `a` goes)
    expect(inner.calls).toEqual(['m:a', 'm:b', 'm:c', 'm:d', 'm:b']);
    await cache.embedText('m', 'a');
    expect(inner.calls.at(-1)).toBe('m:a');
    expect(cache.stats()).toMatchObject({ entries: 3, hits: 4, misses: 6 });
  });

  it('keys by embedder id and normalised text, and gives the model the normalised text', async () => {
    const inner = new CountingEncoder();
    const cache = new CachedTextEncoder(inner, 10);
    await cache.embedText('m1', 'a dog');
    await cache.embedText('m1', '  a   dog\n');
    expect(inner.calls).toEqual(['m1:a dog']);
    await cache.embedText('m1', 'A dog'); // case is kept: another text
    await cache.embedText('m2', 'a dog'); // another embedder: another space
    await cache.embedText('m1', '\ta\tcat ');
    expect(inner.calls).toEqual(['m1:a dog', 'm1:A dog', 'm2:a dog', 'm1:a cat']);
  });

  it('keeps `truncated` with the vector', async () => {
    const inner = new CountingEncoder();
    const cache = new CachedTextEncoder(inner, 10);
    expect((await cache.embedText('m', 'long text')).truncated).toBe(true);
    expect((await cache.embedText('m', 'long text')).truncated).toBe(true);
    expect((await cache.embedText('m', 'short')).truncated).toBe(false);
    expect(inner.calls.length).toBe(2);
  });

  it('shares one encoding among concurrent misses, hands out copies, and does not cache errors', async () => {
    const inner = new CountingEncoder();
    const cache = new CachedTextEncoder(inner, 10);
    const all = await Promise.all(Array.from({ length: 20 }, () => cache.embedText('m', 'same')));
    expect(inner.calls).toEqual(['m:same']);
    all[0].vector[0] = 999; // a caller scaling its vector in place changes nobody else's
    expect(all[1].vector[0]).toBe(4);
    expect((await cache.embedText('m', 'same')).vector[0]).toBe(4);
    inner.fail = true;
    await expect(cache.embedText('m', 'other')).rejects.toThrow(ModelError);
    inner.fail = false;
    expect((await cache.embedText('m', 'other')).vector[0]).toBe(5);
    expect(inner.calls.filter((c) => c === 'm:other').length).toBe(2);
  });

  it('encodes but does not keep very long texts, and closes what it wraps', async () => {
    const inner = new CountingEncoder();
    const cache = new CachedTextEncoder(inner, 10, 8);
    await cache.embedText('m', 'a rather long query');
    await cache.embedText('m', 'a rather long query');
    expect(inner.calls.length).toBe(2);
    expect(cache.stats().entries).toBe(0);
    await cache.close();
    expect(inner.closed).toBe(true);
  });
});

describe('the engine encodes query text through its text encoder', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-textenc-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('by default in-process behind the cache: a repeated query skips the model', async () => {
    const fake = new FakeEmbedder();
    const engine = new LocalEngine({ home, embedderFor: () => fake });
    try {
      const a = await engine.encodeText({ text: 'a red car', model: fake.id });
      const b = await engine.encodeText({ text: '  a red   car ', model: fake.id });
      expect(b.embedding).toEqual(a.embedding);
      expect(fake.texts).toEqual(['a red car']);
    } finally {
      await engine.close();
    }
  });

  it('through the one it is given, which close() closes', async () => {
    const fake = new FakeEmbedder();
    const inner = new CountingEncoder(fake.dim);
    const engine = new LocalEngine({ home, embedderFor: () => fake, textEncoder: inner });
    const c = await engine.createCollection({ name: 'textenc', model: fake.id });
    await engine.search(c.collection_id, { text: 'sunset' });
    const r = await engine.encodeText({ text: 'long words', model: fake.id });
    expect(r.truncated).toBe(true);
    expect(inner.calls).toEqual([`${fake.id}:sunset`, `${fake.id}:long words`]);
    expect(fake.texts).toEqual([]);
    await engine.close();
    expect(inner.closed).toBe(true);
  });
});

describe('encoderThreads (config)', () => {
  it('flag, then VIDEMBED_ENCODER_THREADS, then one per core; bad values are errors', () => {
    expect(encoderThreads(3, { VIDEMBED_ENCODER_THREADS: '1' })).toBe(3);
    expect(encoderThreads(undefined, { VIDEMBED_ENCODER_THREADS: '0' })).toBe(0);
    expect(encoderThreads(undefined, {})).toBe(os.availableParallelism());
    expect(() => encoderThreads(Number('x'), {})).toThrow(/--encoder-threads must be an integer/);
    expect(() => encoderThreads(undefined, { VIDEMBED_ENCODER_THREADS: '-1' })).toThrow(/VIDEMBED_ENCODER_THREADS/);
  });
});

describe('errors cross the thread boundary as the same classes', () => {
  it('round-trips', () => {
    const v = errorFromWire(errorToWire(new ValidationError([{ loc: ['body', 'text'], msg: 'bad', type: 't' }])));
    expect(v).toBeInstanceOf(ValidationError);
    expect((v as ValidationError).issues).toEqual([{ loc: ['body', 'text'], msg: 'bad', type: 't' }]);
    const m = errorFromWire(errorToWire(new ModelError('gone')));
    expect(m).toBeInstanceOf(ModelError);
    expect(m.message).toBe('gone');
    expect(errorFromWire(errorToWire(new TypeError('x')))).not.toBeInstanceOf(ModelError);
  });
});

// Worker threads run the compiled code (dist/, built by `npm test`'s pretest) with fake embedders.
// The worker runs compiled code: `npm install` builds it. Under CI a missing build fails here.
describe.runIf(existsSync(BUILT_WORKER) || isCI)('TextEncoderPool (worker threads, fake embedders)', () => {
  let pool: TextEncoderPool;
  beforeAll(() => {
    pool = new TextEncoderPool({ threads: 2, preload: [FAKES] });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('answers many concurrent calls, each with its own text, in batches', async () => {
    const { echoVector } = (await import(FAKES)) as { echoVector: (t: string) => Float32Array };
    const texts = Array.from({ length: 300 }, (_, i) => `query number ${i}`);
    const results = await Promise.all(texts.map((t) => pool.embedText('fake-echo', t)));
    results.forEach((r, i) => {
      expect(Array.from(r.vector)).toEqual(Array.from(echoVector(texts[i])));
      expect(r.truncated).toBe(texts[i].length > 20);
    });
    const s = pool.stats();
    expect(s.texts).toBeGreaterThanOrEqual(300);
    expect(s.batches).toBeLessThan(300 / 4); // queued calls travel together (at most 32 a batch)
    expect(pool.liveThreads).toBe(2);
  });

  it('a second thread joins only once `spill` calls wait; until then they ride the busy thread\'s next batch', async () => {
    const own = new TextEncoderPool({ threads: 2, spill: 4, preload: [FAKES] });
    const gates = mkdtempSync(path.join(os.tmpdir(), 'vidembed-gates-'));
    const until = async (what: () => boolean) => {
      while (!what()) await new Promise((r) => setTimeout(r, 2));
    };
    try {
      const thread = async (p: Promise<TextEmbedding>) => (await p).vector[0];
      await own.embedText('fake-echo', 'a');
      await until(() => own.readyThreads === 2);
      const gate1 = path.join(gates, 'one');
      const batches0 = own.stats().batches;
      const first = own.embedText('fake-gated', gate1);
      await until(() => own.stats().batches === batches0 + 1); // `first` holds one thread
      const few = [own.embedText('fake-gated', gate1), own.embedText('fake-gated', gate1)];
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      // Two calls < spill: the idle thread does not take them; they wait for the busy one.
      expect(own.stats()).toMatchObject({ queued: 2, batches: batches0 + 1 });
      writeFileSync(gate1, '');
      const firstThread = await thread(first);
      const fewThreads = await Promise.all(few.map(thread));
      // ... and went together, as one batch, to the thread that got free.
      expect(fewThreads).toEqual([firstThread, firstThread]);
      expect(own.stats().batches - batches0).toBe(2);

      const gate2 = path.join(gates, 'two');
      const batches1 = own.stats().batches;
      const again = own.embedText('fake-gated', gate2);
      await until(() => own.stats().batches === batches1 + 1);
      const many = Array.from({ length: 5 }, () => own.embedText('fake-gated', gate2));
      // Five calls >= spill: the idle thread takes them while the other is still busy.
      await until(() => own.stats().batches === batches1 + 2);
      expect(own.stats().queued).toBe(0);
      writeFileSync(gate2, '');
      const againThread = await thread(again);
      const manyThreads = await Promise.all(many.map(thread));
      expect(new Set(manyThreads).size).toBe(1);
      expect(manyThreads[0]).not.toBe(againThread);
    } finally {
      await own.close();
      rmSync(gates, { recursive: true, force: true });
    }
  });

  it("gives the caller the embedder's error as the same class, and keeps serving", async () => {
    await expect(pool.embedText('fake-model-error', 'x1')).rejects.toThrow(new ModelError('cannot encode x1'));
    const v = await pool.embedText('fake-validation-error', 'x').catch((e: unknown) => e);
    expect(v).toBeInstanceOf(ValidationError);
    expect((v as ValidationError).issues[0].loc).toEqual(['body', 'text']);
    await expect(pool.embedText('fake-plain-error', 'x')).rejects.toThrow('something broke');
    await expect(pool.embedText('no-such-embedder', 'x')).rejects.toThrow(/unknown embedder/);
    // Failures mixed into a batch fail only their own calls.
    const mixed = await Promise.allSettled([pool.embedText('fake-echo', 'ok 1'), pool.embedText('fake-model-error', 'bad'), pool.embedText('fake-echo', 'ok 2')]);
    expect(mixed.map((m) => m.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await pool.embedText('fake-echo', 'after 7')).vector[2]).toBe(7);
  });

  it('replaces a thread that dies: its calls fail with a ModelError, the pool keeps serving', async () => {
    const before = pool.stats();
    await expect(pool.embedText('fake-crash', 'boom')).rejects.toThrow(/text encoder thread stopped while encoding \(the thread crashed on purpose\)/);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => pool.embedText('fake-echo', `after crash ${i}`)));
    expect(results.map((r) => r.vector[2])).toEqual(Array.from({ length: 40 }, (_, i) => i));
    const after = pool.stats();
    expect(after.crashed).toBe(before.crashed + 1);
    expect(after.started).toBe(before.started + 1);
    expect(pool.liveThreads).toBe(2);
  });

  it('close() terminates the threads and fails what is waiting; later calls fail', async () => {
    const own = new TextEncoderPool({ threads: 2, preload: [FAKES] });
    await own.embedText('fake-echo', 'start 1');
    expect(own.liveThreads).toBe(2);
    // Two calls that never answer occupy both threads; five more wait in the queue.
    const calls = Array.from({ length: 7 }, (_, i) => own.embedText('fake-hang', `never ${i}`));
    const settled = Promise.allSettled(calls);
    await new Promise((r) => setTimeout(r, 50));
    await own.close();
    expect(own.liveThreads).toBe(0);
    for (const s of await settled) {
      expect(s.status).toBe('rejected');
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(ModelError);
      expect((s as PromiseRejectedResult).reason.message).toMatch(/closed/);
    }
    await expect(own.embedText('fake-echo', 'late')).rejects.toThrow(/closed/);
  });

  it('a worker that cannot start fails the waiting calls instead of leaving them hanging', async () => {
    const broken = new TextEncoderPool({ threads: 1, preload: ['file:///nonexistent/module.mjs'] });
    try {
      await expect(broken.embedText('fake-echo', 'x')).rejects.toThrow(/could not start/);
    } finally {
      await broken.close();
    }
    expect(broken.liveThreads).toBe(0);
  });
});
