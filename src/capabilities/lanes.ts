/**
 * Lanes: each lane runs its capabilities as a job of its own kind, with its own priority. The
 * picture lane decodes the video once for every frame capability and what derives from them: when
 * it is done, the video is searchable. The speech lane decodes the soundtrack once for every track
 * capability and goes after the pictures: a worker's speech lane claims a job only when its picture
 * lane (the main loop) has nothing running or queued (src/runtime/worker.ts, ClaimOptions `after`),
 * its programs niced for when it does run beside them (a speech job that waited past
 * VIDEMBED_SIDE_LANE_WAIT_S). It joins what it heard to the segments when both are there — the
 * video's hits gain `said` then. Each lane runs one job at a time per worker (the worker's cores go
 * to that job's ffmpeg and models; more at once comes from more workers), so a lane declares no
 * concurrency of its own.
 */
import type { LaneName } from './types.js';

export interface LaneDecl {
  name: LaneName;
  /** The job kind that runs it (src/store/queue/types.ts JobKind). */
  jobKind: 'video.pictures' | 'video.speech';
  /** Niceness of the programs it starts (0: as the worker; 10: only what the other lanes leave). */
  nice: number;
  /** Once it is done the video answers searches (its segments exist). */
  searchable: boolean;
}

export const LANES: readonly LaneDecl[] = [
  { name: 'pictures', jobKind: 'video.pictures', nice: 0, searchable: true },
  { name: 'speech', jobKind: 'video.speech', nice: 10, searchable: false },
];

export const LANE_NAMES: readonly LaneName[] = LANES.map((l) => l.name);

export function laneOf(name: LaneName): LaneDecl {
  const lane = LANES.find((l) => l.name === name);
  if (!lane) throw new Error(`no lane "${name}"`);
  return lane;
}

/** The lane a job kind runs, if it is a lane's. */
export function laneOfJob(kind: string): LaneDecl | undefined {
  return LANES.find((l) => l.jobKind === kind);
}
