/** Async tasks (embedding, tagging) and the tensor uploads they may name. */
import { NotFoundError, ValidationError } from '../api/errors.js';
import { canSee, type Principal } from '../api/principal.js';
import type { AsyncStatusResponse, AsyncSubmitRequest, AsyncSubmitResponse, TaskDeleteResponse, TaskKind, TensorUploadRequest, TensorUploadResponse } from '../api/types.js';
import { checkJobLimit } from '../api/limits.js';
import { newId } from '../store/ids.js';
import { checkStorageQuota } from './quota.js';
import { splitTaskPayload, taskBlobPrefix } from './task-payloads.js';
import { storeTensorUpload, tensorKeyOwner } from '../pipeline/tensors.js';
import type { AnalysisService } from './analysis.js';
import type { Library } from './library.js';

export class TasksService {
  constructor(
    private readonly lib: Library,
    private readonly analysis: AnalysisService,
  ) {}

  async submit(p: Principal, kind: TaskKind, req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    this.analysis.options(req); // an unknown model is the caller's error now, not a failed task later
    const sources = ['video_url', 'video_base64', 'video_path', 'tensor'].filter((k) => (req as Record<string, unknown>)[k] !== undefined);
    if (sources.length !== 1) {
      throw new ValidationError([{ loc: ['body'], msg: 'give exactly one of video_url, video_base64 or tensor', type: 'value_error.missing' }]);
    }
    if (req.tensor !== undefined) await this.checkTensorRef(p, kind, req.tensor);
    await checkJobLimit(p.limits, this.lib.catalog.queue, p.owner, 1);
    const id = newId('req');
    // A video_base64 payload goes to the blob store first; the row keeps the rest (task-payloads.ts).
    const { row, blob } = splitTaskPayload(p.owner, id, req);
    if (blob) await checkStorageQuota(this.lib, p, blob.data.length);
    if (blob) await this.lib.blobs.put(blob.key, blob.data);
    try {
      await this.lib.catalog.transaction(async (tx) => {
        await tx.tasks.insert(id, kind, row, p.owner);
        await tx.queue.enqueue(kind === 'embedding' ? 'task.embedding' : 'task.tagging', id, undefined, p.owner);
      });
    } catch (err) {
      if (blob) await this.lib.blobs.deletePrefix(taskBlobPrefix(p.owner, id)).catch(() => {});
      throw err;
    }
    await this.lib.onWorkQueued();
    return { request_id: id, status: 'pending' };
  }

  async uploadTensors(p: Principal, req: TensorUploadRequest): Promise<TensorUploadResponse> {
    return storeTensorUpload(req, this.lib.blobs, this.lib.maxTensorBytes, p.owner, (bytes) => checkStorageQuota(this.lib, p, bytes));
  }

  async status(p: Principal, requestId: string): Promise<AsyncStatusResponse> {
    const t = await this.lib.catalog.tasks.byId(requestId);
    if (!t || !canSee(p, t.owner)) throw new NotFoundError(`task not found: ${requestId}`);
    const out: AsyncStatusResponse = { request_id: t.id, status: t.status };
    if (t.status === 'completed' && t.result_json) Object.assign(out, JSON.parse(t.result_json));
    if (t.status === 'failed') out.error_message = t.error_message ?? 'failed';
    return out;
  }

  /**
   * Forgets a task: its row, result and payload; a task still waiting or running is cancelled (its
   * job fails; a worker running it writes nothing, its claim no longer holds the job).
   */
  async delete(p: Principal, requestId: string): Promise<TaskDeleteResponse> {
    const t = await this.lib.catalog.tasks.byId(requestId);
    if (!t || !canSee(p, t.owner)) throw new NotFoundError(`task not found: ${requestId}`);
    await this.lib.catalog.transaction(async (tx) => {
      await tx.queue.cancelFor(t.id);
      await tx.tasks.delete(t.id);
    });
    await this.lib.blobs.deletePrefix(taskBlobPrefix(t.owner, t.id));
    return { request_id: t.id, deleted: true };
  }

  /** Deletes one of the caller's tensor uploads (every part of it); another owner's is not found. */
  async deleteTensors(p: Principal, requestId: string): Promise<TaskDeleteResponse> {
    const base = `tensors/${p.owner}/${requestId}`;
    if (!(await this.lib.blobs.has(`${base}/video_input.bin`))) throw new NotFoundError(`no tensor upload with request_id ${requestId}`);
    await this.lib.blobs.deletePrefix(base);
    return { request_id: requestId, deleted: true };
  }

  /**
   * Deletes what has outlived the retention window: tasks settled before it (rows and blobs; at
   * most `limit` per call, oldest first) and tensor uploads last written before it (every part).
   * Workers call it while idle. Returns how many of each went.
   */
  async expire(now = Date.now(), limit = 500): Promise<{ tasks: number; tensorUploads: number }> {
    const cutoff = now - this.lib.retentionMs;
    const old = await this.lib.catalog.tasks.settledBefore(new Date(cutoff).toISOString(), limit);
    for (const t of old) {
      await this.lib.catalog.tasks.delete(t.id);
      await this.lib.blobs.deletePrefix(taskBlobPrefix(t.owner, t.id));
    }
    // An upload is the folder of its parts (tensors/OWNER/REQUEST_ID, or tensors/REQUEST_ID from before owners).
    const uploads = new Map<string, number>();
    for await (const { key, modifiedMs } of this.lib.blobs.listUnder('tensors')) {
      const folder = key.slice(0, key.lastIndexOf('/'));
      uploads.set(folder, Math.max(uploads.get(folder) ?? 0, modifiedMs));
    }
    let tensorUploads = 0;
    for (const [folder, at] of uploads) {
      if (at >= cutoff) continue;
      await this.lib.blobs.deletePrefix(folder);
      tensorUploads++;
    }
    return { tasks: old.length, tensorUploads };
  }

  /** Unknown keys are the caller's error (404) at submit time, not a failed task later. */
  private async checkTensorRef(p: Principal, kind: TaskKind, ref: NonNullable<AsyncSubmitRequest['tensor']>): Promise<void> {
    const optional = kind === 'embedding' ? 'audio_input_key' : 'video_kwargs_key';
    const keys: [string, string][] = [['video_input_key', ref.video_input_key!]];
    if (ref[optional] !== undefined) keys.push([optional, ref[optional]]);
    for (const [field, key] of keys) {
      const ext = field === 'video_kwargs_key' ? '.json' : '.bin';
      const owner = tensorKeyOwner(key);
      let exists = false;
      try {
        exists = owner !== undefined && canSee(p, owner) && (await this.lib.blobs.has(`${key}${ext}`));
      } catch {
        exists = false;
      }
      if (!exists) throw new NotFoundError(`unknown ${field}: ${key}`);
    }
  }
}
