/**
 * A worker process on a home with no models (the fake embedder, no analyzers) but real media
 * (ffmpeg): what end-to-end tests SIGKILL in the middle of a job. Usage:
 *   node fake-engine-worker.mjs HOME [--idle-exit-ms N]
 * Runs the built engine (dist/): `npm run build` first.
 */
import { LocalEngine } from '../../dist/src/runtime/engine.js';
import { Worker } from '../../dist/src/runtime/worker.js';

/** As test/helpers/fake-embedder.ts (id fake-16): a segment's vector from its frames' colour, a text's from its words. */
class FakeEmbedder {
  id = 'fake-16';
  dim = 16;
  frameMaxSide = 64;
  queryKinds = ['text'];
  async load() {}
  async embedText(text) {
    const v = new Float32Array(16);
    for (const [i, ch] of [...text].entries()) v[i % 16] += ch.charCodeAt(0) / 128;
    return { vector: norm(v), truncated: false };
  }
  async embedSegment(frames) {
    const v = new Float32Array(16);
    for (const f of frames) for (let i = 0; i < f.data.length; i += 3) v[i % 16] += f.data[i] / 255;
    return { vector: norm(v), description: 'a fake segment' };
  }
  async dispose() {}
}
function norm(v) {
  const n = Math.hypot(...v) || 1;
  if (n === 1 && v.every((x) => x === 0)) v[0] = 1;
  else for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

const [home, flag, value] = process.argv.slice(2);
const idleExitMs = flag === '--idle-exit-ms' ? Number(value) : undefined;
const embedder = new FakeEmbedder();
const engine = new LocalEngine({ home, embedderFor: () => embedder, analyzers: [] });
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());
await new Worker(engine, { idleExitMs, pollMs: 50, log: (line) => process.stderr.write(`${line}\n`) }).run(stop.signal);
await engine.close();
