import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyLimits, limitSettings, NO_LIMITS } from '../../src/api/limits.js';
import { keyLimitDefaults } from '../../src/env.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { anyFileIsVideo, http, startTestServer, type TestServer } from '../helpers/server.js';

describe('key limits: settings over the server defaults', () => {
  it('reads the defaults from the environment (0: no limit), and a key overrides each', () => {
    expect(keyLimitDefaults({})).toEqual({ maxJobs: 100, maxVideoSeconds: 14_400, maxUploadBytes: 0 });
    expect(keyLimitDefaults({ VIDEMBED_KEY_MAX_JOBS: '3', VIDEMBED_KEY_MAX_VIDEO_S: '0', VIDEMBED_KEY_MAX_UPLOAD_MB: '2' })).toEqual({
      maxJobs: 3,
      maxVideoSeconds: 0,
      maxUploadBytes: 2 * 1024 * 1024,
    });
    expect(keyLimitDefaults({ VIDEMBED_KEY_MAX_JOBS: '-1', VIDEMBED_KEY_MAX_VIDEO_S: 'lots' })).toMatchObject({ maxJobs: 100, maxVideoSeconds: 14_400 });
    const base = { maxJobs: 100, maxVideoSeconds: 14_400, maxUploadBytes: 0 };
    expect(keyLimits(null, base)).toEqual(base);
    expect(keyLimits('{"max_jobs":2,"max_video_s":0}', base)).toEqual({ maxJobs: 2, maxVideoSeconds: 0, maxUploadBytes: 0 });
    expect(keyLimits('{"max_upload_bytes":5}', NO_LIMITS)).toEqual({ maxJobs: 0, maxVideoSeconds: 0, maxUploadBytes: 5 });
  });

  it('checks what keys create is given', () => {
    expect(limitSettings({})).toBeUndefined();
    expect(limitSettings({ maxJobs: 4, maxVideoSeconds: 90.5, maxUploadMiB: 1.5 })).toEqual({ max_jobs: 4, max_video_s: 90.5, max_upload_bytes: 1572864 });
    expect(() => limitSettings({ maxJobs: 1.5 })).toThrow(/max-jobs: must be a non-negative integer/);
    expect(() => limitSettings({ maxVideoSeconds: -1 })).toThrow(/max-video-s/);
    expect(() => limitSettings({ maxUploadMiB: Number.NaN })).toThrow(/max-upload-mb/);
  });
});

describe('key limits and the job queue over HTTP', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  let admin: string;
  let collection: string;
  const upload = (key: string, bytes: number) => {
    const form = new FormData();
    form.set('file', new Blob([Buffer.alloc(bytes, 7)]), 'clip.mp4');
    return http(s.url, 'POST', `/collections/${collection}/videos/upload`, { key, form });
  };

  beforeAll(async () => {
    const fake = new FakeEmbedder();
    s = await startTestServer({ engine: { embedderFor: () => fake, checkVideo: anyFileIsVideo } });
    alice = s.engine.store.keys.create({ name: 'alice', qps: 1000, limits: { max_jobs: 2, max_upload_bytes: 4096 } }).key;
    bob = s.engine.store.keys.create({ name: 'bob', qps: 1000 }).key;
    admin = s.engine.store.keys.create({ name: 'ops', qps: 1000, role: 'admin' }).key;
    const c = await http(s.url, 'POST', '/collections', { key: alice, json: { name: 'footage' } });
    collection = c.body.collection_id;
  });
  afterAll(async () => s?.close());

  it("answers 413 for an upload over the key's own limit, below the server's", async () => {
    const r = await upload(alice, 5000);
    expect(r.status).toBe(413);
    expect(r.body.detail).toMatch(/over this key's 4096-byte upload limit/);
  });

  it("answers 429 with Retry-After once the owner's queued and running jobs reach the key's limit; cancelling makes room", async () => {
    const first = await upload(alice, 100);
    expect(first.status).toBe(202);
    const task = await http(s.url, 'POST', '/video_tagging/async', { key: alice, json: { video_base64: Buffer.from('abc').toString('base64') } });
    expect(task.status).toBe(202);
    const third = await upload(alice, 200);
    expect(third.status).toBe(429);
    expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(third.body).toMatchObject({ code: 'rate_limited' });
    expect(third.body.detail).toMatch(/2 jobs queued or running; its limit is 2/);
    // Bob's own (default) limit is untouched by alice's jobs.
    expect((await http(s.url, 'POST', '/video_tagging/async', { key: bob, json: { video_base64: 'YWJj' } })).status).toBe(202);

    // Each key lists its owner's jobs; an admin everyone's, or one owner's.
    const mine = await http(s.url, 'GET', '/jobs', { key: alice });
    expect(mine.status).toBe(200);
    expect(mine.body.jobs.map((j: { subject_id: string }) => j.subject_id)).toEqual([first.body.video_id, task.body.request_id]);
    expect(mine.body.jobs.every((j: { owner: string; status: string }) => j.owner === 'alice' && j.status === 'queued')).toBe(true);
    expect((await http(s.url, 'GET', '/jobs?owner=alice', { key: bob })).body.jobs.map((j: { owner: string }) => j.owner)).toEqual(['bob']);
    expect((await http(s.url, 'GET', '/jobs', { key: admin })).body.jobs).toHaveLength(3);
    expect((await http(s.url, 'GET', '/jobs?owner=bob', { key: admin })).body.jobs).toHaveLength(1);

    // Another owner's job is not there for bob; an admin cancels it, and the video says so.
    const videoJob = mine.body.jobs[0].job_id as string;
    expect((await http(s.url, 'POST', `/jobs/${videoJob}/cancel`, { key: bob })).status).toBe(404);
    const cancelled = await http(s.url, 'POST', `/jobs/${videoJob}/cancel`, { key: admin });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ job_id: videoJob, kind: 'video.process', subject_id: first.body.video_id, owner: 'alice', status: 'failed', cancelled: true });
    const status = await http(s.url, 'GET', `/videos/${first.body.video_id}/status`, { key: alice });
    expect(status.body).toMatchObject({ status: 'failed', error_message: 'cancelled by an admin' });
    expect((await http(s.url, 'POST', `/jobs/${videoJob}/cancel`, { key: admin })).status).toBe(409);
    // The owner cancels her own task.
    const taskJob = mine.body.jobs[1].job_id as string;
    expect((await http(s.url, 'POST', `/jobs/${taskJob}/cancel`, { key: alice })).status).toBe(200);
    expect((await http(s.url, 'GET', `/async_status/${task.body.request_id}`, { key: alice })).body).toMatchObject({ status: 'failed', error_message: 'cancelled by its owner' });
    expect((await http(s.url, 'POST', '/jobs/job_missing/cancel', { key: admin })).status).toBe(404);

    // Room again: the next upload is taken.
    expect((await upload(alice, 300)).status).toBe(202);
    // A job enqueued without naming its owner (reprocess) is its subject's owner's.
    expect((await http(s.url, 'POST', `/videos/${first.body.video_id}/reprocess`, { key: alice })).status).toBe(202);
    const again = (await http(s.url, 'GET', '/jobs', { key: admin })).body.jobs as { subject_id: string; owner: string }[];
    expect(again.find((j) => j.subject_id === first.body.video_id)?.owner).toBe('alice');
  });
});
