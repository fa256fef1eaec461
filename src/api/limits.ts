/**
 * What one API key may ask of the server (issue 21, docs/limits.md): how many jobs its owner may
 * have queued or running, the longest video and the largest upload it may send. A key stores only
 * the limits it was given (`keys create --max-jobs … --max-video-s … --max-upload-mb …`); the
 * others come from the server's defaults (src/env.ts `keyLimitDefaults`). 0 means no limit.
 */
import { keyLimitDefaults } from '../env.js';
import { PayloadTooLargeError, RateLimitedError, ValidationError } from './errors.js';

/** As stored with a key (`limits_json`): only what was set. */
export interface KeyLimitSettings {
  max_jobs?: number;
  max_video_s?: number;
  max_upload_bytes?: number;
}

/** In force for a key: its own settings over the server's defaults; 0: no limit. */
export interface KeyLimits {
  maxJobs: number;
  maxVideoSeconds: number;
  maxUploadBytes: number;
}

export const NO_LIMITS: KeyLimits = Object.freeze({ maxJobs: 0, maxVideoSeconds: 0, maxUploadBytes: 0 });

let defaults: KeyLimits | undefined;
/** The server's defaults, read once. */
export function defaultKeyLimits(): KeyLimits {
  return (defaults ??= keyLimitDefaults());
}

/** A key's stored settings (null: none) over `base`. */
export function keyLimits(limitsJson: string | null, base: KeyLimits = defaultKeyLimits()): KeyLimits {
  const own = limitsJson ? (JSON.parse(limitsJson) as KeyLimitSettings) : {};
  return {
    maxJobs: own.max_jobs ?? base.maxJobs,
    maxVideoSeconds: own.max_video_s ?? base.maxVideoSeconds,
    maxUploadBytes: own.max_upload_bytes ?? base.maxUploadBytes,
  };
}

/** Settings as given on the command line, checked; undefined when none was given. */
export function limitSettings(input: { maxJobs?: number; maxVideoSeconds?: number; maxUploadMiB?: number }): KeyLimitSettings | undefined {
  const out: KeyLimitSettings = {};
  const check = (name: string, v: number | undefined, integer: boolean) => {
    if (v === undefined) return undefined;
    if (!Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v))) {
      throw new ValidationError([{ loc: [name], msg: `must be a non-negative ${integer ? 'integer' : 'number'} (0: no limit)`, type: 'value_error' }]);
    }
    return v;
  };
  const jobs = check('max-jobs', input.maxJobs, true);
  const video = check('max-video-s', input.maxVideoSeconds, false);
  const upload = check('max-upload-mb', input.maxUploadMiB, false);
  if (jobs !== undefined) out.max_jobs = jobs;
  if (video !== undefined) out.max_video_s = video;
  if (upload !== undefined) out.max_upload_bytes = Math.round(upload * 1024 * 1024);
  return Object.keys(out).length ? out : undefined;
}

/** How long a client told "too many jobs" should wait before it asks again. */
const JOBS_RETRY_AFTER_S = 30;

/**
 * 429 when `adding` more jobs would pass the key's limit on its owner's queued and running jobs
 * (counted before the new ones are committed: two requests at the same instant may both pass).
 */
export async function checkJobLimit(limits: KeyLimits | undefined, queue: { pending(owner: string): Promise<unknown[]> }, owner: string, adding: number): Promise<void> {
  if (!limits?.maxJobs || adding === 0) return;
  const pending = (await queue.pending(owner)).length;
  if (pending + adding <= limits.maxJobs) return;
  throw new RateLimitedError(
    `this key's owner has ${pending} jobs queued or running; its limit is ${limits.maxJobs} (wait for some to finish, or cancel some)`,
    JOBS_RETRY_AFTER_S,
  );
}

/** 413 when an upload of `bytes` is over the key's limit. */
export function checkUploadLimit(limits: KeyLimits | undefined, filename: string, bytes: number): void {
  if (!limits?.maxUploadBytes || bytes <= limits.maxUploadBytes) return;
  throw new PayloadTooLargeError(`${filename} is ${bytes} bytes, over this key's ${limits.maxUploadBytes}-byte upload limit`);
}

/** 422 when a video of `seconds` is longer than the key may upload. */
export function checkVideoLength(limits: KeyLimits | undefined, filename: string, seconds: number): void {
  if (!limits?.maxVideoSeconds || !(seconds > limits.maxVideoSeconds)) return;
  throw new ValidationError([
    { loc: ['body', 'file'], msg: `${filename} lasts ${Math.round(seconds)} s, over this key's limit of ${limits.maxVideoSeconds} s`, type: 'value_error.video_too_long' },
  ]);
}
