/**
 * `vidembed jobs` and `vidembed jobs cancel` on the local engine (in-memory stores): the queue as
 * the API shows it, a cancelled job's video failed with who cancelled it, a settled job refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../src/api/errors.js';
import { memoryEngine } from '../helpers/memory-engine.js';
import { anyFileIsVideo } from '../helpers/server.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-jobs-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('jobs on the local engine', () => {
  it('lists queued jobs oldest first and cancels one: its video fails with who cancelled it', async () => {
    const m = memoryEngine({ checkVideo: anyFileIsVideo });
    const col = (await m.engine.createCollection({ name: 'c' })).collection_id;
    const ids: string[] = [];
    for (const name of ['a.mp4', 'b.mp4']) {
      const file = path.join(dir, name);
      writeFileSync(file, `bytes of ${name}`);
      ids.push((await m.engine.uploadVideo(col, { path: file, filename: name })).video_id);
    }
    const { jobs } = await m.engine.listJobs();
    expect(jobs.map((j) => [j.kind, j.subject_id, j.status, j.owner])).toEqual([
      ['video.process', ids[0], 'queued', 'default'],
      ['video.process', ids[1], 'queued', 'default'],
    ]);
    const cancelled = await m.engine.cancelJob(jobs[0].job_id);
    expect(cancelled).toMatchObject({ job_id: jobs[0].job_id, subject_id: ids[0], status: 'failed', cancelled: true });
    expect(await m.engine.videoStatus(ids[0])).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/cancelled by its owner/) });
    expect((await m.engine.listJobs()).jobs.map((j) => j.subject_id)).toEqual([ids[1]]);
    await expect(m.engine.cancelJob(jobs[0].job_id)).rejects.toThrow(ConflictError);
    await expect(m.engine.cancelJob('job_nope')).rejects.toThrow(NotFoundError);
  });
});
