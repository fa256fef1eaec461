import type { TaskKind, TensorUploadRequest } from '../api/types.js';
import { MediaError } from '../api/errors.js';
import { extractAudio, probe, sampleFrames } from '../media/index.js';
import type { Frame } from '../media/types.js';
import { framesToTensor } from './tensors.js';

/** Builds the SPEC §4 tensor payload from a local video with ffmpeg (what `vidembed tensors` prints). */
export async function buildTensorPayload(
  file: string,
  opts: { service: TaskKind; fps: number; maxSide: number; start?: number; end?: number; requestId: string },
): Promise<TensorUploadRequest> {
  const media = await probe(file);
  if (!media.hasVideo) throw new MediaError(`${file} has no video stream`);
  const frames: Frame[] = [];
  for await (const f of sampleFrames(file, { fps: opts.fps, maxSide: Math.min(1024, opts.maxSide), start: opts.start, end: opts.end })) frames.push(f);
  if (frames.length === 0) throw new MediaError(`${file}: no frame could be decoded`);
  const payload: TensorUploadRequest = {
    service: opts.service,
    request_id: opts.requestId,
    video_input: framesToTensor(frames),
    video_kwargs: { fps: opts.fps, start: opts.start ?? 0, end: opts.end ?? media.durationSec, timestamps: frames.map((f) => f.t) },
  };
  if (opts.service === 'embedding' && media.hasAudio) {
    const audio = await extractAudio(file, { sampleRate: 16000, start: opts.start, end: opts.end });
    if (audio.length > 0) {
      payload.audio_input = {
        data: Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString('base64'),
        shape: [1, 1, audio.length],
        dtype: 'float32',
      };
    }
  }
  return payload;
}
