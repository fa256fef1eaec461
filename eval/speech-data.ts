/**
 * The recorded speech of `../shared/eval/speech` (see its README): the LibriVox and card-name
 * recordings of Debian's pocketsphinx-testdata (16 kHz) and the telephone prompts of `extra/`
 * (8 kHz), each with its reference transcript, split into tuning and check halves by file name;
 * and the spoken phrases the eval searches for (2–4 words of a reference transcript).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { spokenWords } from '../src/speech/phonetic.js';
import { requireEvalDir } from './catalog.js';
import { halfOf, type Half } from './split.js';

export interface SpeechItem {
  name: string;
  file: string;
  transcript: string;
  /** `wideband` (16 kHz recordings) or `phone` (8 kHz prompts). */
  band: 'wideband' | 'phone';
  half: Half;
  /** The Debian package the recording comes from (whole sources are held out when fitting). */
  source: string;
}

const TESTDATA = '/usr/share/pocketsphinx/test/data';

export class MissingSpeechDataError extends Error {}

/** Every recording with its transcript; throws naming what is missing. */
export function loadSpeechItems(): SpeechItem[] {
  const dir = join(requireEvalDir(), 'speech');
  const items: SpeechItem[] = [];
  const tsv = readFileSync(join(dir, 'speech.tsv'), 'utf8').trim().split('\n').slice(1);
  for (const line of tsv) {
    const [path, transcript, source] = line.split('\t');
    items.push({ name: basename(path), file: join(dir, path), transcript, band: 'phone', half: halfOf(basename(path)), source: source ?? 'speech.tsv' });
  }
  if (!existsSync(join(TESTDATA, 'librivox'))) {
    throw new MissingSpeechDataError(`${TESTDATA} is missing: apt-get install pocketsphinx-testdata`);
  }
  const fromList = (sub: string, list: string, file: (id: string) => string) => {
    for (const line of readFileSync(join(TESTDATA, sub, list), 'utf8').trim().split('\n')) {
      const m = /^<s>\s*(.*?)\s*<\/s>\s*\((.+)\)$/.exec(line.trim());
      if (!m) continue;
      const name = `${sub}-${m[2]}.wav`;
      items.push({ name, file: join(TESTDATA, sub, file(m[2])), transcript: m[1], band: 'wideband', half: halfOf(name), source: 'pocketsphinx-testdata' });
    }
  };
  fromList('librivox', 'transcription', (id) => `${id}.wav`);
  fromList('cards', 'cards.transcription', (id) => `${id}.wav`);
  return items;
}

const LIGHT = new Set('a an the of to and or in on at is it'.split(' '));

/**
 * The phrases searched for in one recording: up to `perItem` runs of 2–4 words of its reference
 * transcript (positions and lengths from a hash of the name, so the set never changes), each
 * holding at least one content word and two letters' worth of sound.
 */
export function phrasesOf(item: SpeechItem, perItem = 3): string[] {
  const words = spokenWords(item.transcript);
  const out: string[] = [];
  for (let k = 0; out.length < perItem && k < perItem * 4; k++) {
    const h = createHash('sha256').update(`${item.name}:${k}`).digest();
    const len = 2 + (h[0] % 3);
    if (words.length < len) continue;
    const at = h.readUInt16BE(1) % (words.length - len + 1);
    const run = words.slice(at, at + len);
    if (run.every((w) => LIGHT.has(w))) continue;
    const phrase = run.join(' ');
    if (!out.includes(phrase)) out.push(phrase);
  }
  return out;
}

/** True when `phrase` (spoken words) stands in `transcript`. */
export function saysPhrase(transcript: string, phrase: string): boolean {
  return ` ${spokenWords(transcript).join(' ')} `.includes(` ${phrase} `);
}

/** Word error rate of `hyp` against `ref` (word-level edit distance / reference words). */
export function wordErrors(ref: string[], hyp: string[]): number {
  const d = Array.from({ length: ref.length + 1 }, (_, i) => [i, ...new Array<number>(hyp.length).fill(0)]);
  for (let j = 1; j <= hyp.length; j++) d[0][j] = j;
  for (let i = 1; i <= ref.length; i++) {
    for (let j = 1; j <= hyp.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    }
  }
  return d[ref.length][hyp.length];
}

export interface SpeechClipOptions {
  /** Seconds of silence before the speech starts (default 0). */
  lead?: number;
  /** Pink noise mixed in at this signal-to-noise ratio, dB (default none). */
  snrDb?: number;
  /** Audio channels and sample rate of the clip's track (default 1 channel at 44.1 kHz, AAC). */
  channels?: number;
  sampleRate?: number;
  /** Seconds of footage after the speech ends (default 0.5). */
  tail?: number;
}

/**
 * A clip with `speech` under footage: a small generated test picture (ffmpeg `testsrc2`, 160x120 at
 * 5 fps, so the picture's analysis costs little) and the recording as its soundtrack, optionally
 * after `lead` seconds of silence and under pink noise at a known SNR. Returns the clip's path.
 */
export async function makeSpeechClip(speech: string, out: string, opts: SpeechClipOptions = {}): Promise<string> {
  const { runFfmpeg } = await import('../src/media/ffmpeg.js');
  const { probeDetails } = await import('../src/media/probe.js');
  const lead = opts.lead ?? 0;
  const dur = (await probeDetails(speech)).durationSec + lead + (opts.tail ?? 0.5);
  const rate = opts.sampleRate ?? 44100;
  const ch = opts.channels ?? 1;
  let graph = `[1:a]aresample=${rate},aformat=channel_layouts=mono,adelay=${Math.round(lead * 1000)},apad,atrim=0:${dur.toFixed(3)}[s]`;
  if (opts.snrDb !== undefined) {
    // Noise level relative to the speech's RMS: measured with volumedetect first.
    const meanDb = async (input: string[]) => {
      const vd = await runFfmpeg([...input, '-af', 'volumedetect', '-f', 'null', '-'], { stdout: false });
      return Number(/mean_volume: (-?[\d.]+) dB/.exec(vd.stderr)?.[1] ?? NaN);
    };
    const noise = `anoisesrc=color=pink:sample_rate=${rate}:amplitude=1:seed=7`;
    const gain = (await meanDb(['-i', speech])) - opts.snrDb - (await meanDb(['-f', 'lavfi', '-i', `${noise}:duration=5`]));
    graph += `;${noise},atrim=0:${dur.toFixed(3)},volume=${gain.toFixed(2)}dB[n];[s][n]amix=inputs=2:duration=first,volume=2[m]`;
  } else graph += ';[s]anull[m]';
  graph += `;[m]aformat=channel_layouts=${ch === 1 ? 'mono' : ch === 2 ? 'stereo' : ch === 6 ? '5.1' : 'mono'}[a]`;
  const args = ['-y', '-v', 'error', '-f', 'lavfi', '-i', `testsrc2=size=160x120:rate=5:duration=${dur.toFixed(3)}`, '-i', speech, '-filter_complex', graph, '-map', '0:v', '-map', '[a]'];
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ar', String(rate), '-t', dur.toFixed(3), out);
  const res = await runFfmpeg(args, { stdout: false });
  if (res.code !== 0) throw new Error(`could not make ${out}: ${res.stderr.trim().split('\n').pop()}`);
  return out;
}
