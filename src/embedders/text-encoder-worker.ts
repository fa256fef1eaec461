/**
 * One thread of the TextEncoderPool (text-encoder-pool.ts). It imports the `preload` modules it is
 * given (tests register fake embedders that way), says `ready`, then answers one batch at a time:
 * `{type: 'batch', id, items: [{embedderId, text}]}` → `{type: 'result', id, results}` with one
 * result per item, in order (`{ok: true, vector, truncated}` or `{ok: false, error}`).
 *
 * Embedders come from this thread's registry, so each loads once per thread. Only `embedText` is
 * called (never `load()`): it loads what text needs — for the perception tier that is USE alone,
 * not the image analyzers. The items of a batch are embedded concurrently, which lets an embedder
 * that batches concurrent texts (USE coalesces up to 32 into one model call) run them as one.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getEmbedder } from './registry.js';
import { errorToWire } from '../api/errors.js';
import type { BatchMessage, ItemResult, WorkerReply } from './text-encoder-pool.js';

const port = parentPort;
if (!port) throw new Error('text-encoder-worker runs as a worker thread (see TextEncoderPool)');

for (const m of (workerData as { preload?: string[] } | undefined)?.preload ?? []) await import(m);

port.on('message', (msg: BatchMessage) => {
  if (msg?.type !== 'batch') return;
  void Promise.all(
    msg.items.map(async (item): Promise<ItemResult> => {
      try {
        const e = await getEmbedder(item.embedderId).embedText(item.text);
        // A copy of its own, so every vector's buffer can be transferred (none shared, none a view).
        return { ok: true, vector: Float32Array.from(e.vector), truncated: e.truncated };
      } catch (err) {
        return { ok: false, error: errorToWire(err) };
      }
    }),
  ).then((results) => {
    const transfer = results.flatMap((r) => (r.ok ? [r.vector.buffer as ArrayBuffer] : []));
    port.postMessage({ type: 'result', id: msg.id, results } satisfies WorkerReply, transfer);
  });
});

port.postMessage({ type: 'ready' } satisfies WorkerReply);
