/**
 * `node dist/eval/narrowband.js [--half tuning] [--jobs 1] [name=ARGS …]`: how well pocketsphinx
 * hears the 8 kHz telephone prompts of one half of `../shared/eval/speech` with candidate extra
 * options for narrowband audio (issue 20). Each `name=ARGS` is one candidate (ARGS: options to
 * pocketsphinx_continuous for narrowband audio in place of src/speech/narrowband.ts's, split at
 * spaces; `-cmninit A,B,…` is passed in a copy of the model's feat.params; `mirror=` is the band
 * mirroring alone; a bare `name` is the engine's own). Default: `mirror= adopted`. Every recording of the
 * half — both bands — is transcribed through `PocketsphinxEngine`, narrowband when the engine would
 * take it for narrowband (src/speech/levels.ts on the whole recording: the 8 kHz prompts and the
 * LibriVox recordings, whose 64 kb/s MP3 source carries nothing above 4 kHz), once per candidate;
 * the others once, as the engine hears them. Each phrase of a recording
 * (`phrasesOf`) is scored against every transcript of the half with the matcher search uses
 * (`spokenQuery` / `matchSpoken`, a match below `SPOKEN_WEIGHTS.minScore` is none) and counts right
 * when the best transcript's recording says it. Printed per candidate and band: word error rate,
 * R@1 by this full scan, and the recognizer's CPU seconds. `--search "ARGS"`: other search settings
 * than the engine's SEARCH_ARGS for every recording (e.g. `--search "-fwdflat no -bestpath no
 * -topn 2 -maxhmmpf 1500 -maxwpf 5"`; docs/speech.md "Where the cost goes"). Only ever run it on
 * the tuning half.
 */
import { streamPcm } from '../src/media/audio.js';
import { AUDIO_RULE } from '../src/speech/analyzer.js';
import { isNarrowband, LevelMeter } from '../src/speech/levels.js';
import { matchSpoken, spokenQuery, type SpokenQuery } from '../src/speech/match.js';
import { soundGrams, soundKey, spokenWords } from '../src/speech/phonetic.js';
import { childrenCpuSeconds } from '../bench/util.js';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withCmninit } from '../src/speech/narrowband.js';
import { findPocketsphinx, PocketsphinxEngine } from '../src/speech/pocketsphinx.js';
import { SPOKEN_WEIGHTS } from '../src/speech/search.js';
import type { SpokenWord } from '../src/speech/types.js';
import { pool } from './clips.js';
import { loadSpeechItems, phrasesOf, saysPhrase, wordErrors, type SpeechItem } from './speech-data.js';
import type { Half } from './split.js';

/** The acoustic model pocketsphinx-en-us installs (its feat.params is the starting point of a candidate's). */
const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us/en-us';

/**
 * Every item's words; `narrowbandArgs`: the recognizer's options for narrowband audio (undefined:
 * the engine's own); `searchArgs`: its search settings (undefined: SEARCH_ARGS).
 */
export async function transcribeAll(items: SpeechItem[], narrowbandArgs: string[] | undefined, jobs: number, narrow: Set<string>, searchArgs?: string[]): Promise<Map<string, SpokenWord[]>> {
  const engine = new PocketsphinxEngine(findPocketsphinx()!, { narrowbandArgs, searchArgs });
  const out = await pool(items, jobs, async (it) => {
    const words: SpokenWord[] = [];
    await engine.transcribe(streamPcm(it.file), (w) => words.push(w), { narrowband: narrow.has(it.name) });
    return [it.name, words] as const;
  });
  return new Map(out);
}

export interface BandFigures {
  items: number;
  phrases: number;
  r_at_1: number;
  /** R@1 when only transcripts sharing an index term with the phrase are candidates (as search finds them through the keyword index). */
  r_at_1_indexed: number;
  wer: number;
}

/** True when `words` hold one of the query's index terms (a word, a word's sound key, a run of sounds: src/speech/analyzer.ts). */
function reachable(q: SpokenQuery, words: SpokenWord[]): boolean {
  const spelt = words.map((w) => (w.variant ? `${w.w}(${w.variant})` : w.w));
  const have = new Set<string | undefined>([...words.map((w) => w.w), ...spelt.map(soundKey), ...soundGrams(spelt)]);
  return q.terms.some((t) => have.has(t));
}

/** WER and full-scan phrase R@1 of `band`'s recordings, each phrase against every transcript in `heard`. */
export function scoreBand(items: SpeechItem[], heard: Map<string, SpokenWord[]>, band: SpeechItem['band']): BandFigures {
  let errors = 0;
  let refWords = 0;
  let phrases = 0;
  let right = 0;
  let rightIndexed = 0;
  for (const it of items.filter((i) => i.band === band)) {
    const ref = spokenWords(it.transcript);
    errors += wordErrors(ref, (heard.get(it.name) ?? []).map((w) => w.w));
    refWords += ref.length;
    for (const phrase of phrasesOf(it)) {
      const q = spokenQuery(phrase);
      if (!q) continue;
      phrases++;
      let best: { score: number; item: SpeechItem } | undefined;
      let bestIndexed: typeof best;
      for (const other of items) {
        const words = heard.get(other.name) ?? [];
        const m = matchSpoken(q, words);
        if (!m || m.score < SPOKEN_WEIGHTS.minScore) continue;
        if (!best || m.score > best.score) best = { score: m.score, item: other };
        if (reachable(q, words) && (!bestIndexed || m.score > bestIndexed.score)) bestIndexed = { score: m.score, item: other };
      }
      if (best && saysPhrase(best.item.transcript, phrase)) right++;
      if (bestIndexed && saysPhrase(bestIndexed.item.transcript, phrase)) rightIndexed++;
    }
  }
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return { items: items.filter((i) => i.band === band).length, phrases, r_at_1: r3(right / Math.max(1, phrases)), r_at_1_indexed: r3(rightIndexed / Math.max(1, phrases)), wer: r3(errors / Math.max(1, refWords)) };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let half: Half = 'tuning';
  let jobs = 1;
  let search: string[] | undefined;
  const candidates: [string, string[] | undefined][] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--half') half = argv[++i] as Half;
    else if (argv[i] === '--jobs') jobs = Number(argv[++i]);
    else if (argv[i] === '--search') search = argv[++i].split(' ').filter(Boolean);
    else {
      const eq = argv[i].indexOf('=');
      if (eq < 0) {
        candidates.push([argv[i], undefined]);
        continue;
      }
      const args = argv[i].slice(eq + 1).split(' ').filter(Boolean);
      // `-cmninit X` goes in through a copy of the model's feat.params (the program lets it override the command line).
      const c = args.indexOf('-cmninit');
      if (c >= 0) {
        const file = path.join(os.tmpdir(), `vidembed-narrowband-${process.pid}-${i}.feat.params`);
        writeFileSync(file, withCmninit(readFileSync(`${MODEL_DIR}/feat.params`, 'utf8'), args[c + 1].split(',').map(Number)));
        args.splice(c, 2, '-featparams', file);
      }
      candidates.push([argv[i].slice(0, eq), args]);
    }
  }
  if (!candidates.length) candidates.push(['mirror', []], ['adopted', undefined]);
  if (!findPocketsphinx()) throw new Error('pocketsphinx_continuous not found');
  const items = loadSpeechItems().filter((i) => i.half === half);
  // Narrowband as the engine decides it (src/speech/levels.ts), not by the file's rate: the
  // LibriVox recordings (64 kb/s MP3 at the source) carry nothing above 4 kHz either.
  const narrow = new Set<string>();
  for (const it of items) {
    const meter = new LevelMeter();
    for await (const chunk of streamPcm(it.file)) meter.push(chunk);
    if (isNarrowband(meter.levels, AUDIO_RULE.soundDb)) narrow.add(it.name);
  }
  const wide = items.filter((i) => !narrow.has(i.name));
  const phone = items.filter((i) => narrow.has(i.name));
  const wideHeard = await transcribeAll(wide, undefined, jobs, narrow, search);
  const n16 = items.filter((i) => i.band === 'wideband' && narrow.has(i.name)).length;
  const n8 = items.filter((i) => i.band === 'phone' && narrow.has(i.name)).length;
  console.log(`half ${half}: ${n8} of ${items.length - items.filter((i) => i.band === 'wideband').length} 8 kHz prompts and ${n16} of ${items.filter((i) => i.band === 'wideband').length} 16 kHz recordings heard as narrowband`);
  console.log('candidate\tband\tphrases\tR@1\tR@1_indexed\tWER\tcpu_s\targs');
  for (const [name, args] of candidates) {
    const cpu0 = childrenCpuSeconds();
    const heard = await transcribeAll(phone, args, jobs, narrow, search);
    const cpu = childrenCpuSeconds() - cpu0;
    for (const [k, v] of wideHeard) heard.set(k, v);
    const nb = scoreBand(items, heard, 'phone');
    const wb = scoreBand(items, heard, 'wideband');
    // CPU: the recognizer on every recording heard as narrowband (both bands).
    console.log(`${name}\t8k\t${nb.phrases}\t${nb.r_at_1}\t${nb.r_at_1_indexed}\t${nb.wer}\t${cpu.toFixed(1)}\t${args?.join(' ') ?? '(the engine’s)'}`);
    console.log(`${name}\t16k\t${wb.phrases}\t${wb.r_at_1}\t${wb.r_at_1_indexed}\t${wb.wer}\t\t`);
  }
}

if (process.argv[1]?.endsWith('narrowband.js')) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
