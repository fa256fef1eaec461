/**
 * CMU Pocketsphinx as a speech engine: the system program `pocketsphinx_continuous` (Debian:
 * `apt-get install pocketsphinx pocketsphinx-en-us`), fed 16 kHz mono PCM on its stdin, printing
 * each utterance's words with start, end and posterior (`-time yes`). Nothing is held in memory but
 * the words: the audio streams through.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { VidembedError } from '../api/errors.js';
import { pocketsphinxOverride, speechStallMs } from '../env.js';
import { lowerPriority, StderrTail } from '../media/ffmpeg.js';
import { round3 } from '../media/kernels/index.js';
import { NARROWBAND_VERSION, narrowbandArgs } from './narrowband.js';
import { isFiller, type PcmChunks, type SpeechEngine, type SpokenWord, type TranscribeOptions } from './types.js';

const PROGRAM = 'pocketsphinx_continuous';
/** The acoustic and language model pocketsphinx-en-us installs, and the search settings below (the version). */
const MODEL = 'en-us-5prealpha-fast1';

/**
 * A faster search than the program's default: one pass (no flat-lexicon rescoring, no lattice
 * best path), the 2 best Gaussians, at most 3000 HMMs and 5 words per frame. On the tuning half of
 * the eval's recordings it transcribed 2.3x faster (27 s instead of 62 s of CPU) and found spoken
 * phrases as well or better (R@1 16 kHz 0.86 → 0.94, 8 kHz 0.62 → 0.62) for a word error rate a
 * little higher (0.44 → 0.49, 0.69 → 0.79): search needs the sounds more than the spelling.
 */
export const SEARCH_ARGS = ['-fwdflat', 'no', '-bestpath', 'no', '-topn', '2', '-maxhmmpf', '3000', '-maxwpf', '5'];

/**
 * Silence before the audio: the recognizer's voice detector needs a moment of it to find where
 * the first utterance starts (a recording that starts mid-word otherwise loses its first words).
 */
const LEAD_S = 1;

/**
 * Telephone-band audio (nothing above ~4 kHz) decodes as noise with the wideband model. Mirroring
 * its spectrum into the empty upper band (x[n]·(1 + (−1)^n), what zero-insertion upsampling from
 * 8 kHz gives) brings its features close enough to the model's (docs/speech.md has the figures).
 */
export function mirrorBand(chunk: Buffer, parity: number): Buffer {
  const out = Buffer.allocUnsafe(chunk.length);
  for (let i = 0; i + 1 < chunk.length; i += 2) {
    const odd = ((i >> 1) + parity) & 1;
    out.writeInt16LE(odd ? 0 : Math.max(-32768, Math.min(32767, chunk.readInt16LE(i) * 2)), i);
  }
  return out;
}

/** The program's path: VIDEMBED_POCKETSPHINX, else the first on PATH; undefined when missing. */
export function findPocketsphinx(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const override = pocketsphinxOverride(env);
  if (override) return existsSync(override) ? override : undefined;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, PROGRAM);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** One line of `-time yes` output: `word start end posterior`. */
const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/;

/** Parses one output line into a word (fillers and hypothesis lines give undefined). */
export function parseWordLine(line: string): SpokenWord | undefined {
  const m = WORD_LINE.exec(line.trim());
  if (!m || isFiller(m[1])) return undefined;
  const v = /^(.*)\((\d+)\)$/.exec(m[1]);
  const w: SpokenWord = { w: (v ? v[1] : m[1]).toLowerCase(), start: Number(m[2]), end: Number(m[3]), conf: Math.round(Number(m[4]) * 1000) / 1000 };
  if (v) w.variant = Number(v[2]);
  return w;
}

export class PocketsphinxEngine implements SpeechEngine {
  readonly name = 'pocketsphinx';
  readonly version = `pocketsphinx/${MODEL}+${NARROWBAND_VERSION}`;
  readonly language = 'en';
  readonly splits = true;

  constructor(
    private readonly program: string,
    /**
     * `extraArgs`: further options to the program (the eval's forced alignment passes `-jsgf`);
     * `searchArgs`: other search settings than SEARCH_ARGS (eval/narrowband.ts --search compares them);
     * `narrowbandArgs`: the options for telephone-band audio in place of src/speech/narrowband.ts's
     * (eval/narrowband.ts compares candidates).
     */
    private readonly opts: { stallMs?: number; extraArgs?: string[]; searchArgs?: string[]; narrowbandArgs?: string[] } = {},
  ) {}

  transcribe(pcm: PcmChunks, onWord: (w: SpokenWord) => void, { signal, narrowband, nice }: TranscribeOptions = {}): Promise<void> {
    let band: string[];
    try {
      band = narrowband ? (this.opts.narrowbandArgs ?? narrowbandArgs()) : [];
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    const args = ['-infile', '/dev/stdin', '-logfn', '/dev/null', '-time', 'yes', ...(this.opts.searchArgs ?? SEARCH_ARGS), ...band, ...(this.opts.extraArgs ?? [])];
    const stallMs = this.opts.stallMs ?? speechStallMs();
    return new Promise<void>((resolve, reject) => {
      // The program opens its -infile by name, and /dev/stdin cannot be opened when stdin is a
      // socket (as node's pipes are): `cat` turns it into a real pipe. The group (detached) is
      // killed as one; if this process dies, cat sees the end of its input and both exit.
      const child = spawn('sh', ['-c', 'cat | "$0" "$@"', this.program, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      // The shell forks cat and the recognizer after it starts: they inherit its priority.
      if (nice && child.pid) lowerPriority(child.pid, nice);
      const kill = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      };
      const err = new StderrTail(16 * 1024);
      let settled = false;
      let pending = '';
      let timer: NodeJS.Timeout | undefined;
      const finish = (e?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (e) {
          kill();
          reject(e);
        } else resolve();
      };
      // A recognizer that neither reads nor writes for stallMs is hung: stop it.
      const alive = () => {
        clearTimeout(timer);
        timer = setTimeout(() => finish(new VidembedError(`${PROGRAM} stopped responding (no progress for ${Math.round(stallMs / 1000)} s)`)), stallMs);
        timer.unref?.();
      };
      const onAbort = () => finish(signal?.reason ?? new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      alive();
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (s: string) => {
        alive();
        pending += s;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          const w = parseWordLine(line);
          if (w) onWord(shift(w));
        }
      });
      child.stderr.on('data', (b: Buffer) => err.push(b));
      child.on('error', (e) => finish(new VidembedError(`cannot run ${PROGRAM}: ${e.message}`, { cause: e })));
      child.on('close', (code, sig) => {
        const w = parseWordLine(pending);
        if (w) onWord(shift(w));
        if (code === 0) finish();
        else {
          const last = err.text().trim().split('\n').pop();
          finish(new VidembedError(`${PROGRAM} failed (${sig ?? `exit code ${String(code)}`})${last ? `: ${last}` : ''}`));
        }
      });
      child.stdin.on('error', () => {}); // it died: 'close' says why
      const shift = (w: SpokenWord): SpokenWord => ({ ...w, start: Math.max(0, round3(w.start - LEAD_S)), end: Math.max(0, round3(w.end - LEAD_S)) });
      void (async () => {
        try {
          child.stdin.write(Buffer.alloc(LEAD_S * 16000 * 2));
          let samples = 0;
          for await (const raw of pcm) {
            if (settled) return;
            alive();
            const chunk = narrowband ? mirrorBand(raw, samples & 1) : raw;
            samples += raw.length >> 1;
            if (!child.stdin.write(chunk)) {
              // Wait for the pipe to drain, or for the recognizer to end ('close' settles it).
              await new Promise<void>((r) => {
                const done = () => {
                  child.stdin.off('drain', done);
                  child.off('close', done);
                  r();
                };
                child.stdin.once('drain', done);
                child.once('close', done);
              });
            }
          }
          child.stdin.end();
        } catch (e) {
          finish(e);
        }
      })();
    });
  }
}

