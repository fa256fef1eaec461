/**
 * A video's analysis as capabilities on lanes (src/capabilities): what is queued for it
 * (`queueAnalysis`), where its status settles (`settleVideo`: the one place a video becomes
 * processed or failed), and how its capabilities' states read (`analysisOf`).
 *
 * A video is 'processing' while any of its capabilities is pending or running; it answers searches
 * as soon as its picture lane is done (its segments exist); it is 'processed' when every capability
 * is done, skipped or failed — a capability that failed fails only itself — and 'failed' when its
 * picture lane could not make segments at all (the file does not decode).
 */
import type { CapabilityStatus } from '../api/defaults.js';
import { LANES, laneOf, type LaneName, type PlannedCapability } from '../capabilities/index.js';
import type { CapabilityStateInput, CatalogTx, VideoCapabilityRow } from '../store/catalog/types.js';
import { emitVideoEvent } from './webhook-events.js';

/** Still to run: a video with one of these is processing. */
const OPEN: readonly CapabilityStatus[] = ['pending', 'running'];

export const isOpen = (status: CapabilityStatus) => OPEN.includes(status);

/**
 * Queues the capabilities of `rerun` (default: all of the plan) for a video: each one that can run
 * here is pending, each that cannot is skipped with its reason, and each lane with one pending gets
 * a job. The video is processing from then on. Answers the lanes queued.
 */
export async function queueAnalysis(
  tx: CatalogTx,
  video: { id: string; owner?: string },
  plan: PlannedCapability[],
  rerun: ReadonlySet<string> = new Set(plan.map((p) => p.name)),
): Promise<LaneName[]> {
  const states: CapabilityStateInput[] = plan
    .filter((p) => rerun.has(p.name))
    .map((p) => (p.available ? { capability: p.name, status: 'pending', version: p.version } : { capability: p.name, status: 'skipped', version: p.version, message: p.reason ?? null }));
  await tx.analysis.set(video.id, states);
  const lanes = LANES.filter((l) => states.some((s) => s.status === 'pending' && plan.find((p) => p.name === s.capability)?.lane === l.name));
  for (const lane of lanes) await tx.queue.enqueue(lane.jobKind, video.id, undefined, video.owner);
  await tx.videos.markProcessing(video.id);
  if (!lanes.length) await settleVideo(tx, video.id, {});
  return lanes.map((l) => l.name);
}

export interface Settlement {
  /** The whole video's tags (SPEC §3), when the lane made them anew. */
  tagsJson?: string | null;
  /** The picture lane could not make segments: the video failed with this message. */
  failed?: string;
}

/**
 * Where a video's processing settles, in the transaction of the lane that settles it: 'failed'
 * when its segments could not be made, 'processed' once no capability is pending or running, else
 * still 'processing' (its tags stored as they are so far). Answers the status it left.
 */
export async function settleVideo(tx: CatalogTx, videoId: string, s: Settlement): Promise<'processing' | 'processed' | 'failed'> {
  if (s.failed !== undefined) {
    await tx.videos.markFailed(videoId, s.failed);
    await emitVideoEvent(tx, 'video.failed', videoId); // webhooks: the outbox row, in this transaction
    return 'failed';
  }
  const rows = await tx.analysis.forVideo(videoId);
  if (rows.some((r) => isOpen(r.status))) {
    if (s.tagsJson !== undefined) await tx.videos.setTags(videoId, s.tagsJson);
    return 'processing';
  }
  const video = await tx.videos.byId(videoId);
  // Failed stays failed: its picture lane made no segments (a later lane that ends has nothing to add).
  if (video?.status === 'failed') return 'failed';
  await tx.videos.markProcessed(videoId, s.tagsJson !== undefined ? s.tagsJson : (video?.tags_json ?? null));
  await emitVideoEvent(tx, 'video.processed', videoId); // webhooks: the outbox row, in this transaction
  return 'processed';
}

/** The progress of a video whose lane `lane` is `fraction` done: the mean over its lanes (a lane with nothing open counts as done). */
export function progressOf(rows: VideoCapabilityRow[], lanes: Map<string, LaneName>, lane: LaneName, fraction: number): number {
  const active = LANES.filter((l) => rows.some((r) => lanes.get(r.capability) === l.name));
  if (!active.length) return 99 * fraction;
  const parts = active.map((l) => (l.name === lane ? fraction : rows.some((r) => lanes.get(r.capability) === l.name && isOpen(r.status)) ? 0 : 1));
  return (99 * parts.reduce((a, b) => a + b, 0)) / active.length;
}

/** Whether a video's picture lane is done (its segments are in the store): it answers searches. */
export function searchable(rows: VideoCapabilityRow[], lanes: Map<string, LaneName>): boolean {
  const pictures = rows.filter((r) => laneOf(lanes.get(r.capability) ?? 'pictures').searchable);
  return pictures.length > 0 && pictures.every((r) => !isOpen(r.status)) && pictures.some((r) => r.status === 'done');
}
