/**
 * Part of `bench -- lanes` (`VIDEMBED_BENCH_LANES=parts`): hearing a soundtrack in parts
 * (src/speech/parts.ts) against hearing it whole, on the same talk: the LibriVox recordings back to
 * back, looped to 79.5 s (the lanes bench's soundtrack) and to 240 s. Each is heard by the speech
 * analyzer as the speech lane hears it (nice 10), whole (one pocketsphinx) and in parts (as many
 * at once as the cores), alternated, twice each; the least wall time of each is kept. Quality:
 * the word error rate of each against the reference transcript (the recordings' own, looped the
 * same way), and of the parts' words against the whole's (what the split changed).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { wordErrors } from '../eval/speech-data.js';
import { streamPcm } from '../src/media/audio.js';
import { ffmpegPath } from '../src/media/index.js';
import { SpeechAnalyzer } from '../src/speech/analyzer.js';
import { findPocketsphinx, PocketsphinxEngine } from '../src/speech/pocketsphinx.js';
import { round } from './util.js';

const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';

/** The recordings in order, each with its reference words. */
function recordings(): Array<{ file: string; words: string[]; seconds: number }> {
  const refs = new Map<string, string[]>();
  for (const line of readFileSync(path.join(LIBRIVOX, 'transcription'), 'utf8').split('\n')) {
    const m = /^<s> (.*) <\/s> \((.*)\)$/.exec(line.trim());
    if (m) refs.set(m[2], m[1].split(' '));
  }
  return readdirSync(LIBRIVOX)
    .filter((f) => f.endsWith('.wav'))
    .sort()
    .map((f) => {
      const file = path.join(LIBRIVOX, f);
      // 16 kHz mono s16 WAV: 44-byte header.
      const seconds = (readFileSync(file).length - 44) / 32000;
      return { file, words: refs.get(f.replace(/\.wav$/, '')) ?? [], seconds };
    });
}

/** The talk looped to `seconds` (whole recordings only, so the reference is exact), and its reference words. */
function talk(dir: string, seconds: number): { file: string; ref: string[]; seconds: number } {
  const recs = recordings();
  const list: string[] = [];
  const ref: string[] = [];
  let t = 0;
  for (let i = 0; t + recs[i % recs.length].seconds <= seconds; i++) {
    const r = recs[i % recs.length];
    list.push(`file '${r.file}'`);
    ref.push(...r.words);
    t += r.seconds;
  }
  const listFile = path.join(dir, `talk-${seconds}.txt`);
  writeFileSync(listFile, list.join('\n'));
  const file = path.join(dir, `talk-${seconds}.wav`);
  execFileSync(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', listFile, '-ac', '1', '-ar', '16000', file]);
  return { file, ref, seconds: t };
}

export async function speechInParts(dir: string): Promise<Record<string, unknown>> {
  const program = findPocketsphinx();
  if (!program) return { error: 'pocketsphinx_continuous not found' };
  const analyzer = new SpeechAnalyzer(new PocketsphinxEngine(program));
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  const out: Record<string, unknown> = { cores };
  for (const target of [79.5, 240]) {
    const { file, ref, seconds } = talk(dir, target);
    const hear = async (inParts: boolean) => {
      const t0 = performance.now();
      const h = await analyzer.listen(streamPcm(file, { nice: 10 }), { nice: 10, ...(inParts ? { parts: { durationS: seconds, cores, slots: () => cores } } : {}) });
      return { s: (performance.now() - t0) / 1000, words: (h.transcript?.words ?? []).map((w) => w.w) };
    };
    const whole: Array<{ s: number; words: string[] }> = [];
    const parts: Array<{ s: number; words: string[] }> = [];
    for (let i = 0; i < 2; i++) {
      process.stderr.write(`lanes: ${seconds.toFixed(1)} s of talk, whole, run ${i + 1}...\n`);
      whole.push(await hear(false));
      process.stderr.write(`lanes: ${seconds.toFixed(1)} s of talk, in parts, run ${i + 1}...\n`);
      parts.push(await hear(true));
    }
    const least = (xs: Array<{ s: number }>) => Math.min(...xs.map((x) => x.s));
    const wer = (hyp: string[], against = ref) => round(wordErrors(against, hyp) / Math.max(1, against.length));
    out[`talk_${Math.round(target)}s`] = {
      seconds: round(seconds),
      reference_words: ref.length,
      whole_s: whole.map((r) => round(r.s)),
      parts_s: parts.map((r) => round(r.s)),
      parts_over_whole: round(least(parts) / least(whole)),
      words: { whole: whole.map((r) => r.words.length), parts: parts.map((r) => r.words.length) },
      wer_whole: whole.map((r) => wer(r.words)),
      wer_parts: parts.map((r) => wer(r.words)),
      parts_vs_whole_wer: round(wordErrors(whole[0].words, parts[0].words) / Math.max(1, whole[0].words.length)),
    };
  }
  return out;
}
