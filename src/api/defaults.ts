/**
 * The API's defaults and bounds, stated once: the request schemas (src/api/schemas.ts) are built
 * from them, so the server's validation, the local facade's (the same schemas) and /openapi.json
 * agree; the engine and the CLI take their defaults from here too.
 */
export const LIMITS = {
  /** Results per search page. */
  topK: { min: 1, max: 100, default: 10 },
  /** How deep a search pages: offset + top_k. */
  maxSearchHits: 1000,
  /** Longest segment, seconds. */
  segmentSeconds: { min: 1, max: 60, default: 4 },
  /** Frames per second given to the embedder (exclusive minimum 0). */
  fps: { min: 0, max: 8, default: 1 },
  /** Page size of the list operations. */
  list: { min: 1, max: 1000, default: 100 },
  collectionName: { maxLength: 128 },
  collectionDescription: { maxLength: 4096 },
} as const;

/** The largest frame side a video tensor may have (`[B, T, C, H, W]`); the engine resizes. */
export const TENSOR_MAX_SIDE = 1024;

/** Who transcribes a collection's speech: `auto` (the best engine installed), `off`, or an engine by name. */
export const SPEECH_SETTINGS = ['auto', 'off', 'pocketsphinx', 'whisper'] as const;
export type SpeechSetting = (typeof SPEECH_SETTINGS)[number];

/**
 * The near-duplicate thresholds, tuned on the tuning half of ../shared/eval only (`node
 * dist/eval/duplicates.js`): see docs/engine.md for the figures.
 */
export const DUPLICATE_THRESHOLDS = {
  /** Two frames match when their hashes differ in at most this many of 64 bits. */
  maxHamming: 10,
  /** Two videos are near-duplicates at this similarity or above (`duplicates --min-similarity`). */
  minSimilarity: 0.5,
  /** `upload --skip-duplicates` skips a file when at least this share of its pictures is in one video. */
  minCoverage: 0.75,
};

/**
 * A capability's state for one video (`analysis` of `GET /videos/{id}`): waiting for its lane,
 * running, done, skipped (with the reason: a model not installed, speech off) or failed (with the
 * message).
 */
export const CAPABILITY_STATUSES = ['pending', 'running', 'done', 'skipped', 'failed'] as const;
export type CapabilityStatus = (typeof CAPABILITY_STATUSES)[number];

/** What `--wait` waits for: `searchable` (the picture lane is done: the video answers searches) or `complete` (every lane). */
export const WAIT_UNTIL = ['searchable', 'complete'] as const;
export type WaitUntil = (typeof WAIT_UNTIL)[number];

/**
 * What a job does: plan a video's analysis (`video.process`: queues its lanes), run one lane of it
 * (`video.pictures`, `video.speech`: src/capabilities/lanes.ts), or run an async embedding / tagging task.
 */
export const JOB_KINDS = ['video.process', 'video.pictures', 'video.speech', 'task.embedding', 'task.tagging'] as const;
export type JobKind = (typeof JOB_KINDS)[number];
