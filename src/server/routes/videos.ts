/** Videos: upload into a collection, list, status, details, delete, reprocess, thumbnail, the file itself. */
import { formatTranscript, TRANSCRIPT_MEDIA_TYPES } from '../../speech/format.js';
import { createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { BadRequestError, NotFoundError, PayloadTooLargeError, RangeNotSatisfiableError, VidembedError } from '../../api/errors.js';
import { schemas } from '../../api/schemas.js';
import type { VideoFile } from '../../services/index.js';
import { isTransient } from '../../store/unavailable.js';
import { partialUploadPath } from '../uploads.js';
import { collectionParam, type RoutesOptions } from '../plumbing.js';

export const videoRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who, uploadsDir, maxUploadBytes } = ctx;
  routes.add(
    app,
    { method: 'POST', url: '/collections/:collection_id/videos/upload', operationId: 'uploadVideo', tags: ['videos', 'collections'], errors: [400, 404, 409, 413, 414, 422], mediaErrors: true, summary: 'upload a video file (multipart, part "file"); a file without moving pictures (text, a still image, audio only) is refused (422 invalid_media) and not stored', schema: schemas.uploadVideo, status: 202, multipart: true },
    async (request) => {
      const principal = who(request);
      const collectionId = (await services.collections.get(principal, collectionParam(request.params))).id; // 404 before reading any bytes
      if (!request.isMultipart()) throw new BadRequestError('expected multipart/form-data with one part named "file"');
      let saved: { path: string; filename: string } | undefined;
      try {
        for await (const part of request.parts()) {
          if (part.type !== 'file') continue;
          if (part.fieldname !== 'file') {
            part.file.resume();
            throw new BadRequestError(`unexpected file part "${part.fieldname}": send one part named "file"`);
          }
          if (saved) {
            part.file.resume();
            throw new BadRequestError('more than one "file" part: send exactly one');
          }
          const tmp = partialUploadPath(uploadsDir);
          saved = { path: tmp, filename: path.basename(part.filename || 'upload').replace(/[\u0000-\u001f]/g, '') || 'upload' };
          await pipeline(part.file, createWriteStream(tmp));
          if (part.file.truncated) throw new PayloadTooLargeError(`file is over the ${maxUploadBytes}-byte upload limit`);
        }
        if (!saved) throw new BadRequestError('missing multipart part "file"');
        const { force, skip_duplicates } = request.query;
        return await services.videos.upload(principal, collectionId, { path: saved.path, filename: saved.filename, move: true, force: force === true, skipDuplicates: skip_duplicates === true });
      } catch (err) {
        // The multipart parser's own failures (no boundary, a body cut off mid-part) are the client's.
        if (err instanceof VidembedError || (err as { statusCode?: number }).statusCode || isTransient(err)) throw err;
        if (err instanceof Error && !(err as NodeJS.ErrnoException).syscall) throw new BadRequestError(`malformed multipart body: ${err.message}`);
        throw err;
      } finally {
        if (saved) await unlink(saved.path).catch(() => {});
      }
    },
  );
  routes.add(
    app,
    { method: 'GET', url: '/videos/:video_id/status', operationId: 'getVideoStatus', tags: ['videos'], errors: [400, 404, 414], summary: "a video's processing status", schema: schemas.videoStatus },
    async (request) => services.videos.status(who(request), request.params.video_id),
  );
  routes.add(
    app,
    { method: 'GET', url: '/collections/:collection_id/videos', operationId: 'listVideos', tags: ['collections', 'videos'], errors: [400, 404, 409, 414, 422], summary: "a collection's videos, newest first", schema: schemas.listVideos },
    async (request) => services.videos.list(who(request), collectionParam(request.params), request.query),
  );
  routes.add(
    app,
    {
      method: 'GET',
      url: '/videos',
      operationId: 'findVideos',
      tags: ['videos'],
      errors: [400, 404, 409, 414, 422],
      summary: 'videos by name: a video id, a file name or a path in place (card-01/C0001.MP4); every match, for the caller to choose from',
      schema: schemas.findVideos,
    },
    async (request) => services.videos.find(who(request), request.query.name, { collection: request.query.collection }),
  );
  routes.add(
    app,
    { method: 'GET', url: '/videos/:video_id', operationId: 'getVideo', tags: ['videos'], errors: [400, 404, 414], summary: 'a video: metadata, tags and segments with what the engine saw in each', schema: schemas.videoDetails },
    async (request) => services.videos.details(who(request), request.params.video_id),
  );
  routes.add(
    app,
    { method: 'DELETE', url: '/videos/:video_id', operationId: 'deleteVideo', tags: ['videos'], errors: [400, 404, 414], summary: 'delete a video with its segments, vectors and file', schema: schemas.deleteVideo },
    async (request) => services.videos.delete(who(request), request.params.video_id),
  );
  routes.add(
    app,
    { method: 'POST', url: '/videos/:video_id/reprocess', operationId: 'reprocessVideo', tags: ['videos'], errors: [400, 404, 414], summary: 'process a video again', schema: schemas.reprocessVideo, status: 202 },
    async (request) => services.videos.reprocess(who(request), request.params.video_id),
  );
  routes.add(
    app,
    {
      method: 'GET',
      url: '/videos/:video_id/transcript',
      operationId: 'getVideoTranscript',
      tags: ['videos'],
      errors: [400, 404, 414, 422],
      summary: 'what is said in a video: words with times (json), or as txt, srt or vtt (?format=)',
      schema: schemas.videoTranscript,
      alsoAs: Object.values(TRANSCRIPT_MEDIA_TYPES).map((t) => t.split(';')[0]).filter((t) => t !== 'application/json'),
    },
    async (request, reply) => {
      const t = await services.videos.transcript(who(request), request.params.video_id);
      const format = request.query.format ?? 'json';
      if (format === 'json') return t;
      const body = formatTranscript(t, format, t.video_id);
      return reply.code(200).header('Content-Type', TRANSCRIPT_MEDIA_TYPES[format]).send(body);
    },
  );
  routes.add(
    app,
    {
      method: 'GET',
      url: '/videos/:video_id/thumbnail',
      operationId: 'getVideoThumbnail',
      tags: ['videos'],
      errors: [400, 404, 414, 422],
      summary: "a JPEG keyframe: the segment's at ?t=seconds, else the video's poster",
      schema: schemas.videoThumbnail,
      file: { mediaType: 'image/jpeg' },
    },
    async (request, reply) => {
      const jpeg = await services.videos.thumbnail(who(request), request.params.video_id, request.query.t);
      return reply.code(200).header('Content-Type', 'image/jpeg').header('Cache-Control', 'private, max-age=3600').send(jpeg);
    },
  );
  routes.add(
    app,
    {
      method: 'GET',
      url: '/videos/:video_id/file',
      operationId: 'getVideoFile',
      tags: ['videos'],
      errors: [400, 404, 414, 416],
      summary: 'the original file, with HTTP Range support (a browser can seek)',
      schema: schemas.videoFile,
      // A file whose name has no known video extension is served as application/octet-stream.
      file: { mediaType: ['video/*', 'application/octet-stream'], ranges: true },
    },
    async (request, reply) => sendFile(reply, await services.videos.file(who(request), request.params.video_id), request.headers.range),
  );
  routes.add(
    app,
    {
      method: 'GET',
      url: '/videos/:video_id/playback',
      operationId: 'getVideoPlayback',
      tags: ['videos'],
      errors: [400, 404, 414, 416],
      summary: "the playback copy (H.264 MP4) of a video whose own file browsers do not play, with HTTP Range support; GET /videos/{id} gives playback_url",
      schema: schemas.videoFile,
      file: { mediaType: 'video/mp4', ranges: true },
    },
    async (request, reply) => sendFile(reply, await services.videos.playbackFile(who(request), request.params.video_id), request.headers.range),
  );
};

const VIDEO_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.avi': 'video/x-msvideo',
  '.ogv': 'video/ogg',
  '.mpg': 'video/mpeg',
  '.mpeg': 'video/mpeg',
};

/**
 * Streams a file, whole (200) or the one byte range asked for (206, `Range: bytes=a-b`, `a-` or
 * `-n`); a range outside the file is 416. Several ranges in one request get the whole file.
 */
async function sendFile(reply: FastifyReply, file: VideoFile, range: string | undefined): Promise<FastifyReply> {
  try {
    return await sendOpened(reply, file, range);
  } catch (err) {
    await file.release?.(); // a file opened in place whose stream was never taken
    throw err;
  }
}

async function sendOpened(reply: FastifyReply, file: VideoFile, range: string | undefined): Promise<FastifyReply> {
  let size = file.size;
  if (file.path !== undefined) {
    const st = await stat(file.path).catch(() => undefined);
    if (!st) throw new NotFoundError('the video file is gone from the server');
    size = st.size;
  }
  const type = VIDEO_TYPES[path.extname(file.filename).toLowerCase()] ?? 'application/octet-stream';
  reply.header('Accept-Ranges', 'bytes').header('Content-Type', type);
  reply.header('Content-Disposition', `inline; filename*=UTF-8''${encodeURIComponent(file.filename)}`);
  const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
  if (m && (m[1] || m[2])) {
    let start: number;
    let end: number;
    if (m[1]) {
      start = Number(m[1]);
      end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    } else {
      start = Math.max(0, size - Number(m[2]));
      end = size - 1;
    }
    if (start >= size || start > end) {
      reply.header('Content-Range', `bytes */${size}`);
      throw new RangeNotSatisfiableError(`the range ${range} lies outside the file (${size} bytes)`);
    }
    reply.code(206).header('Content-Range', `bytes ${start}-${end}/${size}`).header('Content-Length', String(end - start + 1));
    return reply.send(file.open({ start, end }));
  }
  reply.code(200).header('Content-Length', String(size));
  return reply.send(file.open());
}
