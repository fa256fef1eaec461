/**
 * A stand-in for src/runtime/analysis-worker.ts speaking its protocol, for the pool's unit tests
 * (test/unit/analysis-threads.test.ts): no models, no ffmpeg. The job's `file` says what to do:
 * `media-error` answers a MediaError, `crash` kills the thread, `wait` runs until aborted (then
 * answers the abort's error), anything else answers `{ tags: { file, thread } }` with this thread's id.
 */
import { parentPort, threadId } from 'node:worker_threads';

const running = new Map();
parentPort.on('message', (m) => {
  if (m.type === 'abort') {
    running.get(m.id)?.();
    return;
  }
  const { file } = m.job;
  const done = (reply) => {
    running.delete(m.id);
    parentPort.postMessage({ type: 'done', id: m.id, ...reply });
  };
  if (file === 'crash') throw new Error('the thread crashed on purpose');
  if (file === 'media-error') return done({ ok: false, error: { name: 'MediaError', message: 'video_base64: no video frames could be decoded' } });
  if (file === 'wait') return void running.set(m.id, () => done({ ok: false, error: { name: 'Error', message: 'the request was cancelled' } }));
  done({ ok: true, value: { tags: { file, thread: threadId } } });
});
