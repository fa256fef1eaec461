/**
 * The job queue as the API shows it (issue 21): a key's owner sees its own queued and running
 * jobs, an admin everyone's; the owner or an admin can cancel one. Cancelling fails the job (its
 * worker is refused at its next lease renewal and stops) and its subject, the video or task, with
 * a message that says who cancelled it; `reprocess` starts a cancelled video again.
 */
import { ConflictError, NotFoundError } from '../api/errors.js';
import { canSee, type Principal } from '../api/principal.js';
import type { QueuedJob } from '../store/queue/types.js';
import type { Jobs } from './jobs.js';
import type { Library } from './library.js';

export interface JobSummary {
  job_id: string;
  kind: QueuedJob['kind'];
  /** The video (video.process) or task (task.*) the job works on. */
  subject_id: string;
  owner: string;
  status: QueuedJob['status'];
  attempts: number;
  created_at: string;
}

const summary = (j: QueuedJob): JobSummary => ({
  job_id: j.id,
  kind: j.kind,
  subject_id: j.refId,
  owner: j.owner,
  status: j.status,
  attempts: j.attempts,
  created_at: new Date(j.createdAt).toISOString(),
});

export class QueueService {
  constructor(
    private readonly lib: Library,
    private readonly jobs: Jobs,
  ) {}

  /** Queued and running jobs, oldest first: the caller's owner's (an admin: every owner's, or `owner`'s). */
  async list(p: Principal, owner?: string): Promise<{ jobs: JobSummary[] }> {
    const of = p.admin ? owner : p.owner;
    return { jobs: (await this.lib.catalog.queue.pending(of)).map(summary) };
  }

  /**
   * Cancels a queued or running job and fails its subject, and with it the subject's other pending
   * jobs (a video's other lane: its speech, queued after its pictures); 404 for a job the caller
   * may not see, 409 once it is settled.
   */
  async cancel(p: Principal, jobId: string): Promise<JobSummary & { cancelled: true }> {
    const queue = this.lib.catalog.queue;
    const job = await queue.get(jobId);
    if (!job || !canSee(p, job.owner)) throw new NotFoundError(`job not found: ${jobId}`);
    const by = p.owner === job.owner ? 'its owner' : 'an admin';
    const reason = `cancelled by ${by}`;
    const before = await queue.cancel(jobId, reason);
    if (!before) throw new ConflictError(`job ${jobId} is ${job.status} already: only a queued or running job can be cancelled`);
    await this.jobs.failSubject(before, reason);
    for (const other of await queue.pending(job.owner)) if (other.refId === job.refId) await queue.cancel(other.id, reason);
    return { ...summary(before), status: 'failed', cancelled: true };
  }
}
