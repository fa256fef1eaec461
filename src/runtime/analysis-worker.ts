/**
 * One thread of AnalysisThreads (analysis-thread.ts): runs one synchronous analysis at a time,
 * `{type: 'run', id, job}` → `{type: 'done', id, ok, value | error}`; `{type: 'abort', id}` stops
 * the running one (it then answers with the abort's error, which the pool replaces by its caller's
 * reason). Embedders and capabilities come from this thread's registries, so each model loads
 * once per thread; speech is the default (src/speech/engines.ts), media ffmpeg.
 */
import { parentPort } from 'node:worker_threads';
import { errorToWire } from '../api/errors.js';
import { defaultCapabilities } from '../capabilities/index.js';
import { getEmbedder } from '../embedders/registry.js';
import { ffmpegMedia } from '../media/ffmpeg-media.js';
import { answerFile } from '../services/analysis.js';
import type { FromAnalysisThread, ToAnalysisThread } from './analysis-thread.js';

const port = parentPort;
if (!port) throw new Error('analysis-worker runs as a worker thread (see AnalysisThreads)');

const running = new Map<number, AbortController>();
const ports = { capabilities: defaultCapabilities(), media: ffmpegMedia };

port.on('message', (m: ToAnalysisThread) => {
  if (m?.type === 'abort') {
    running.get(m.id)?.abort(new Error('the request was cancelled'));
    return;
  }
  if (m?.type !== 'run') return;
  const stop = new AbortController();
  running.set(m.id, stop);
  const { kind, file, embedderId, segmentSeconds, fps } = m.job;
  void (async (): Promise<FromAnalysisThread> => {
    try {
      const value = await answerFile(kind, file, getEmbedder(embedderId), { segmentSeconds, fps, signal: stop.signal }, ports);
      return { type: 'done', id: m.id, ok: true, value };
    } catch (err) {
      return { type: 'done', id: m.id, ok: false, error: errorToWire(err) };
    }
  })().then((reply) => {
    running.delete(m.id);
    port.postMessage(reply);
  });
});
