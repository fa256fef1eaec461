/**
 * Builds {@link FramingEvidence} for a frame by running the perception models directly (object
 * detector, BlazeFace with keypoints, MoveNet on the largest people) — what the perception layer
 * will hand the framing tagger once its observation carries these fields.
 */
import type { Frame } from '../src/media/types.js';
import { ObjectDetector } from '../src/models/perception/detector.js';
import { FaceDetector } from '../src/models/perception/faces.js';
import { PoseEstimator } from '../src/models/perception/pose.js';
import { framingEvidenceFromFrame, type FramingEvidence, type FramingPose } from '../src/tagging/framing.js';

export interface EvidenceTimings {
  detector: number;
  faces: number;
  pose: number;
  pixels: number;
}

export class FramingEvidenceBuilder {
  private readonly detector = new ObjectDetector();
  private readonly faces = new FaceDetector();
  private readonly pose = new PoseEstimator();
  readonly ms: EvidenceTimings = { detector: 0, faces: 0, pose: 0, pixels: 0 };

  async load(): Promise<void> {
    await Promise.all([this.detector.load(), this.faces.load(), this.pose.load()]);
  }

  /** Detections + pixel cues of one frame. `maxPoses` people (largest first) get a pose. */
  async build(frame: Frame, maxPoses = 1): Promise<FramingEvidence> {
    let t = performance.now();
    const objects = await this.detector.detect(frame);
    this.ms.detector += performance.now() - t;
    t = performance.now();
    const faces = await this.faces.detect(frame, 0.5);
    this.ms.faces += performance.now() - t;
    t = performance.now();
    const persons = objects
      .filter((o) => o.label === 'person' && o.score >= 0.4 && o.box.w * o.box.h >= 0.01)
      .sort((a, b) => b.box.w * b.box.h - a.box.w * a.box.h)
      .slice(0, maxPoses);
    const poses: FramingPose[] = [];
    for (const p of persons) {
      const pose = await this.pose.estimate(frame, p.box);
      poses.push({ score: pose.score, box: p.box, keypoints: pose.keypoints });
    }
    this.ms.pose += performance.now() - t;
    t = performance.now();
    const ev = framingEvidenceFromFrame(frame, { faces, objects, poses });
    this.ms.pixels += performance.now() - t;
    return ev;
  }

  async dispose(): Promise<void> {
    await Promise.all([this.detector.dispose(), this.faces.dispose(), this.pose.dispose()]);
  }
}

/** Crops a frame (box in normalised coordinates), as a new packed RGB24 frame. */
export function cropFrame(frame: Frame, box: { x: number; y: number; w: number; h: number }): Frame {
  const x0 = Math.max(0, Math.min(frame.width - 1, Math.round(box.x * frame.width)));
  const y0 = Math.max(0, Math.min(frame.height - 1, Math.round(box.y * frame.height)));
  const x1 = Math.max(x0 + 1, Math.min(frame.width, Math.round((box.x + box.w) * frame.width)));
  const y1 = Math.max(y0 + 1, Math.min(frame.height, Math.round((box.y + box.h) * frame.height)));
  const w = x1 - x0;
  const h = y1 - y0;
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    const src = ((y0 + y) * frame.width + x0) * 3;
    data.set(frame.data.subarray(src, src + w * 3), y * w * 3);
  }
  return { t: frame.t, width: w, height: h, data };
}

/**
 * Rotates a frame by `deg` (positive = counter-clockwise on screen, the horizon convention) about
 * its centre, bilinear, and crops the largest centred rectangle of the same aspect ratio that
 * holds no blank corners: a Dutch-angle version of the shot.
 */
export function rotateFrame(frame: Frame, deg: number): Frame {
  const { width: W, height: H, data } = frame;
  const a = (deg * Math.PI) / 180;
  const c = Math.cos(a);
  const s = Math.sin(a);
  // Largest axis-aligned W'×H' (same aspect) inside the rotated W×H: scale k.
  const k = Math.min(W / (W * Math.abs(c) + H * Math.abs(s)), H / (W * Math.abs(s) + H * Math.abs(c)));
  const w = Math.max(1, Math.floor(W * k));
  const h = Math.max(1, Math.floor(H * k));
  const out = new Uint8Array(w * h * 3);
  const cx = (W - 1) / 2;
  const cy = (H - 1) / 2;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      // Output pixel relative to the centre; rotate back into the source (y axis points down, so
      // a counter-clockwise turn on screen is a clockwise turn in these coordinates).
      const dx = x - (w - 1) / 2;
      const dy = y - (h - 1) / 2;
      const sx = cx + dx * c - dy * s;
      const sy = cy + dx * s + dy * c;
      const x0 = Math.max(0, Math.min(W - 2, Math.floor(sx)));
      const y0 = Math.max(0, Math.min(H - 2, Math.floor(sy)));
      const fx = Math.max(0, Math.min(1, sx - x0));
      const fy = Math.max(0, Math.min(1, sy - y0));
      for (let ch = 0; ch < 3; ch++) {
        const p00 = data[(y0 * W + x0) * 3 + ch];
        const p01 = data[(y0 * W + x0 + 1) * 3 + ch];
        const p10 = data[((y0 + 1) * W + x0) * 3 + ch];
        const p11 = data[((y0 + 1) * W + x0 + 1) * 3 + ch];
        out[(y * w + x) * 3 + ch] = Math.round((1 - fy) * ((1 - fx) * p00 + fx * p01) + fy * ((1 - fx) * p10 + fx * p11));
      }
    }
  }
  return { t: frame.t, width: w, height: h, data: out };
}
