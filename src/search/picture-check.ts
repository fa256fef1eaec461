/**
 * Search by picture, checked by geometry: the picture embedding loses a cropped, colour-shifted
 * copy (a 70 % crop with its hues turned lands among unrelated pictures), but the copy's corners
 * are still there, in the same arrangement. The top candidates of the embedding (by pre-rank) have
 * their stored keyframes compared with the query picture: keypoints on luma (colour-invariant where
 * a shift keeps the order of neighbouring pixels: src/media/kernels/keypoints.ts), matched and
 * checked for one crop-and-zoom geometry (src/media/kernels/match.ts). A candidate where enough
 * matches agree is a copy: its evidence says so (`inliers`, src/search/evidence.ts
 * exampleProbability) and it ranks by that.
 *
 * The cost is bounded: {@link PICTURE_CHECK}.videos candidates, {@link PICTURE_CHECK}.framesPerVideo
 * keyframes each (their most similar segments), the query's keypoints found once.
 */
import { detectKeypoints, frameToGray, matchPictures, type Keypoints } from '../media/kernels/index.js';
import type { Frame } from '../media/types.js';

export const PICTURE_CHECK = {
  /** Candidates (videos, best pre-rank first) whose keyframes are checked. */
  videos: 10,
  /** Keyframes checked per candidate: its segments most similar to the query. */
  framesPerVideo: 2,
  /** Side the query and keyframes are brought to (longer side, pixels) before keypoints. */
  side: 320,
  /** Keypoints per picture. */
  points: 300,
};

/** One candidate: a video and its segments to check (segment id, keyframe index), most similar first. */
export interface CheckCandidate {
  videoId: string;
  segments: Array<{ id: number; idx: number }>;
}

/** A video's keyframe at a segment index (undefined when none is stored). */
export type KeyframeSource = (videoId: string, idx: number) => Promise<Frame | undefined>;

/** Segment id → inliers of the geometry found between the query picture and its keyframe. */
export type PictureVerifier = (candidates: CheckCandidate[]) => Promise<Map<number, number>>;

/** Keypoints of a picture as the check reads it (luma at {@link PICTURE_CHECK}.side). */
export function pictureKeypoints(frame: Frame): Keypoints {
  return detectKeypoints(frameToGray(frame, PICTURE_CHECK.side), { maxPoints: PICTURE_CHECK.points });
}

/**
 * The verifier of one query picture: each candidate segment's keyframe matched against it. A
 * keyframe that cannot be read counts as no match (the embedding's order stands for it).
 */
export function pictureVerifier(query: Frame, keyframe: KeyframeSource): PictureVerifier {
  let q: Keypoints | undefined;
  return async (candidates) => {
    q ??= pictureKeypoints(query);
    const out = new Map<number, number>();
    for (const c of candidates) {
      for (const s of c.segments) {
        const frame = await keyframe(c.videoId, s.idx).catch(() => undefined);
        if (!frame) continue;
        out.set(s.id, matchPictures(q, pictureKeypoints(frame)).inliers);
      }
    }
    return out;
  };
}
