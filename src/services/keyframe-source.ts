/**
 * A video's stored keyframes (src/pipeline/keyframes.ts) as the picture check reads them: the
 * index read once per video, each keyframe by byte range. A video without stored keyframes (one
 * ingested before they were kept) has none: the check leaves it to the embedding's order.
 */
import { KeyframeReader } from '../pipeline/keyframes.js';
import type { KeyframeSource } from '../search/picture-check.js';
import type { BlobStore } from '../store/blobs.js';
import { VIDEO_ARTIFACTS } from './artifacts.js';

/** A video's stored keyframes for reading (its index must exist). */
export async function keyframeReader(blobs: BlobStore, videoId: string): Promise<KeyframeReader> {
  const framesKey = VIDEO_ARTIFACTS.keyframeFrames(videoId);
  return new KeyframeReader(await blobs.get(VIDEO_ARTIFACTS.keyframeIndex(videoId)), async (start, end) => {
    const chunks: Buffer[] = [];
    for await (const c of blobs.stream(framesKey, { start, end })) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  });
}

/** Keyframes by video and segment index, each video's index read once (undefined: none stored). */
export function storedKeyframes(blobs: BlobStore): KeyframeSource {
  const readers = new Map<string, Promise<KeyframeReader | undefined>>();
  const readerOf = (videoId: string) => {
    let got = readers.get(videoId);
    if (!got) {
      got = blobs.has(VIDEO_ARTIFACTS.keyframeIndex(videoId)).then((has) => (has ? keyframeReader(blobs, videoId) : undefined));
      readers.set(videoId, got);
    }
    return got;
  };
  return async (videoId, idx) => {
    const reader = await readerOf(videoId);
    const entry = reader?.entries.find((e) => e.idx === idx);
    return entry && reader ? reader.frame(entry) : undefined;
  };
}
