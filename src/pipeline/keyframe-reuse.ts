/**
 * Keyframe reuse: a segment whose keyframe is nearly identical to the last keyframe the models
 * analysed in the same video (a locked-off shot, a pause, a slide that stays up) reuses what the
 * per-keyframe models found there — the object detector, faces, pose and framing cues of perception,
 * the ImageNet classes — with the same confidences, instead of running them again. The segment
 * says so (`reused_from`: the index of the segment whose keyframe was analysed). Colour, light,
 * camera movement and the rest of the segment are still measured on its own frames.
 *
 * "Nearly identical" = mean absolute difference of the two keyframes' 32-px-wide grey thumbnails
 * (box-averaged luma, the thumbnail perception already uses to notice change), on the 0–1 scale,
 * at most {@link KEYFRAME_REUSE}.maxDiff. The comparison is always with the last *analysed* keyframe,
 * never with a reused one, so a slow drift cannot chain small differences into a large one.
 */
import type { Frame } from '../media/types.js';
import { thumbnail } from '../models/perception/colour.js';

/**
 * Chosen on the tuning half of ../shared/eval with `node dist/eval/keyframe-reuse.js tuning`
 * (docs/engine.md, Keyframe reuse, has the figures).
 */
export const KEYFRAME_REUSE = {
  /** Thumbnail width (px). */
  thumbWidth: 32,
  /** Largest thumbnail difference (0–1) at which a keyframe reuses the analysed one's facts. */
  maxDiff: 0.01,
};

export interface KeyframeThumb {
  width: number;
  height: number;
  thumb: Uint8Array;
}

export function keyframeThumb(frame: Frame): KeyframeThumb {
  return { width: frame.width, height: frame.height, thumb: thumbnail(frame, KEYFRAME_REUSE.thumbWidth).thumb };
}

/** Mean absolute difference of two keyframe thumbnails in [0, 1]; 1 when the frame sizes differ. */
export function keyframeDiff(a: KeyframeThumb, b: KeyframeThumb): number {
  if (a.width !== b.width || a.height !== b.height || a.thumb.length !== b.thumb.length) return 1;
  let s = 0;
  for (let i = 0; i < a.thumb.length; i++) s += Math.abs(a.thumb[i] - b.thumb[i]);
  return s / a.thumb.length / 255;
}
