import { rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BadRequestError, NotFoundError, ValidationError } from '../api/errors.js';
import type { VideoSource } from '../api/types.js';
import { fetchVideoToFile, type FetchPolicy } from '../net/fetch-video.js';
import { makeTempDir } from '../util/temp.js';

export interface ResolvedSource {
  file: string;
  /** What the caller knows the source as (their path, the URL's file name, "video_base64"): errors name this. */
  displayName: string;
  /** Removes anything created to hold the source (temp files of base64 or URL sources). */
  cleanup(): Promise<void>;
}

const BASE64_RE = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

/** Turns exactly one of video_path / video_base64 / video_url into a local file. */
export async function resolveVideoSource(
  src: VideoSource,
  opts: { allowPath: boolean; fetchPolicy: FetchPolicy; maxBytes: number },
): Promise<ResolvedSource> {
  const given = (['video_path', 'video_base64', 'video_url'] as const).filter((k) => src[k] !== undefined && src[k] !== null);
  if (given.length !== 1) {
    throw new ValidationError([
      { loc: ['body'], msg: 'give exactly one of video_url or video_base64', type: 'value_error.missing' },
    ]);
  }
  const noop = async () => {};
  if (given[0] === 'video_path') {
    if (!opts.allowPath) throw new ValidationError([{ loc: ['body', 'video_path'], msg: 'not accepted here', type: 'value_error' }]);
    const file = path.resolve(String(src.video_path));
    const st = await stat(file).catch(() => undefined);
    if (!st) throw new NotFoundError(`file not found: ${src.video_path}`);
    if (!st.isFile()) throw new BadRequestError(`not a file: ${src.video_path}`);
    return { file, displayName: String(src.video_path), cleanup: noop };
  }
  const dir = await makeTempDir('src');
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const file = path.join(dir, 'input');
    if (given[0] === 'video_base64') {
      const text = src.video_base64;
      if (typeof text !== 'string') throw new ValidationError([{ loc: ['body', 'video_base64'], msg: 'must be a string', type: 'type_error.str' }]);
      const body = text.replace(/^data:[^,]*;base64,/, '');
      if (!BASE64_RE.test(body)) throw new BadRequestError('video_base64 is not valid base64');
      const bytes = Buffer.from(body, 'base64');
      if (bytes.length === 0) throw new BadRequestError('video_base64 holds no bytes: it is not valid base64');
      await writeFile(file, bytes);
    } else {
      if (typeof src.video_url !== 'string') throw new ValidationError([{ loc: ['body', 'video_url'], msg: 'must be a string', type: 'type_error.str' }]);
      await fetchVideoToFile(src.video_url, file, { ...opts.fetchPolicy, maxBytes: opts.maxBytes });
    }
    const displayName = given[0] === 'video_base64' ? 'video_base64' : urlFileName(String(src.video_url));
    return { file, displayName, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

function urlFileName(url: string): string {
  try {
    return decodeURIComponent(path.posix.basename(new URL(url).pathname)) || 'video_url';
  } catch {
    return 'video_url';
  }
}
