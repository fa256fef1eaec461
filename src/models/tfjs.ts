/**
 * One tfjs instance per process, on the WebAssembly backend (SIMD build; no download, no native
 * addon). The pure-JS cpu backend is 20-35x slower and is never selected.
 *
 * Threads: the threaded-SIMD build cannot start in Node (tfjs-backend-wasm reports
 * WASM_HAS_MULTITHREAD_SUPPORT=false under Node, and forcing it fails because Emscripten spawns its
 * pthread workers from a blob: URL, which worker_threads rejects), so inference runs on one core.
 * Parallelism, where wanted, belongs a level up (ffmpeg decoding on the other core).
 */
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import * as tfc from '@tensorflow/tfjs-converter';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

export { tf, tfc };
export type GraphModel = tfc.GraphModel;

const require = createRequire(import.meta.url);

let ready: Promise<void> | null = null;

/** Initialises the wasm backend once per process; later calls return the same promise. */
export function initTfjs(): Promise<void> {
  if (!ready) {
    ready = (async () => {
      const wasmDir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'));
      setWasmPaths(join(wasmDir, 'dist') + '/');
      const ok = await tf.setBackend('wasm');
      if (!ok) throw new Error('tfjs: could not initialise the wasm backend');
      await tf.ready();
      if (tf.getBackend() !== 'wasm') throw new Error(`tfjs: expected wasm backend, got ${tf.getBackend()}`);
      // Production mode skips per-op NaN checks and debug bookkeeping.
      tf.enableProdMode();
    })();
    ready.catch(() => {
      ready = null;
    });
  }
  return ready;
}

export interface LoadOptions {
  /**
   * Drop the fixed input shape recorded in the graph, so the model can be fed other sizes
   * (only valid for fully convolutional graphs without size constants).
   */
  freeInputShape?: boolean;
  /**
   * Replace the values of int32 constant weights (e.g. fixed upsampling sizes, grid sizes) so a
   * graph can run at another input size. Each value array must have the weight's element count.
   */
  int32Overrides?: Record<string, number[]>;
}

/** Byte size of one stored weight (quantised weights are stored narrower than their dtype). */
function storedBytes(spec: tf.io.WeightsManifestEntry): number {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  const q = spec.quantization?.dtype;
  if (q) return n * (q === 'uint8' ? 1 : 2);
  if (spec.dtype === 'bool') return n;
  if (spec.dtype === 'string') throw new Error(`cannot patch a model with string weights (${spec.name})`);
  return n * 4;
}

function patchInt32Weights(data: ArrayBuffer, specs: tf.io.WeightsManifestEntry[], overrides: Record<string, number[]>): void {
  const view = new DataView(data);
  const todo = new Map(Object.entries(overrides));
  let offset = 0;
  for (const spec of specs) {
    const values = todo.get(spec.name);
    if (values) {
      const n = spec.shape.reduce((a, b) => a * b, 1);
      if (spec.dtype !== 'int32' || spec.quantization || n !== values.length) {
        throw new Error(`weight ${spec.name}: expected ${n} unquantised int32 values`);
      }
      values.forEach((v, i) => view.setInt32(offset + 4 * i, v, true));
      todo.delete(spec.name);
    }
    offset += storedBytes(spec);
  }
  if (offset !== data.byteLength) throw new Error(`weights: manifest covers ${offset} bytes, data has ${data.byteLength}`);
  if (todo.size) throw new Error(`weights not found: ${[...todo.keys()].join(', ')}`);
}

interface ModelJson {
  modelTopology: unknown;
  weightsManifest: Array<{ paths: string[]; weights: tf.io.WeightsManifestEntry[] }>;
  format?: string;
  generatedBy?: string;
  convertedBy?: string | null;
  signature?: unknown;
  userDefinedMetadata?: Record<string, unknown>;
}

const cache = new Map<string, Promise<tfc.GraphModel>>();

/**
 * Loads a tfjs graph model from local files (model.json + weight shards); cached per path, so
 * every caller in the process shares one instance.
 */
export function loadGraphModelFromDir(dir: string, jsonName = 'model.json', opts: LoadOptions = {}): Promise<tfc.GraphModel> {
  const key = `${join(dir, jsonName)}|${opts.freeInputShape ? 'free' : 'fixed'}|${JSON.stringify(opts.int32Overrides ?? {})}`;
  let p = cache.get(key);
  if (!p) {
    p = (async () => {
      await initTfjs();
      const mj = JSON.parse(await readFile(join(dir, jsonName), 'utf8')) as ModelJson;
      const weightSpecs: tf.io.WeightsManifestEntry[] = [];
      const shards: Buffer[] = [];
      for (const group of mj.weightsManifest) {
        weightSpecs.push(...group.weights);
        for (const path of group.paths) shards.push(await readFile(join(dir, path)));
      }
      const all = Buffer.concat(shards);
      const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer;
      if (opts.int32Overrides) patchInt32Weights(weightData, weightSpecs, opts.int32Overrides);
      let signature = mj.signature;
      let userDefinedMetadata = mj.userDefinedMetadata;
      if (opts.freeInputShape) {
        const topo = mj.modelTopology as { node?: Array<{ op: string; attr?: { shape?: { shape?: { dim?: Array<{ size: string }> } } } }> };
        for (const n of topo.node ?? []) {
          const dims = n.op === 'Placeholder' ? n.attr?.shape?.shape?.dim : undefined;
          if (dims) for (const d of dims.slice(1)) d.size = '-1';
        }
        signature = undefined;
        if (userDefinedMetadata) {
          userDefinedMetadata = { ...userDefinedMetadata };
          delete userDefinedMetadata.signature;
        }
      }
      const handler = tf.io.fromMemory({
        modelTopology: mj.modelTopology as object,
        weightSpecs,
        weightData,
        format: mj.format,
        generatedBy: mj.generatedBy,
        convertedBy: mj.convertedBy ?? undefined,
        signature: signature as object | undefined,
        userDefinedMetadata: userDefinedMetadata as object | undefined,
      });
      return tfc.loadGraphModel(handler);
    })();
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return p;
}

/** Disposes every cached model (tests, shutdown). */
export async function disposeAllModels(): Promise<void> {
  const models = [...cache.values()];
  cache.clear();
  for (const p of models) {
    try {
      (await p).dispose();
    } catch {
      /* a failed load has nothing to dispose */
    }
  }
}

