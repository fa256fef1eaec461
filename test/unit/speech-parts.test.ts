/**
 * Hearing a soundtrack in parts (src/speech/parts.ts, src/speech/in-parts.ts): the piece planner,
 * the cut at the quietest stretch, the merge of the pieces' words (shifted by their offsets, a word
 * heard by two pieces kept once), and the runner with a deterministic fake recognizer that hears
 * "words" as bursts of sound in generated PCM — the same words at the same times as one hearing
 * of the whole, at most `slots` pieces at once, a failure or an abort stopping every piece. No
 * process starts.
 */
import { describe, expect, it } from 'vitest';
import { transcribeInParts } from '../../src/speech/in-parts.js';
import { cutAt, cutTarget, frameEnergies, hearingSlots, mergePieces, piecePlan, quietestFrame, speechSlots, PARTS_RULE, SAMPLE_RATE } from '../../src/speech/parts.js';
import type { PartsOptions, SpeechEngine, SpokenWord, TranscribeOptions } from '../../src/speech/types.js';

const word = (w: string, start: number, end: number): SpokenWord => ({ w, start, end, conf: 0.9 });

/** 16 kHz s16le PCM: silence, with a burst of amplitude `1000 + 10·k` for each word k at its times. */
function speech(durationS: number, words: Array<[number, number]>): Buffer {
  const pcm = Buffer.alloc(Math.round(durationS * SAMPLE_RATE) * 2);
  words.forEach(([s, e], k) => {
    for (let i = Math.round(s * SAMPLE_RATE); i < Math.round(e * SAMPLE_RATE); i++) pcm.writeInt16LE(i % 2 ? 1000 + 10 * k : -(1000 + 10 * k), i * 2);
  });
  return pcm;
}

/**
 * Hears each burst of sound as the word `w<k>` (k from its amplitude), timed from the start of
 * the stream it is given; counts how many hearings run at once.
 */
class BurstEngine implements SpeechEngine {
  readonly name = 'bursts';
  readonly version = 'bursts-1';
  readonly language = 'en';
  readonly splits = true;
  running = 0;
  most = 0;
  calls = 0;
  constructor(private readonly opts: { failOnCall?: number; delayMs?: number } = {}) {}
  async transcribe(pcm: AsyncIterable<Buffer>, onWord: (w: SpokenWord) => void, { signal }: TranscribeOptions = {}): Promise<void> {
    const call = ++this.calls;
    this.running++;
    this.most = Math.max(this.most, this.running);
    try {
      const parts: Buffer[] = [];
      for await (const c of pcm) parts.push(c);
      // Let the other pieces start: hearing takes time.
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, this.opts.delayMs ?? 5);
        signal?.addEventListener('abort', () => {
          clearTimeout(t);
          reject(signal.reason);
        });
      });
      if (call === this.opts.failOnCall) throw new Error(`recognizer ${call} crashed`);
      const all = Buffer.concat(parts);
      let from = -1;
      let amp = 0;
      for (let i = 0; i <= all.length / 2; i++) {
        const v = i < all.length / 2 ? Math.abs(all.readInt16LE(i * 2)) : 0;
        // A word ends where the sound stops or changes its amplitude (the next word).
        if (from >= 0 && v !== amp) {
          onWord(word(`w${(amp - 1000) / 10}`, from / SAMPLE_RATE, i / SAMPLE_RATE));
          from = -1;
        }
        if (v && from < 0) [from, amp] = [i, v];
      }
    } finally {
      this.running--;
    }
  }
}

async function* chunked(pcm: Buffer, bytes = 6000): AsyncGenerator<Buffer> {
  for (let i = 0; i < pcm.length; i += bytes) yield pcm.subarray(i, i + bytes);
}

const parts = (durationS: number, cores = 2, slots = (_waited: number) => cores): PartsOptions => ({ durationS, cores, slots });

async function hear(engine: SpeechEngine, pcm: Buffer, p?: PartsOptions, rule = PARTS_RULE, signal?: AbortSignal): Promise<SpokenWord[]> {
  const out: SpokenWord[] = [];
  await transcribeInParts(engine, chunked(pcm), (w) => out.push(w), { signal }, p, rule);
  return out;
}

describe('hearing in parts: the plan', () => {
  it('splits a long soundtrack into a multiple of the cores, each piece at most maxPieceS', () => {
    expect(piecePlan(79.5, 2)).toEqual({ pieces: 2, pieceS: 39.75 });
    expect(piecePlan(3600, 2)).toEqual({ pieces: 30, pieceS: 120 });
    expect(piecePlan(250, 2)).toEqual({ pieces: 4, pieceS: 62.5 }); // 3 by memory, rounded up to 4
    expect(piecePlan(50, 4)).toEqual({ pieces: 2, pieceS: 25 }); // 4 pieces would be under minPieceS
  });

  it('hears whole what is short, of unknown length, or has one core', () => {
    expect(piecePlan(39.9, 2)).toBeUndefined();
    expect(piecePlan(undefined, 2)).toBeUndefined();
    expect(piecePlan(600, 1)).toBeUndefined();
    expect(piecePlan(Number.NaN, 2)).toBeUndefined();
  });

  it('starts no piece while pictures run, unless it waited its longest; every core when they do not', () => {
    expect(hearingSlots(2, 0, 0, 600_000)).toBe(2);
    expect(hearingSlots(2, 1, 10_000, 600_000)).toBe(0);
    expect(hearingSlots(2, 1, 600_000, 600_000)).toBe(1);
    expect(hearingSlots(2, 1, 0, 0)).toBe(1);
  });

  it("a job's slots: waits for pictures until it waited its longest once, then one beside them for good", () => {
    let main = 0;
    const beside = { mainRunning: () => main, maxWaitMs: 1000 };
    const slots = speechSlots(2, beside);
    expect(slots(0)).toBe(2);
    main = 1;
    expect(slots(999)).toBe(0);
    expect(slots(1000)).toBe(1); // waited its longest
    expect(slots(0)).toBe(1); // and never waits again
    main = 0;
    expect(slots(0)).toBe(2);
    // Started while the main lane ran (claimed past its wait): one beside the pictures at once.
    main = 1;
    expect(speechSlots(2, beside)(0)).toBe(1);
    // VIDEMBED_SPEECH_PARTS below the cores caps it.
    main = 0;
    expect(speechSlots(1, beside)(0)).toBe(1);
  });
});

describe('hearing in parts: where a piece ends', () => {
  it('finds the quietest stretch, nearest the target on ties', () => {
    const e = [5, 5, 5, 1, 1, 5, 5, 0, 0, 0, 5, 5];
    expect(quietestFrame(e, 0, 12, 2, 3)).toBe(8); // [7,8] and [8,9] sum 0: nearest 3 is 8
    expect(quietestFrame(e, 0, 6, 2, 3)).toBe(4); // frames 3..4
    expect(quietestFrame(new Array(10).fill(1), 0, 10, 3, 6)).toBe(6); // flat: the target
  });

  it('is not ready before the nominal end plus the search reach, and then cuts in a pause', () => {
    const plan = { pieceS: 30 };
    const need = (30 + PARTS_RULE.searchS) * SAMPLE_RATE;
    expect(cutTarget(need - 1, 0, 0, plan, 90)).toBeUndefined();
    expect(cutTarget(need, 0, 0, plan, 90)).toBe((30 * SAMPLE_RATE) / 160);
    // Fewer than half a piece after the nominal end: runs on (to twice the nominal length at most).
    expect(cutTarget(need, 0, 0, plan, 40)).toBeUndefined();
    expect(cutTarget((60 + PARTS_RULE.searchS) * SAMPLE_RATE, 0, 0, plan, 40)).toBe((60 * SAMPLE_RATE) / 160);
    // Talk everywhere but a pause at 31.0–31.5 s: the cut is in it.
    const pcm = speech(34, [[0, 31], [31.5, 34]]);
    const cut = cutAt(pcm, cutTarget(pcm.length / 2, 0, 0, plan, 90)!, plan) / SAMPLE_RATE;
    expect(cut).toBeGreaterThan(31);
    expect(cut).toBeLessThan(31.5);
    expect(frameEnergies(pcm).length).toBe(34 * 100);
  });
});

describe('hearing in parts: one transcript', () => {
  it('shifts each piece by its offset and keeps each word in the piece that owns its middle', () => {
    const merged = mergePieces([
      { offsetS: 39, fromS: 40, words: [word('half', 0.6, 1.2), word('way', 1.3, 1.8), word('end', 5, 5.5)] },
      { offsetS: 0, toS: 40, words: [word('start', 1, 1.5), word('half', 39.6, 40.2), word('way', 40.3, 40.8)] },
    ]);
    // `half` (middle 39.9) is the first piece's; `way` (middle 40.55) the second's.
    expect(merged.map((w) => [w.w, w.start, w.end])).toEqual([
      ['start', 1, 1.5],
      ['half', 39.6, 40.2],
      ['way', 40.3, 40.8],
      ['end', 44, 44.5],
    ]);
  });

  it('keeps a word heard by both pieces once, the earlier piece’s, when its middles fall either side of the cut', () => {
    const merged = mergePieces([
      { offsetS: 0, toS: 10, words: [word('cut', 9.7, 10.2)] }, // middle 9.95: kept
      { offsetS: 9, fromS: 10, words: [word('cut', 0.85, 1.3), word('after', 1.5, 2)] }, // middle 10.075: a duplicate
    ]);
    expect(merged.map((w) => [w.w, w.start])).toEqual([
      ['cut', 9.7],
      ['after', 10.5],
    ]);
  });
});

describe('hearing in parts: the runner', () => {
  // 90 s of "speech": a word every 0.7 s with 0.25 s pauses, one long word across the middle.
  const times: Array<[number, number]> = [];
  for (let t = 0.5; t < 89; t += 0.7) times.push([t, t + 0.45]);
  const pcm = speech(90, times);

  it('gives the words of one hearing of the whole, at the same times, from pieces heard at once', async () => {
    const whole = await hear(new BurstEngine(), pcm);
    expect(whole).toHaveLength(times.length);
    const engine = new BurstEngine();
    const inParts = await hear(engine, pcm, parts(90));
    expect(engine.calls).toBe(2);
    expect(engine.most).toBe(2);
    expect(inParts).toEqual(whole);
  });

  it('gives the same words with no pause to cut at: the overlap and the middle rule keep each word once', async () => {
    // Talk with no pause at all: 0.5 s words back to back, each its own amplitude.
    const solid: Array<[number, number]> = [];
    for (let t = 0; t < 60; t += 0.5) solid.push([t, t + 0.5]);
    const pcm2 = speech(60, solid);
    const whole = await hear(new BurstEngine(), pcm2);
    expect(whole).toHaveLength(solid.length);
    for (const cores of [2, 3]) {
      const engine = new BurstEngine();
      const got = await hear(engine, pcm2, parts(60, cores));
      expect(engine.calls).toBe(cores);
      expect(got).toEqual(whole);
    }
  });

  it('runs no more pieces at once than `slots` allows, and waits while it allows none', async () => {
    const engine = new BurstEngine();
    let asked = 0;
    const got = await hear(engine, pcm, parts(90, 2, () => (++asked < 3 ? 0 : 1)));
    expect(engine.most).toBe(1);
    expect(engine.calls).toBe(2);
    expect(got).toHaveLength(times.length);
  });

  it('hears whole when no parts are offered, or the engine does not split', async () => {
    const plain = new BurstEngine();
    await hear(plain, pcm);
    expect(plain.calls).toBe(1);
    const whisperLike = new BurstEngine();
    Object.defineProperty(whisperLike, 'splits', { value: false }); // an engine that uses every core itself
    await hear(whisperLike, pcm, parts(90));
    expect(whisperLike.calls).toBe(1);
  });

  it('fails as a whole when one piece fails, and stops the others', async () => {
    const engine = new BurstEngine({ failOnCall: 1, delayMs: 50 });
    await expect(hear(engine, pcm, parts(90))).rejects.toThrow('recognizer 1 crashed');
    expect(engine.running).toBe(0);
  });

  it('stops every piece when the signal aborts', async () => {
    const engine = new BurstEngine({ delayMs: 10_000 });
    const stop = new AbortController();
    const hearing = hear(engine, pcm, parts(90), PARTS_RULE, stop.signal);
    setTimeout(() => stop.abort(new Error('cancelled')), 30);
    await expect(hearing).rejects.toThrow('cancelled');
    expect(engine.running).toBe(0);
  });
});
