/**
 * `node dist/eval/speech-tune.js [--half tuning] [--variant NAME]…`: compares pocketsphinx search
 * settings on the TUNING half of the eval's recordings (the check half is refused). Each
 * recording is transcribed straight from its file (as the engine hears it: 1 s of lead silence,
 * telephone-band audio mirrored), then every phrase of `phrasesOf` is matched by sound against
 * every recording's words (a full scan, the matcher `said` search uses); R@1 counts the best
 * recording right when its reference says the phrase. Reports, per variant and band, R@1, word
 * error rate and the recognizer's CPU seconds per second of audio.
 */
import { childrenCpuSeconds } from '../bench/util.js';
import { readFileSync } from 'node:fs';
import { streamPcm } from '../src/media/audio.js';
import { round3 as round } from '../src/media/kernels/index.js';
import { matchSpoken, spokenQuery } from '../src/speech/match.js';
import { spokenWords } from '../src/speech/phonetic.js';
import { findPocketsphinx, PocketsphinxEngine, SEARCH_ARGS } from '../src/speech/pocketsphinx.js';
import { SPOKEN_WEIGHTS } from '../src/speech/search.js';
import type { SpokenWord } from '../src/speech/types.js';
import { loadSpeechItems, phrasesOf, saysPhrase, wordErrors, type SpeechItem } from './speech-data.js';

const FAST = ['-fwdflat', 'no', '-bestpath', 'no', '-topn', '2'];
/** The variants compared; `current` is what the engine uses. */
export const VARIANTS: Record<string, string[]> = {
  current: SEARCH_ARGS,
  hmm2000: [...FAST, '-maxhmmpf', '2000', '-maxwpf', '5'],
  hmm1500: [...FAST, '-maxhmmpf', '1500', '-maxwpf', '5'],
  hmm1000: [...FAST, '-maxhmmpf', '1000', '-maxwpf', '5'],
  hmm1500_beam40: [...FAST, '-maxhmmpf', '1500', '-maxwpf', '5', '-beam', '1e-40', '-pbeam', '1e-40', '-wbeam', '1e-30'],
  hmm1000_beam40: [...FAST, '-maxhmmpf', '1000', '-maxwpf', '5', '-beam', '1e-40', '-pbeam', '1e-40', '-wbeam', '1e-30'],
};

async function transcribeAll(items: SpeechItem[], args: string[]): Promise<{ words: Map<string, SpokenWord[]>; cpu: Record<string, number> }> {
  const engine = new PocketsphinxEngine(findPocketsphinx()!, { searchArgs: args });
  const words = new Map<string, SpokenWord[]>();
  const cpu: Record<string, number> = { wideband: 0, phone: 0 };
  for (const it of items) {
    const out: SpokenWord[] = [];
    const c0 = childrenCpuSeconds();
    await engine.transcribe(streamPcm(it.file), (w) => out.push(w), { narrowband: it.band === 'phone' });
    cpu[it.band] += childrenCpuSeconds() - c0;
    words.set(it.name, out);
  }
  return { words, cpu };
}

function durationOf(it: SpeechItem): number {
  // 16-bit mono WAV (the eval's recordings): data bytes / 2 / rate, from the header.
  const b = readFileSync(it.file);
  return (b.length - 44) / 2 / b.readUInt32LE(24);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const half = argv.includes('--half') ? argv[argv.indexOf('--half') + 1] : 'tuning';
  if (half !== 'tuning') throw new Error('speech-tune compares settings on the tuning half only');
  const names = argv.flatMap((a, i) => (argv[i - 1] === '--variant' ? [a] : []));
  const items = loadSpeechItems().filter((i) => i.half === 'tuning');
  const seconds = { wideband: 0, phone: 0 };
  for (const it of items) seconds[it.band] += durationOf(it);
  const rows: Record<string, unknown>[] = [];
  for (const name of names.length ? names : Object.keys(VARIANTS)) {
    const { words, cpu } = await transcribeAll(items, VARIANTS[name]);
    for (const band of ['wideband', 'phone'] as const) {
      const mine = items.filter((i) => i.band === band);
      let hits = 0;
      let phrases = 0;
      let errs = 0;
      let ref = 0;
      for (const it of mine) {
        const r = spokenWords(it.transcript);
        errs += wordErrors(r, (words.get(it.name) ?? []).map((w) => w.w));
        ref += r.length;
        for (const phrase of phrasesOf(it)) {
          phrases++;
          const q = spokenQuery(phrase);
          if (!q) continue;
          let best: { it: SpeechItem; score: number } | undefined;
          for (const other of items) {
            const m = matchSpoken(q, words.get(other.name) ?? []);
            if (m && m.score >= SPOKEN_WEIGHTS.minScore && (!best || m.score > best.score)) best = { it: other, score: m.score };
          }
          if (best && saysPhrase(best.it.transcript, phrase)) hits++;
        }
      }
      rows.push({ variant: name, band, phrases, r_at_1: round(hits / phrases), wer: round(errs / ref), cpu_per_audio_s: round(cpu[band] / seconds[band]) });
    }
    console.log(JSON.stringify(rows.slice(-2)));
  }
}

void main();
