/**
 * The events webhooks report (issue 34), written to the outbox in the same transaction as the
 * state change they report: a video processed or failed, a task done or failed. Each site that
 * settles a video's or a task's status (src/services/jobs.ts) calls one of these in its
 * transaction — `emitVideoEvent` / `emitTaskEvent` inside a transaction it already has,
 * `failVideo` / `failTask` where marking failed was a lone write — so an event is sent exactly
 * when, and only if, its change committed. The bodies follow the Standard Webhooks payload
 * format: `{type, timestamp, data}` (docs/webhooks.md lists each event's data).
 */
import { newId } from '../store/ids.js';
import type { Catalog, CatalogTx } from '../store/catalog/types.js';
import type { NewWebhookEvent } from '../store/webhooks/types.js';

export type VideoEventType = 'video.processed' | 'video.failed';
export type TaskEventType = 'task.done' | 'task.failed';

/** An event for the outbox: a fresh message id (the `webhook-id` every attempt carries) and the body. */
export function webhookEvent(type: string, owner: string, collectionId: string | null, data: Record<string, unknown>): NewWebhookEvent {
  return { id: newId('msg'), type, owner, collection_id: collectionId, payload: JSON.stringify({ type, timestamp: new Date().toISOString(), data }) };
}

/** Writes `type` about the video as it now stands (in `tx`, after its status was written there). */
export async function emitVideoEvent(tx: CatalogTx, type: VideoEventType, videoId: string): Promise<void> {
  const video = await tx.videos.byId(videoId);
  const collection = video && (await tx.collections.byId(video.collection_id));
  if (!video || !collection) return;
  const data = {
    video_id: video.id,
    collection_id: collection.id,
    collection_name: collection.name,
    filename: video.filename,
    status: video.status,
    ...(video.duration !== null ? { duration: video.duration } : {}),
    ...(video.error_message ? { error_message: video.error_message } : {}),
  };
  await tx.webhooks.emit(webhookEvent(type, collection.owner, collection.id, data));
}

/** Writes `type` about the task as it now stands (in `tx`, after its status was written there). */
export async function emitTaskEvent(tx: CatalogTx, type: TaskEventType, taskId: string): Promise<void> {
  const task = await tx.tasks.byId(taskId);
  if (!task) return;
  const data = { request_id: task.id, kind: task.kind, status: task.status, ...(task.error_message ? { error_message: task.error_message } : {}) };
  await tx.webhooks.emit(webhookEvent(type, task.owner, null, data));
}

/** Marks a video failed and writes `video.failed`, in one transaction. */
export function failVideo(catalog: Pick<Catalog, 'transaction'>, videoId: string, message: string): Promise<void> {
  return catalog.transaction(async (tx) => {
    await tx.videos.markFailed(videoId, message);
    await emitVideoEvent(tx, 'video.failed', videoId);
  });
}

/** Marks a task failed and writes `task.failed`, in one transaction. */
export function failTask(catalog: Pick<Catalog, 'transaction'>, taskId: string, message: string): Promise<void> {
  return catalog.transaction(async (tx) => {
    await tx.tasks.fail(taskId, message);
    await emitTaskEvent(tx, 'task.failed', taskId);
  });
}
