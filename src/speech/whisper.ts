/**
 * whisper.cpp as a speech engine, through the native module of whisper.node
 * (`@fugood/node-whisper-linux-x64`, an optional dependency: npm installs it on Linux x64; elsewhere
 * point VIDEMBED_WHISPER_BINDING at the platform's `index.node`). The model is a ggml file the user
 * pulls (`vidembed models pull whisper-base-en`, manifests in models/ with pinned URL and sha256).
 *
 * The audio streams through in windows of at most 30 s (whisper's own context), cut at the
 * quietest moment near the end of each window so that no word is split; windows without sound
 * are skipped (whisper invents words in silence). Memory holds one window (~1 MB) whatever the
 * length of the video. Transcription runs on the binding's native thread, off the event loop.
 */
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ModelError, VidembedError } from '../api/errors.js';
import { speechStallMs, whisperBindingOverride, whisperThreads } from '../env.js';
import { round3 } from '../media/kernels/index.js';
import { loadAllManifests, loadManifests, modelsDir, type ModelManifest } from '../models/manifest.js';
import { readGgmlWhisperHeader, type GgmlWhisperHeader } from './ggml.js';
import { isFiller, type PcmChunks, type SpeechEngine, type SpokenWord, type TranscribeOptions } from './types.js';

const RATE = 16000;
/** whisper hears 30 s at a time; a window is cut at the quietest 100 ms of its last CUT_SEARCH_S. */
const WINDOW_S = 30;
const CUT_SEARCH_S = 5;
const FRAME = RATE / 10;
/** A window whose loudest 100 ms is below this (dBFS) has nothing to hear. */
const SOUND_DB = -45;

/** The native module's surface that is used here (whisper.node 1.1). */
export interface WhisperBinding {
  WhisperContext: {
    new (opts: { filePath: string; useGpu?: boolean }): NativeContext | Promise<NativeContext>;
    /**
     * whisper.cpp prints every model load to stderr unless its log goes to a callback; the callback
     * keeps the process alive until the log is toggled off again.
     */
    toggleNativeLog?(enable: boolean, callback?: (level: string, text: string) => void): void;
  };
}
interface NativeSegment {
  text: string;
  /** Milliseconds from the start of the data. */
  t0: number;
  t1: number;
}
interface NativeContext {
  transcribeData(
    data: ArrayBuffer,
    opts: Record<string, unknown>,
  ): { stop: () => Promise<void>; promise: Promise<{ result: string; segments: NativeSegment[]; isAborted: boolean }> };
  release(): Promise<void>;
}

export const WHISPER_BINDING_PACKAGE = `@fugood/node-whisper-${process.platform}-${process.arch}`;

let bindingCache: { binding?: WhisperBinding; reason?: string; key: string } | undefined;

/** The native module, or why it cannot be loaded (cached per process and override). */
export function loadWhisperBinding(env: NodeJS.ProcessEnv = process.env): { binding?: WhisperBinding; reason?: string } {
  const override = whisperBindingOverride(env);
  const key = override ?? WHISPER_BINDING_PACKAGE;
  if (bindingCache?.key === key) return bindingCache;
  const require = createRequire(import.meta.url);
  try {
    const mod = require(override ? path.resolve(override) : WHISPER_BINDING_PACKAGE) as Partial<WhisperBinding>;
    if (typeof mod?.WhisperContext !== 'function') throw new Error('it has no WhisperContext');
    bindingCache = { binding: mod as WhisperBinding, key };
  } catch (err) {
    const what = override ? `VIDEMBED_WHISPER_BINDING (${override})` : WHISPER_BINDING_PACKAGE;
    bindingCache = { reason: `the whisper.cpp binding ${what} cannot be loaded: ${firstLine(err)}`, key };
  }
  return bindingCache;
}

/** Forgets the cached binding (tests that change VIDEMBED_WHISPER_BINDING). */
export function resetWhisperBinding(): void {
  bindingCache = undefined;
}

export interface WhisperModel {
  manifest: ModelManifest;
  file: string;
  language: string;
}

const headers = new Map<string, { stamp: string; header?: GgmlWhisperHeader; error?: string }>();

function headerOf(file: string, name: string): { header?: GgmlWhisperHeader; error?: string } {
  const st = statSync(file);
  const stamp = `${st.size}:${st.mtimeMs}`;
  const hit = headers.get(file);
  if (hit?.stamp === stamp) return hit;
  let got: { header?: GgmlWhisperHeader; error?: string };
  try {
    got = { header: readGgmlWhisperHeader(file, name) };
  } catch (err) {
    got = { error: firstLine(err) };
  }
  headers.set(file, { stamp, ...got });
  return got;
}

/**
 * The best pulled whisper model (largest first: base.en before tiny.en), or why none can be used:
 * not pulled, a file that is not a whisper model, or one without weights (whisper.cpp's test file).
 */
export function findWhisperModel(env: NodeJS.ProcessEnv = process.env, language?: string): { model?: WhisperModel; reason?: string } {
  let manifests: ModelManifest[];
  try {
    manifests = loadAllManifests(env);
  } catch {
    manifests = loadManifests(); // a broken VIDEMBED_MANIFESTS_DIR must not hide the shipped models
  }
  const candidates = manifests
    .filter((m) => m.kind === 'speech' && m.speech?.engine === 'whisper' && (!language || m.speech.language === language))
    .sort((a, b) => totalBytes(b) - totalBytes(a));
  const problems: string[] = [];
  for (const m of candidates) {
    const f = m.files.find((x) => x.role === 'model');
    if (!f) continue;
    const file = path.join(modelsDir(env), m.id, f.path);
    if (!existsSync(file) || statSync(file).size !== f.bytes) continue;
    const { header, error } = headerOf(file, `${m.id}/${f.path}`);
    if (error) problems.push(error);
    else if (!header!.hasWeights) problems.push(`${m.id}/${f.path} has no weights (a test file): it cannot hear anything`);
    else return { model: { manifest: m, file, language: m.speech!.language } };
  }
  if (problems.length) return { reason: problems.join('; ') };
  return { reason: candidates.length ? `no whisper model pulled (vidembed models pull ${candidates[candidates.length - 1].id})` : 'no whisper model is known for this language' };
}

const totalBytes = (m: ModelManifest) => m.files.reduce((s, f) => s + f.bytes, 0);

export interface WhisperEngineOptions {
  /** The model file (ggml). */
  file: string;
  /** Model id for the version string (`whisper-base-en`). */
  modelId: string;
  /** sha256 of the model file (its first 12 digits go into the version). */
  sha256: string;
  language: string;
  binding: WhisperBinding;
  threads?: number;
  /** No progress for this long (ms) stops the engine (default VIDEMBED_SPEECH_TIMEOUT_S). */
  stallMs?: number;
}

export class WhisperEngine implements SpeechEngine {
  readonly name = 'whisper';
  readonly version: string;
  readonly language: string;

  constructor(private readonly opts: WhisperEngineOptions) {
    this.version = `whisper/${opts.modelId}-${opts.sha256.slice(0, 12)}`;
    this.language = opts.language;
  }

  async transcribe(pcm: PcmChunks, onWord: (w: SpokenWord) => void, opts: TranscribeOptions = {}): Promise<void> {
    const { signal } = opts;
    signal?.throwIfAborted();
    const log = NativeLog.open(this.opts.binding);
    let ctx: NativeContext;
    try {
      ctx = await new this.opts.binding.WhisperContext({ filePath: this.opts.file, useGpu: false });
    } catch (err) {
      await new Promise((r) => setTimeout(r, 20)); // the log arrives through the event loop
      const why = log.lastProblem() ?? firstLine(err);
      log.close();
      throw new ModelError(`whisper cannot load ${path.basename(this.opts.file)}: ${why}`, { cause: err });
    }
    try {
      const words = new WordJoiner(onWord);
      let offset = 0; // samples before the window
      let held: Buffer = Buffer.alloc(0);
      const windowBytes = WINDOW_S * RATE * 2;
      const hear = async (win: Buffer) => {
        if (loudestDb(win) >= SOUND_DB) await this.window(ctx, win, offset / RATE, words, signal);
        offset += win.length >> 1;
      };
      for await (const chunk of pcm) {
        signal?.throwIfAborted();
        held = held.length ? Buffer.concat([held, chunk]) : chunk;
        while (held.length >= windowBytes) {
          const cut = quietestCut(held.subarray(0, windowBytes));
          await hear(held.subarray(0, cut));
          held = Buffer.from(held.subarray(cut));
        }
      }
      if (held.length >= FRAME * 2) await hear(held);
      words.flush();
    } finally {
      await ctx.release().catch(() => {});
      log.close();
    }
  }

  /** Transcribes one window; words are shifted by `at` seconds. */
  private async window(ctx: NativeContext, win: Buffer, at: number, words: WordJoiner, signal?: AbortSignal): Promise<void> {
    const data = win.buffer.slice(win.byteOffset, win.byteOffset + win.length) as ArrayBuffer;
    const job = ctx.transcribeData(data, {
      language: this.language,
      tokenTimestamps: true,
      maxLen: 1, // one token per segment: word times
      temperature: 0,
      maxThreads: this.opts.threads ?? whisperThreads(),
    });
    const stallMs = this.opts.stallMs ?? speechStallMs();
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => void job.stop().catch(() => {});
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await Promise.race([
        job.promise,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            reject(new VidembedError(`whisper stopped responding (no result for ${Math.round(stallMs / 1000)} s)`));
            void job.stop().catch(() => {});
          }, stallMs);
          timer.unref?.();
        }),
      ]);
      signal?.throwIfAborted();
      if (res.isAborted) throw new VidembedError('whisper stopped before the end of the audio');
      for (const s of res.segments) words.push(s.text, at + s.t0 / 1000, at + s.t1 / 1000);
    } catch (err) {
      if (err instanceof VidembedError || signal?.aborted) throw err;
      throw new VidembedError(`whisper failed: ${firstLine(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * whisper.cpp's log, kept (the last lines) instead of printed while any engine is at work: it says
 * why a model does not load ("invalid model data (bad magic)").
 */
class NativeLog {
  private static users = 0;
  private static tail: string[] = [];
  private closed = false;

  private constructor(private readonly binding: WhisperBinding) {}

  static open(binding: WhisperBinding): NativeLog {
    if (NativeLog.users++ === 0) {
      NativeLog.tail = [];
      binding.WhisperContext.toggleNativeLog?.(true, (_level, text) => {
        NativeLog.tail.push(...text.split('\n').filter(Boolean));
        NativeLog.tail.splice(0, NativeLog.tail.length - 20);
      });
    }
    return new NativeLog(binding);
  }

  /** The last line that reports a failure, without its function-name prefix. */
  lastProblem(): string | undefined {
    const line = [...NativeLog.tail].reverse().find((l) => /invalid|failed to (open|read)|error|unknown|mismatch/i.test(l) && !/failed to load model$/.test(l));
    return line?.replace(/^\w+: /, '').trim();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (--NativeLog.users === 0) this.binding.WhisperContext.toggleNativeLog?.(false);
  }
}

/**
 * whisper's segments are tokens: one starting with a space starts a word, one without continues
 * the word before it (" Dash" + "wood"). Punctuation goes; bracketed and parenthesised notes
 * (`[BLANK_AUDIO]`, `(music)`) are not words.
 */
export class WordJoiner {
  private cur: { w: string; start: number; end: number } | undefined;
  constructor(private readonly onWord: (w: SpokenWord) => void) {}

  push(token: string, start: number, end: number): void {
    if (!token) return;
    const startsWord = /^\s/.test(token) || !this.cur;
    if (startsWord) this.flush();
    if (!this.cur) this.cur = { w: token.trim(), start, end };
    else {
      this.cur.w += token.trim();
      this.cur.end = end;
    }
  }

  flush(): void {
    const c = this.cur;
    this.cur = undefined;
    if (!c) return;
    if (/^[[(].*[\])]$/.test(c.w) || isFiller(c.w)) return;
    for (const w of c.w.toLowerCase().replace(/[^\p{L}\p{N}'\s-]/gu, ' ').split(/[\s-]+/)) {
      const word = w.replace(/^'+|'+$/g, '');
      if (word) this.onWord({ w: word, start: round3(Math.max(0, c.start)), end: round3(Math.max(c.start, c.end)), conf: 1 });
    }
  }
}

/** Mean square of `n` samples of s16le PCM from sample `s`, in [0, 1]. */
function meanSquare(pcm: Buffer, s: number, n: number): number {
  let e = 0;
  for (let i = s; i < s + n; i++) {
    const v = pcm.readInt16LE(i * 2) / 32768;
    e += v * v;
  }
  return e / n;
}

/** Byte offset (even) of the middle of the quietest 100 ms in the last CUT_SEARCH_S of a full window. */
export function quietestCut(win: Buffer): number {
  const samples = win.length >> 1;
  let best = samples;
  let bestEnergy = Infinity;
  for (let s = Math.max(0, samples - CUT_SEARCH_S * RATE); s + FRAME <= samples; s += FRAME / 2) {
    const e = meanSquare(win, s, FRAME);
    if (e < bestEnergy) {
      bestEnergy = e;
      best = s + FRAME / 2;
    }
  }
  return best * 2;
}

/** The loudest 100 ms of a buffer, in dBFS (−Infinity for digital silence). */
export function loudestDb(pcm: Buffer): number {
  const samples = pcm.length >> 1;
  let loudest = 0;
  for (let s = 0; s < samples; s += FRAME) loudest = Math.max(loudest, meanSquare(pcm, s, Math.min(FRAME, samples - s)));
  return 10 * Math.log10(loudest);
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0];
}

/** The whisper engine for the best pulled model, or why there is none. */
export function whisperEngine(env: NodeJS.ProcessEnv = process.env, language?: string): { engine?: WhisperEngine; reason?: string } {
  const { model, reason } = findWhisperModel(env, language);
  if (!model) return { reason };
  const { binding, reason: why } = loadWhisperBinding(env);
  if (!binding) return { reason: why };
  const f = model.manifest.files.find((x) => x.role === 'model')!;
  return { engine: new WhisperEngine({ file: model.file, modelId: model.manifest.id, sha256: f.sha256, language: model.language, binding }) };
}
