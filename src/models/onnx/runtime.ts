/**
 * onnxruntime-node, loaded once per process on first use (commands that run no model never load
 * it), and the session settings every model of the project uses.
 */
import { onnxThreadsSetting } from '../../env.js';
import os from 'node:os';
import type * as OrtTypes from 'onnxruntime-node';

export type Ort = typeof OrtTypes;

let ortPromise: Promise<Ort> | undefined;

export function loadOrt(): Promise<Ort> {
  ortPromise ??= import('onnxruntime-node').then((m) => (m as unknown as { default?: Ort }).default ?? (m as unknown as Ort));
  return ortPromise;
}

/**
 * Intra-op threads: `VIDEMBED_ONNX_THREADS` when set, else `fallback` — a number, or `'cores'`
 * (the machine's cores, at most 4: for models that run alone, like a query encoder).
 */
export function onnxThreads(fallback: number | 'cores', env: NodeJS.ProcessEnv = process.env): number {
  const n = onnxThreadsSetting(env);
  if (n !== undefined) return n;
  if (fallback !== 'cores') return fallback;
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.max(1, Math.min(4, cores));
}

/** Sequential execution, full graph optimisation, one inter-op thread. */
export function sessionOptions(intraOpThreads: number): OrtTypes.InferenceSession.SessionOptions {
  return { intraOpNumThreads: intraOpThreads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' };
}
