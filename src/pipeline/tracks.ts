/**
 * The soundtrack side of the pipeline, for any track capability (src/capabilities): the audio is
 * decoded once and its chunks shared by every hearer (`hearTrack`); what they heard is then
 * joined to segments (`joinTrack`) — each segment gets each track capability's output as its
 * analysis and its tags. Nothing here changes a vector: what is heard goes into facts, keyword
 * terms and tags. `withTrack` runs pictures and soundtrack side by side for one-off analyses
 * (encode/tag calls, tensor tasks); ingest runs them as two lanes.
 */
import type { TagValue } from '../api/types.js';
import type { SegmentAnalysis } from '../analysis/types.js';
import type { Heard, Hearer, HearOptions } from '../capabilities/types.js';
import type { PcmChunks } from '../speech/types.js';
import type { AnalyzedVideo } from './pipeline.js';

export interface NamedHearer {
  name: string;
  hearer: Hearer;
}

/** One consumer of a shared stream: its chunks, and `close()` when it stops reading (early or not). */
interface Branch<T> extends AsyncIterable<T> {
  close(): void;
}

/**
 * Shares one async stream between `n` readers: each gets every chunk, in order. The source is read
 * only as fast as the slowest reader that still reads (at most `highWater` chunks ahead of it);
 * a reader that stops (`close()`, or ends its loop) no longer holds the others back. A source
 * error reaches every reader.
 */
export function teeChunks<T>(source: AsyncIterable<T>, n: number, highWater = 32): Branch<T>[] {
  const it = source[Symbol.asyncIterator]();
  const queues: T[][] = Array.from({ length: n }, () => []);
  const closed = new Array<boolean>(n).fill(false);
  let ended = false;
  let error: { err: unknown } | undefined;
  let pulling: Promise<void> | undefined;
  let wake: Array<() => void> = [];
  const notify = () => {
    const w = wake;
    wake = [];
    w.forEach((f) => f());
  };
  const changed = () => new Promise<void>((r) => wake.push(r));
  const pull = () =>
    (pulling ??= it.next().then(
      (r) => {
        if (r.done) ended = true;
        else queues.forEach((q, k) => !closed[k] && q.push(r.value));
      },
      (err: unknown) => {
        error = { err };
      },
    ).finally(() => {
      pulling = undefined;
      notify();
    }));
  const close = (i: number) => {
    if (closed[i]) return;
    closed[i] = true;
    queues[i] = [];
    notify();
    if (closed.every(Boolean) && !ended) void it.return?.();
  };
  return queues.map((_, i) => ({
    close: () => close(i),
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          const q = queues[i];
          if (q.length) {
            const chunk = q.shift()!;
            notify(); // a reader waiting for this one to catch up may go on
            yield chunk;
            continue;
          }
          if (error) throw error.err;
          if (ended || closed[i]) return;
          if (queues.some((other, k) => k !== i && !closed[k] && other.length >= highWater)) await changed();
          else await pull();
        }
      } finally {
        close(i);
      }
    },
  }));
}

/**
 * Hears a soundtrack with every hearer at once from one decode (`pcm` undefined: the video has no
 * audio track); `opts.parts`: a hearer whose recognizer gains from it may hear in pieces at once. A hearer that throws rejects the whole hearing (the lane fails its capabilities).
 */
export async function hearTrack(pcm: PcmChunks | undefined, hearers: NamedHearer[], opts: HearOptions = {}): Promise<Record<string, Heard>> {
  if (!hearers.length) return {};
  const branches = pcm ? teeChunks(pcm, hearers.length) : undefined;
  const heard = await Promise.all(
    hearers.map(async ({ hearer }, i) => {
      try {
        return await hearer.hear(branches?.[i], opts);
      } finally {
        branches?.[i].close();
      }
    }),
  );
  return Object.fromEntries(hearers.map((h, i) => [h.name, heard[i]]));
}

interface SegmentLike {
  start: number;
  end: number;
  tags: Record<string, TagValue>;
  analysis: SegmentAnalysis;
}

/** Gives each segment each track capability's output (as its analysis, and its tags). */
export function joinTrack(segments: SegmentLike[], hearers: Pick<NamedHearer, 'name' | 'hearer'>[], heard: Record<string, Heard>): void {
  for (const s of segments) {
    for (const { name, hearer } of hearers) {
      const out = hearer.segment(heard, s.start, s.end);
      s.analysis = { ...s.analysis, [name]: out };
      s.tags = { ...s.tags, ...(out.tags ?? {}) };
    }
  }
}

/**
 * The pictures and the soundtrack of one video at once, joined (one-off analyses). A failure of
 * either stops the other.
 */
export async function withTrack(
  pictures: (signal: AbortSignal) => Promise<AnalyzedVideo>,
  pcm: ((signal: AbortSignal) => PcmChunks) | undefined,
  hearers: NamedHearer[],
  signal?: AbortSignal,
): Promise<AnalyzedVideo> {
  const stop = new AbortController();
  const both = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  if (!hearers.length) return pictures(both);
  const hearing = hearTrack(pcm?.(both), hearers, { signal: both });
  hearing.catch(() => {}); // awaited below; a picture failure must not leave it unhandled
  let analyzed: AnalyzedVideo;
  try {
    analyzed = await pictures(both);
  } catch (err) {
    stop.abort(err);
    throw err;
  }
  joinTrack(analyzed.segments, hearers, await hearing);
  return analyzed;
}
