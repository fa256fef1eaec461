/** What a job handler is given and answers (src/services/jobs.ts dispatches; the lane jobs implement it). */
export interface JobContext {
  signal: AbortSignal;
  /** The claim the work runs under: its results land only while the token still holds the job. */
  job?: { id: string; token: number };
  /** Set by the handler when it settled the job itself, in the transaction of its results. */
  settled?: boolean;
  /**
   * Set by a worker for a side lane's job (speech): how many main-lane jobs (pictures, plans,
   * tasks) run on the worker now, and how long a side lane waits for them at most
   * (VIDEMBED_SIDE_LANE_WAIT_S) — what src/speech/parts.ts `hearingSlots` decides from.
   */
  beside?: { mainRunning(): number; maxWaitMs: number };
}

export type JobOutcome = 'done' | 'failed';

/** What a job kind's handler does with one claimed job, and with its subject when the queue gives up. */
export interface JobHandler {
  run(refId: string, ctx: JobContext): Promise<JobOutcome>;
  fail(refId: string, message: string): Promise<void>;
}
