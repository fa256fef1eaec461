/** Async tasks (embedding, tagging) and the tensor uploads they may name. */
import { NotFoundError, ValidationError } from '../api/errors.js';
import { canSee, type Principal } from '../api/principal.js';
import type { AsyncStatusResponse, AsyncSubmitRequest, AsyncSubmitResponse, TaskKind, TensorUploadRequest, TensorUploadResponse } from '../api/types.js';
import { checkJobLimit } from '../api/limits.js';
import { newId } from '../store/ids.js';
import { storeTensorUpload, tensorKeyOwner } from '../engine/tensors.js';
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
    await this.lib.catalog.transaction(async (tx) => {
      await tx.tasks.insert(id, kind, req, p.owner);
      await tx.queue.enqueue(kind === 'embedding' ? 'task.embedding' : 'task.tagging', id, undefined, p.owner);
    });
    await this.lib.onWorkQueued();
    return { request_id: id, status: 'pending' };
  }

  async uploadTensors(p: Principal, req: TensorUploadRequest): Promise<TensorUploadResponse> {
    return storeTensorUpload(req, this.lib.blobs, this.lib.maxTensorBytes, p.owner);
  }

  async status(p: Principal, requestId: string): Promise<AsyncStatusResponse> {
    const t = await this.lib.catalog.tasks.byId(requestId);
    if (!t || !canSee(p, t.owner)) throw new NotFoundError(`task not found: ${requestId}`);
    const out: AsyncStatusResponse = { request_id: t.id, status: t.status };
    if (t.status === 'completed' && t.result_json) Object.assign(out, JSON.parse(t.result_json));
    if (t.status === 'failed') out.error_message = t.error_message ?? 'failed';
    return out;
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
