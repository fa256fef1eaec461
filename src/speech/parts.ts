/**
 * Hearing a soundtrack in parts: the one place of the rule. A recognizer that is one process on
 * one core (pocketsphinx) hears a long soundtrack faster as several pieces at once, one process
 * per piece, on as many cores as are free. This file holds the pure parts: how long the pieces
 * are (`piecePlan`), where a piece ends (the quietest stretch near its nominal end,
 * `quietestFrame`), how many pieces may be heard at once now (`hearingSlots`), and how the pieces'
 * words become one transcript (`mergePieces`: times shifted by each piece's offset; each word kept
 * by the piece that owns its middle). src/speech/in-parts.ts runs them (no process starts here).
 *
 * Each piece after the first starts `overlapS` before its cut and each piece before the last ends
 * `overlapS` after it, so a word said across a cut is heard whole by both; the piece that owns the
 * word's middle keeps it, and the same word heard by both at overlapping times is kept once (the
 * earlier piece's).
 */
import type { SpokenWord } from './types.js';

export const SAMPLE_RATE = 16_000;
/** Quietness is measured per 10 ms frame. */
export const FRAME_SAMPLES = 160;

export const PARTS_RULE = {
  /**
   * A piece shorter than this is not worth a recognizer's start (~0.6 CPU-s to load its model):
   * a soundtrack shorter than two of them is heard whole.
   */
  minPieceS: 20,
  /** Memory bound: a piece is held in memory while it is heard (120 s of 16 kHz s16 = 3.8 MB). */
  maxPieceS: 120,
  /** A cut lies within this many seconds of the piece's nominal end, at the quietest stretch. */
  searchS: 4,
  /** The stretch whose quietness is measured (a pause between words). */
  quietS: 0.3,
  /** Audio each side of a cut heard by both pieces. */
  overlapS: 1,
} as const;

export type PartsRule = { [K in keyof typeof PARTS_RULE]: number };

/**
 * How long the pieces of a soundtrack of `durationS` are when up to `cores` recognizers can run:
 * undefined when it is heard whole (one core, no known duration, or too short to split). Pieces
 * come in a multiple of `cores` (no last round with one core idle), each at most `maxPieceS`.
 */
export function piecePlan(durationS: number | undefined, cores: number, rule: PartsRule = PARTS_RULE): { pieceS: number; pieces: number } | undefined {
  if (!(cores >= 2) || !durationS || !Number.isFinite(durationS) || durationS < 2 * rule.minPieceS) return undefined;
  const byMemory = Math.ceil(durationS / rule.maxPieceS);
  const byLength = Math.floor(durationS / rule.minPieceS);
  let pieces = Math.ceil(byMemory / cores) * cores;
  if (pieces > byLength) pieces = Math.max(byMemory, byLength);
  if (pieces < 2) return undefined;
  return { pieceS: durationS / pieces, pieces };
}

/** Mean square of each `frameSamples` frame of 16-bit little-endian mono PCM. */
export function frameEnergies(pcm: Buffer, frameSamples = FRAME_SAMPLES): Float64Array {
  const frames = Math.floor(pcm.length / 2 / frameSamples);
  const out = new Float64Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    const base = f * frameSamples * 2;
    for (let i = 0; i < frameSamples; i++) {
      const v = pcm.readInt16LE(base + i * 2);
      sum += v * v;
    }
    out[f] = sum / frameSamples;
  }
  return out;
}

/**
 * The frame at the middle of the quietest run of `span` frames whose middle lies in [from, to)
 * (clamped to the frames there are). Ties go to the middle nearest `target`, then the earlier.
 */
export function quietestFrame(energies: ArrayLike<number>, from: number, to: number, span: number, target: number): number {
  const n = energies.length;
  const half = Math.floor(span / 2);
  const lo = Math.max(half, Math.floor(from));
  const hi = Math.min(n - (span - half), Math.ceil(to) - 1);
  if (hi < lo) return Math.max(0, Math.min(n, Math.round(target)));
  // Running sum over the window [m - half, m - half + span).
  let sum = 0;
  for (let i = lo - half; i < lo - half + span; i++) sum += energies[i];
  let best = lo;
  let bestSum = sum;
  for (let m = lo + 1; m <= hi; m++) {
    sum += energies[m - half + span - 1] - energies[m - half - 1];
    if (sum < bestSum - 1e-9 || (Math.abs(sum - bestSum) <= 1e-9 && Math.abs(m - target) < Math.abs(best - target))) {
      best = m;
      bestSum = sum;
    }
  }
  return best;
}

/**
 * Whether the piece being read is ready to be cut, and where its cut is sought: the frame (from
 * the piece's first sample) of its nominal end, or undefined while it is not ready. The piece
 * holds `heldSamples` from soundtrack sample `startSample`; its own part starts at `ownedFrom`
 * (the previous cut; 0 for the first piece). It is ready once it holds its nominal length plus
 * the search reach — unless what remains of the soundtrack after the nominal end is under half
 * a piece (then it runs to the end; a soundtrack longer than its duration said is still cut at
 * twice the nominal length, so memory stays bounded).
 */
export function cutTarget(heldSamples: number, startSample: number, ownedFrom: number, plan: { pieceS: number }, durationS: number | undefined, rule: PartsRule = PARTS_RULE): number | undefined {
  const nominalEnd = ownedFrom + plan.pieceS * SAMPLE_RATE;
  const rest = durationS === undefined ? Infinity : durationS * SAMPLE_RATE - nominalEnd;
  const reach = rest < (plan.pieceS * SAMPLE_RATE) / 2 ? ownedFrom + 2 * plan.pieceS * SAMPLE_RATE : nominalEnd;
  if (startSample + heldSamples < reach + searchS(plan, rule) * SAMPLE_RATE) return undefined;
  return (reach - startSample) / FRAME_SAMPLES;
}

/** How far from its nominal end a piece's cut is sought: searchS, at most a quarter of a piece. */
function searchS(plan: { pieceS: number }, rule: PartsRule): number {
  return Math.min(rule.searchS, plan.pieceS / 4);
}

/** Where a ready piece is cut (cutTarget): in samples from its first, at the quietest stretch within the search reach of the target. */
export function cutAt(pcm: Buffer, targetFrame: number, plan: { pieceS: number }, rule: PartsRule = PARTS_RULE): number {
  const reachFrames = (searchS(plan, rule) * SAMPLE_RATE) / FRAME_SAMPLES;
  const span = Math.max(1, Math.round((rule.quietS * SAMPLE_RATE) / FRAME_SAMPLES));
  return quietestFrame(frameEnergies(pcm), targetFrame - reachFrames, targetFrame + reachFrames, span, targetFrame) * FRAME_SAMPLES;
}

/**
 * How many pieces may be heard at once now: every core while no picture job runs on the worker;
 * while one runs, none is started (the pictures come first, so a video becomes searchable as
 * soon as without speech), unless the piece has waited `maxWaitMs` — then one (the bound that
 * keeps a steady stream of picture work from starving speech, VIDEMBED_SIDE_LANE_WAIT_S).
 */
export function hearingSlots(cores: number, picturesRunning: number, waitedMs: number, maxWaitMs: number): number {
  if (picturesRunning <= 0) return Math.max(1, cores);
  return waitedMs >= maxWaitMs ? 1 : 0;
}

/**
 * The slots of one speech job (PartsOptions.slots), from the worker's main lane as the job sees it
 * (`mainRunning` now; `maxWaitMs`, the side lane's longest wait), built when the job starts. A job
 * that started while the main lane ran had waited its longest already (the claim takes it then
 * only past its wait), and so has one whose piece once waited `maxWaitMs`: from then on, beside
 * running pictures, its pieces go one at a time (niced, as the lane ran before) and never wait again.
 */
export function speechSlots(cores: number, beside: { mainRunning(): number; maxWaitMs: number }): (waitedMs: number) => number {
  let waitedLongest = beside.mainRunning() > 0;
  return (waitedMs) => {
    if (waitedMs >= beside.maxWaitMs) waitedLongest = true;
    return Math.min(cores, hearingSlots(cores, beside.mainRunning(), waitedLongest ? beside.maxWaitMs : waitedMs, beside.maxWaitMs));
  };
}

/** One heard piece: its words (times from the piece's first sample), where it starts, and the part it owns. */
export interface HeardPiece {
  /** Seconds of soundtrack before the piece's first sample. */
  offsetS: number;
  /** The part of the soundtrack whose words this piece keeps: [fromS, toS) (undefined: open). */
  fromS?: number;
  toS?: number;
  words: SpokenWord[];
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * The pieces' words as one transcript, in time order: each word's times shifted by its piece's
 * offset, kept by the piece that owns its middle; where the last word kept before a cut and the
 * first after it are the same word at overlapping times (one word heard by both, its middles
 * either side of the cut), the earlier piece's is kept.
 */
export function mergePieces(pieces: HeardPiece[]): SpokenWord[] {
  const out: SpokenWord[] = [];
  const ordered = [...pieces].sort((a, b) => a.offsetS - b.offsetS);
  for (const p of ordered) {
    const kept = p.words
      .map((w) => ({ ...w, start: round3(w.start + p.offsetS), end: round3(w.end + p.offsetS) }))
      .filter((w) => {
        const mid = (w.start + w.end) / 2;
        return (p.fromS === undefined || mid >= p.fromS) && (p.toS === undefined || mid < p.toS);
      })
      .sort((a, b) => a.start - b.start || a.end - b.end);
    const last = out[out.length - 1];
    if (last && kept.length && kept[0].w === last.w && kept[0].start < last.end && last.start < kept[0].end) kept.shift();
    out.push(...kept);
  }
  return out;
}
