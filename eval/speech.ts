/**
 * `npm run eval -- speech`: spoken-phrase search over the recorded speech of `../shared/eval/speech`
 * through the real engine and recognizer. Every recording becomes a clip (footage with the
 * recording as its soundtrack, after 1 s of silence); all of them go into one collection per
 * condition (clean, pink noise at 20 dB and 10 dB SNR); each phrase of 2–4 words of a reference
 * transcript is searched with `said`, among every clip. Reported per half and per band (16 kHz
 * recordings apart from the 8 kHz telephone prompts): R@1 (the top result's reference says the
 * phrase), the share of hits whose `start` lies within 1 s of the phrase's first word (times from
 * forced alignment of the reference transcript with the same recognizer), and the word error rate.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalEngine } from '../src/runtime/engine.js';
import { Worker } from '../src/runtime/worker.js';
import { streamPcm } from '../src/media/audio.js';
import { round3 as round } from '../src/media/kernels/index.js';
import { spokenWords } from '../src/speech/phonetic.js';
import { findPocketsphinx, PocketsphinxEngine } from '../src/speech/pocketsphinx.js';
import type { SpokenWord } from '../src/speech/types.js';
import { pool, tempDir } from './clips.js';
import { loadSpeechItems, makeSpeechClip, phrasesOf, saysPhrase, wordErrors, type SpeechItem } from './speech-data.js';
import { HALVES, type Half } from './split.js';

const LEAD = 1;
export const SPEECH_CONDITIONS = [
  { name: 'clean', snrDb: undefined },
  { name: 'snr20', snrDb: 20 },
  { name: 'snr10', snrDb: 10 },
] as const;

export interface SpeechFigures {
  items: number;
  phrases: number;
  r_at_1: number;
  /** Hits (the phrase's own clip first) whose start is within 1 s of the phrase's first word. */
  start_within_1s: number;
  /** Hits with a reference time for their phrase (forced alignment found its first word). */
  timed_hits: number;
  wer: number;
}

export type SpeechEval = Record<string, Record<Half, Record<'wideband' | 'phone', SpeechFigures>>>;

/** The reference words' times in a recording: the recognizer forced to the transcript (words in order, each optional). */
async function forcedAlign(item: SpeechItem, dir: string): Promise<SpokenWord[]> {
  const words = spokenWords(item.transcript).map((w) => w.replace(/[^a-z']/g, '')).filter(Boolean);
  const grammar = join(dir, `${item.name}.jsgf`);
  writeFileSync(grammar, `#JSGF V1.0;\ngrammar g;\npublic <s> = ${words.map((w) => `[${w}]`).join(' ')};\n`);
  const engine = new PocketsphinxEngine(findPocketsphinx()!, { extraArgs: ['-jsgf', grammar] });
  const out: SpokenWord[] = [];
  try {
    await engine.transcribe(streamPcm(item.file), (w) => out.push(w), { narrowband: item.band === 'phone' });
  } catch {
    return []; // a word the dictionary lacks: no reference times for this one
  }
  return out;
}

/** Where a phrase's first word is said in the reference alignment (the first place its words follow in order). */
function phraseTime(aligned: SpokenWord[], phrase: string): number | undefined {
  const p = phrase.split(' ');
  for (let i = 0; i + p.length <= aligned.length; i++) {
    if (p.every((w, k) => aligned[i + k].w === w)) return aligned[i].start;
  }
  return undefined;
}

export async function evaluateSpeech(opts: { home?: string; conditions?: string[]; halves?: readonly Half[]; log?: (s: string) => void } = {}): Promise<SpeechEval> {
  const log = opts.log ?? (() => {});
  if (!findPocketsphinx()) throw new Error('pocketsphinx_continuous not found: apt-get install pocketsphinx pocketsphinx-en-us');
  const items = loadSpeechItems();
  const home = opts.home ?? tempDir('vidembed-eval-speech-').dir;
  const clipsDir = join(home, 'clips');
  mkdirSync(clipsDir, { recursive: true });
  log(`speech: forced alignment of ${items.length} reference transcripts…`);
  const aligned = new Map(await pool(items, 2, async (it) => [it.name, await forcedAlign(it, clipsDir)] as const));
  const engine = new LocalEngine({ home: join(home, 'library') });
  const out: SpeechEval = {};
  try {
    for (const cond of SPEECH_CONDITIONS.filter((c) => !opts.conditions || opts.conditions.includes(c.name))) {
      const name = `speech-${cond.name}`;
      const existing = (await engine.listCollections()).find((c) => c.name === name);
      const col = existing?.id ?? (await engine.createCollection({ name })).collection_id;
      const ids = new Map<string, string>();
      const listed = await engine.listVideos(col, { limit: 1000 });
      for (const v of listed) ids.set(v.filename.replace(/\.mp4$/, ''), v.video_id);
      const missing = items.filter((it) => !ids.has(it.name));
      log(`speech ${cond.name}: making ${missing.length} clips…`);
      await pool(missing, 2, async (it) => {
        const file = join(clipsDir, `${cond.name}-${it.name}.mp4`);
        if (!existsSync(file)) await makeSpeechClip(it.file, file, { lead: LEAD, snrDb: cond.snrDb });
        ids.set(it.name, (await engine.uploadVideo(col, { path: file, filename: `${it.name}.mp4` })).video_id);
      });
      log(`speech ${cond.name}: processing ${missing.length} clips…`);
      await new Worker(engine, { idleExitMs: 0, pollMs: 50 }).run(new AbortController().signal);
      const byVideo = new Map([...ids].map(([n, id]) => [id, items.find((i) => i.name === n)!]));
      const heard = new Map<string, string[]>();
      for (const it of items) heard.set(it.name, (await engine.videoTranscript(ids.get(it.name)!)).words.map((w) => w.w));
      out[cond.name] = {} as Record<Half, Record<'wideband' | 'phone', SpeechFigures>>;
      // `--half tuning`: only the tuning half's figures are computed (what tuning may look at).
      for (const half of opts.halves ?? HALVES) {
        out[cond.name][half] = {} as Record<'wideband' | 'phone', SpeechFigures>;
        for (const band of ['wideband', 'phone'] as const) {
          const mine = items.filter((i) => i.half === half && i.band === band);
          let hits = 0;
          let phrases = 0;
          let timed = 0;
          let within = 0;
          let errs = 0;
          let refWords = 0;
          for (const it of mine) {
            const ref = spokenWords(it.transcript);
            errs += wordErrors(ref, heard.get(it.name) ?? []);
            refWords += ref.length;
            for (const phrase of phrasesOf(it)) {
              phrases++;
              const res = await engine.search(col, { said: phrase, top_k: 5 });
              const top = res.results[0];
              const topItem = top && byVideo.get(top.video_id);
              if (!topItem || !saysPhrase(topItem.transcript, phrase)) continue;
              hits++;
              const at = topItem === it ? phraseTime(aligned.get(it.name) ?? [], phrase) : undefined;
              if (at === undefined) continue;
              timed++;
              if (Math.abs(top.start - (LEAD + at)) <= 1) within++;
            }
          }
          out[cond.name][half][band] = {
            items: mine.length,
            phrases,
            r_at_1: round(hits / Math.max(1, phrases)),
            start_within_1s: round(within / Math.max(1, timed)),
            timed_hits: timed,
            wer: round(errs / Math.max(1, refWords)),
          };
        }
      }
      log(`speech ${cond.name}: ${JSON.stringify(out[cond.name])}`);
    }
  } finally {
    await engine.close();
  }
  return out;
}

