import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MediaError, ModelError, TimeoutError } from '../../src/api/errors.js';
import { AnalysisThreads, type AnalysisJob } from '../../src/runtime/analysis-thread.js';

/*
 * The pool of src/runtime/analysis-thread.ts over a fake worker script (no models, no ffmpeg):
 * queueing, errors, aborts, a dying thread, close. That the real thread answers what the
 * in-process analysis does is test/e2e/analysis-threads.test.ts.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const FAKE = pathToFileURL(path.join(here, '../helpers/fake-analysis-worker.mjs'));
const job = (file: string): AnalysisJob<'tag'> => ({ kind: 'tag', file, embedderId: 'fake', segmentSeconds: 4, fps: 1 });

let pool: AnalysisThreads | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('AnalysisThreads', () => {
  it('answers each job, one per thread at a time; jobs beyond the threads wait their turn', async () => {
    pool = new AnalysisThreads({ threads: 2, workerUrl: FAKE });
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((f) => pool!.run(job(f))));
    expect(answers.map((a) => (a.tags as unknown as { file: string }).file)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(new Set(answers.map((a) => (a.tags as unknown as { thread: number }).thread)).size).toBe(2);
    expect([pool.liveThreads, pool.busyThreads, pool.jobsAnswered]).toEqual([2, 0, 5]);
  });

  it('gives back an error of the thread as the same class and message', async () => {
    pool = new AnalysisThreads({ threads: 1, workerUrl: FAKE });
    const err = await pool.run(job('media-error')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect((err as Error).message).toBe('video_base64: no video frames could be decoded');
  });

  it('an abort drops a waiting job at once, and stops a running one, settling with the caller\'s reason once the thread has stopped', async () => {
    pool = new AnalysisThreads({ threads: 1, workerUrl: FAKE });
    const first = new AbortController();
    const second = new AbortController();
    const running = pool.run(job('wait'), first.signal);
    const waiting = pool.run(job('x'), second.signal);
    const budget = new TimeoutError('the request took longer than 1 s');
    second.abort(budget);
    await expect(waiting).rejects.toBe(budget);
    expect(pool.jobsAnswered).toBe(0);
    const gone = new Error('client went away');
    first.abort(gone);
    await expect(running).rejects.toBe(gone);
    expect([pool.jobsAnswered, pool.busyThreads]).toEqual([1, 0]);
    await expect(pool.run(job('after'))).resolves.toMatchObject({ tags: { file: 'after' } });
    const already = new AbortController();
    already.abort(gone);
    await expect(pool.run(job('y'), already.signal)).rejects.toBe(gone);
  });

  it('a thread that dies fails its job with a ModelError; the next job gets a new thread', async () => {
    pool = new AnalysisThreads({ threads: 1, workerUrl: FAKE });
    const first = await pool.run(job('a'));
    const err = await pool.run(job('crash')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).message).toMatch(/analysis thread stopped while analysing \(the thread crashed on purpose\)/);
    const next = await pool.run(job('b'));
    expect((next.tags as unknown as { thread: number }).thread).not.toBe((first.tags as unknown as { thread: number }).thread);
  });

  it('a thread that cannot start fails the jobs waiting for it', async () => {
    pool = new AnalysisThreads({ threads: 1, workerUrl: pathToFileURL(path.join(here, '../helpers/no-such-worker.mjs')) });
    const [a, b] = await Promise.all([pool.run(job('a')).catch((e: unknown) => e), pool.run(job('b')).catch((e: unknown) => e)]);
    expect(a).toBeInstanceOf(ModelError);
    expect((a as Error).message).toMatch(/analysis thread stopped while analysing/);
    expect(b).toBeInstanceOf(ModelError);
    expect((b as Error).message).toMatch(/analysis thread could not start/);
  });

  it('close() fails what is running or waiting, and refuses new jobs', async () => {
    pool = new AnalysisThreads({ threads: 1, workerUrl: FAKE });
    const settled = Promise.allSettled([pool.run(job('wait')), pool.run(job('x'))]);
    await pool.close();
    const [running, waiting] = await settled;
    expect(running).toMatchObject({ status: 'rejected', reason: { message: 'the analysis threads are closed' } });
    expect(waiting).toMatchObject({ status: 'rejected', reason: { message: 'the analysis threads are closed' } });
    await expect(pool.run(job('y'))).rejects.toBeInstanceOf(ModelError);
    expect(pool.liveThreads).toBe(0);
  });
});
