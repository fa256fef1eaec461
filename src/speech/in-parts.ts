/**
 * Runs the rule of src/speech/parts.ts: reads a soundtrack's PCM once, cuts it into pieces at
 * quiet stretches as it comes, hears each piece with its own `transcribe` call (for pocketsphinx:
 * its own process, at the lane's niceness) — as many at once as `slots` allows when each piece is
 * ready — and gives the merged words in time order, as one call of the engine on the whole would.
 * Memory: the piece being read and the pieces being heard (each at most ~2 × maxPieceS of PCM);
 * the reader waits for a free slot before it reads on. A failure or the signal stops every piece
 * (each call kills its own processes) and rejects once all have stopped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { cutAt, cutTarget, mergePieces, piecePlan, SAMPLE_RATE, PARTS_RULE, type HeardPiece, type PartsRule } from './parts.js';
import type { PartsOptions, PcmChunks, SpeechEngine, SpokenWord, TranscribeOptions } from './types.js';

/** How often a piece waiting for a slot asks again (a slot also frees when a piece ends). */
const SLOT_POLL_MS = 200;
/** The size of the writes a piece is fed in. */
const FEED_BYTES = 64 * 1024;

async function* feed(pcm: Buffer): AsyncGenerator<Buffer> {
  for (let i = 0; i < pcm.length; i += FEED_BYTES) yield pcm.subarray(i, Math.min(pcm.length, i + FEED_BYTES));
}

/**
 * Hears `pcm` with `engine`, in parts when the engine gains from it (`splits`), `parts` says how
 * many may run and the soundtrack is long enough (piecePlan); else in one call, as before.
 */
export async function transcribeInParts(engine: SpeechEngine, pcm: PcmChunks, onWord: (w: SpokenWord) => void, opts: TranscribeOptions, parts?: PartsOptions, baseRule: PartsRule = PARTS_RULE): Promise<void> {
  const rule = parts?.minPieceS ? { ...baseRule, minPieceS: parts.minPieceS } : baseRule;
  const plan = engine.splits && parts ? piecePlan(parts.durationS, parts.cores, rule) : undefined;
  if (!plan || !parts) return engine.transcribe(pcm, onWord, opts);
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const heard: HeardPiece[] = [];
  const running = new Set<Promise<void>>();
  let failure: { err: unknown } | undefined;
  const overlap = Math.round(rule.overlapS * SAMPLE_RATE);

  const waitForSlot = async () => {
    const since = Date.now();
    for (;;) {
      // Cancelled: the caller's reason, whatever stopped first (the decode or a piece).
  if (opts.signal?.aborted) throw opts.signal.reason;
  if (failure) throw failure.err;
      signal.throwIfAborted();
      if (running.size < parts.slots(Date.now() - since)) return;
      await Promise.race([...running, sleep(SLOT_POLL_MS, undefined, { signal }).catch(() => {})]);
    }
  };
  const start = async (piece: Buffer, startSample: number, fromSample: number | undefined, toSample: number | undefined) => {
    await waitForSlot();
    const h: HeardPiece = { offsetS: startSample / SAMPLE_RATE, words: [] };
    if (fromSample !== undefined) h.fromS = fromSample / SAMPLE_RATE;
    if (toSample !== undefined) h.toS = toSample / SAMPLE_RATE;
    heard.push(h);
    const p: Promise<void> = engine
      .transcribe(feed(piece), (w) => h.words.push(w), { ...opts, signal })
      .catch((err: unknown) => {
        if (!failure) failure = { err: opts.signal?.aborted ? opts.signal.reason : err };
        stop.abort(err);
      })
      .finally(() => running.delete(p));
    running.add(p);
  };

  try {
    let chunks: Buffer[] = [];
    let held = 0;
    let startSample = 0; // the soundtrack sample the piece being read starts at
    let ownedFrom: number | undefined; // the previous cut (undefined: the first piece)
    for await (const chunk of pcm) {
      if (failure) break;
      signal.throwIfAborted();
      chunks.push(chunk);
      held += chunk.length;
      const target = cutTarget(held >> 1, startSample, ownedFrom ?? 0, plan, parts.durationS, rule);
      if (target === undefined) continue;
      const whole = chunks.length > 1 ? Buffer.concat(chunks, held) : chunks[0];
      const cut = cutAt(whole, target, plan, rule);
      const cutSample = startSample + cut;
      const piece = whole.subarray(0, Math.min(whole.length, (cut + overlap) * 2));
      await start(piece, startSample, ownedFrom, cutSample);
      // The next piece starts `overlap` before the cut (copied: the read piece is let go once heard).
      const from = Math.max(0, cut - overlap) * 2;
      const next = Buffer.from(whole.subarray(from));
      startSample += from >> 1;
      ownedFrom = cutSample;
      chunks = [next];
      held = next.length;
    }
    if (!failure && held > 0) await start(chunks.length > 1 ? Buffer.concat(chunks, held) : chunks[0], startSample, ownedFrom, undefined);
  } catch (err) {
    if (!failure) failure = { err };
    stop.abort(err);
  }
  while (running.size) await Promise.allSettled([...running]);
  // Cancelled: the caller's reason, whatever stopped first (the decode or a piece).
  if (opts.signal?.aborted) throw opts.signal.reason;
  if (failure) throw failure.err;
  for (const w of mergePieces(heard)) onWord(w);
}
