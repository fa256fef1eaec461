/**
 * Search by example: a picture or a moment as the query. A picture goes through the same analysis
 * and embedder as a keyframe during ingest (perception: facts → vector; CLIP: the vision tower), so
 * it lands in the collection's own vector space. A moment is a stored segment's vector (the segment
 * holding `t`) or, without `t`, the mean of a video's segment vectors.
 */
import { rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BadRequestError, MediaError, NotFoundError, PayloadTooLargeError, ValidationError, VidembedError } from '../api/errors.js';
import type { Analyzer } from '../analysis/types.js';
import { decodeImage } from '../media/index.js';
import { assertImageFile } from '../media/is-video.js';
import type { Frame } from '../media/types.js';
import type { Embedder } from '../embedders/types.js';
import { fetchVideoToFile, type FetchPolicy } from '../net/fetch-video.js';
import { analyzeFrames } from '../pipeline/pipeline.js';
import { makeTempDir } from '../util/temp.js';

/** Largest picture accepted as a query (decoded bytes). */
export const MAX_IMAGE_BYTES = 32 * 1024 ** 2;

export interface ImageQuery {
  image_base64?: string;
  image_url?: string;
  /** Local callers only (the CLI): a picture on this machine's disk. */
  image_path?: string;
}

const BASE64_RE = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

export function hasImage(q: ImageQuery): boolean {
  return [q.image_base64, q.image_url, q.image_path].some((v) => v !== undefined && v !== null);
}

/** Where the picture came from, in the caller's words (errors name it, never a temp path). */
function imageName(q: ImageQuery): string {
  if (q.image_path !== undefined) return path.basename(String(q.image_path));
  if (q.image_url !== undefined) {
    try {
      return decodeURIComponent(path.posix.basename(new URL(String(q.image_url)).pathname)) || 'image_url';
    } catch {
      return 'image_url';
    }
  }
  return 'image_base64';
}

/** The fetch guard speaks of video_url; here the field is image_url. */
function asImageUrlError(err: unknown): unknown {
  if (err instanceof ValidationError) {
    return new ValidationError(err.issues.map((i) => ({ ...i, loc: i.loc.map((l) => (l === 'video_url' ? 'image_url' : l)) })));
  }
  if (err instanceof VidembedError) err.message = err.message.replace(/video_url/g, 'image_url').replace(/the video\b/g, 'the image');
  return err;
}

/**
 * The query vector of a picture: decoded at the embedder's frame size, analysed as a one-frame
 * segment by the collection's analyzers, embedded by its embedder; with the decoded picture (the
 * geometric check reads it: src/search/picture-check.ts).
 */
export async function embedImageQuery(
  q: ImageQuery,
  embedder: Embedder,
  analyzers: Analyzer[],
  opts: { allowPath: boolean; fetchPolicy: FetchPolicy; signal?: AbortSignal },
): Promise<{ vector: Float32Array; frame: Frame }> {
  const given = (['image_base64', 'image_url', 'image_path'] as const).filter((k) => q[k] !== undefined && q[k] !== null);
  if (given.length > 1) throw new ValidationError([{ loc: ['body'], msg: 'give one image: image_base64 or image_url', type: 'value_error' }]);
  if (!(embedder.queryKinds ?? ['text']).includes('image')) {
    throw new ValidationError([{ loc: ['body', given[0]], msg: `the collection's model ${embedder.id} does not take pictures as queries`, type: 'value_error.query_kind' }]);
  }
  const name = imageName(q);
  let file: string;
  let dir: string | undefined;
  if (given[0] === 'image_path') {
    if (!opts.allowPath) throw new ValidationError([{ loc: ['body', 'image_path'], msg: 'not accepted here', type: 'value_error' }]);
    file = path.resolve(String(q.image_path));
    const st = await stat(file).catch(() => undefined);
    if (!st) throw new NotFoundError(`file not found: ${q.image_path}`);
    if (!st.isFile()) throw new BadRequestError(`not a file: ${q.image_path}`);
    if (st.size > MAX_IMAGE_BYTES) throw new PayloadTooLargeError(`${name} is over the ${MAX_IMAGE_BYTES}-byte limit for a query picture`);
  } else {
    dir = await makeTempDir('query');
    file = path.join(dir, 'image');
  }
  try {
    if (given[0] === 'image_base64') {
      if (typeof q.image_base64 !== 'string') throw new ValidationError([{ loc: ['body', 'image_base64'], msg: 'must be a string', type: 'type_error.str' }]);
      const body = q.image_base64.replace(/^data:[^,]*;base64,/, '');
      if (!BASE64_RE.test(body)) throw new BadRequestError('image_base64 is not valid base64');
      const bytes = Buffer.from(body, 'base64');
      if (bytes.length === 0) throw new BadRequestError('image_base64 holds no bytes: it is not valid base64');
      if (bytes.length > MAX_IMAGE_BYTES) throw new PayloadTooLargeError(`image_base64 is over the ${MAX_IMAGE_BYTES}-byte limit for a query picture`);
      await writeFile(file, bytes);
    } else if (given[0] === 'image_url') {
      if (typeof q.image_url !== 'string') throw new ValidationError([{ loc: ['body', 'image_url'], msg: 'must be a string', type: 'type_error.str' }]);
      await fetchVideoToFile(q.image_url, file, { ...opts.fetchPolicy, maxBytes: MAX_IMAGE_BYTES }).catch((err) => {
        throw asImageUrlError(err);
      });
    }
    await assertImageFile(file, name);
    const maxSide = Math.max(embedder.frameMaxSide, ...analyzers.map((a) => a.frameMaxSide));
    const frame = await decodeImage(file, maxSide, { signal: opts.signal }).catch((err) => {
      // ffmpeg's words name the temp file: say which picture, in the caller's terms.
      if (err instanceof MediaError) throw new MediaError(`${name} is not a picture ffmpeg can read`);
      throw err;
    });
    const analyzed = await analyzeFrames([{ ...frame, t: 0 }], embedder, { segmentSeconds: 1, fps: 1, analyzers, signal: opts.signal });
    return { vector: analyzed.segments[0].vector, frame };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/** The mean of unit vectors, re-normalised: each part of a query counts the same. */
export function combineQueryVectors(parts: Float32Array[]): Float32Array {
  const dim = parts[0].length;
  const out = new Float32Array(dim);
  for (const p of parts) {
    let n = 0;
    for (const x of p) n += x * x;
    n = Math.sqrt(n) || 1;
    for (let i = 0; i < dim; i++) out[i] += p[i] / n;
  }
  let n = 0;
  for (const x of out) n += x * x;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < dim; i++) out[i] /= n;
  return out;
}
