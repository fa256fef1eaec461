/**
 * A moment cut out of a video as its own file (the MCP server's `export_clip`, issue 34): H.264 and
 * AAC in MP4, cut at exactly `start`..`end` (re-encoded, not stream-copied, so the cut does not
 * snap to the keyframe before `start`), playable in browsers and editors (`+faststart`).
 */
import { MediaError } from '../api/errors.js';
import { BASE_ARGS, cleanLine, lastMeaningfulLine, runFfmpeg } from './ffmpeg.js';

export async function trimVideo(input: string, output: string, start: number, end: number, opts: { name?: string; signal?: AbortSignal } = {}): Promise<void> {
  if (!(end > start) || start < 0) throw new MediaError(`cannot cut ${start}–${end} s: the end must come after the start`);
  const args = [
    ...BASE_ARGS,
    '-y',
    '-ss', start.toFixed(3),
    '-i', input,
    '-t', (end - start).toFixed(3),
    '-map', '0:v:0',
    '-map', '0:a:0?',
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '160k',
    '-movflags', '+faststart',
    output,
  ];
  const r = await runFfmpeg(args, { signal: opts.signal, stdout: false });
  if (r.code !== 0) {
    const why = lastMeaningfulLine(r.stderr);
    throw new MediaError(`could not cut ${opts.name ?? 'the video'} at ${start}–${end} s${why ? `: ${cleanLine(why)}` : ''}`);
  }
}
