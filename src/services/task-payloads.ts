/**
 * An async task's payload is a blob, not part of its database row (issue 21): a `video_base64`
 * request (megabytes) is stored under `tasks/<owner>/<request_id>/video_base64` and the row keeps
 * the rest of the request with the blob's key. The worker joins them again, exactly as submitted;
 * the blob is deleted when the task settles, is deleted, or expires.
 */
import type { AsyncSubmitRequest } from '../api/types.js';
import type { BlobStore } from '../store/blobs.js';

/** The row's stand-in for the payload that went to the blob store. */
const BLOB_FIELD = 'video_base64_blob';

/** Where a task's blobs live (all of them go with `deletePrefix`). */
export function taskBlobPrefix(owner: string, requestId: string): string {
  return `tasks/${owner}/${requestId}`;
}

/** The request as the row keeps it, and the payload blob to store first (none without `video_base64`). */
export function splitTaskPayload(owner: string, requestId: string, req: AsyncSubmitRequest): { row: Record<string, unknown>; blob?: { key: string; data: Buffer } } {
  const { video_base64: payload, ...rest } = req as AsyncSubmitRequest & { video_base64?: unknown };
  if (typeof payload !== 'string') return { row: req as Record<string, unknown> };
  const key = `${taskBlobPrefix(owner, requestId)}/video_base64`;
  return { row: { ...rest, [BLOB_FIELD]: key }, blob: { key, data: Buffer.from(payload, 'utf8') } };
}

/** The request as it was submitted: the row's fields and, when it names one, the payload blob's text. */
export async function joinTaskPayload(blobs: BlobStore, requestJson: string): Promise<AsyncSubmitRequest> {
  const row = JSON.parse(requestJson) as Record<string, unknown>;
  const key = row[BLOB_FIELD];
  if (typeof key !== 'string') return row as AsyncSubmitRequest;
  const { [BLOB_FIELD]: _key, ...rest } = row;
  return { ...rest, video_base64: (await blobs.get(key)).toString('utf8') } as AsyncSubmitRequest;
}
