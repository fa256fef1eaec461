/**
 * Lanes: each lane runs its capabilities as a job of its own kind, with its own concurrency and
 * priority. The picture lane decodes the video once for every frame capability and what derives
 * from them: when it is done, the video is searchable. The speech lane decodes the soundtrack once
 * for every track capability, at a lower priority (its programs are niced), and joins what it heard
 * to the segments when both are there — the video's hits gain `said` then.
 */
import type { LaneName } from './types.js';

export interface LaneDecl {
  name: LaneName;
  /** The job kind that runs it (src/store/queue/types.ts JobKind). */
  jobKind: 'video.pictures' | 'video.speech';
  /** Jobs of this lane one worker runs at once. */
  concurrency: number;
  /** Niceness of the programs it starts (0: as the worker; 10: only what the other lanes leave). */
  nice: number;
  /** Once it is done the video answers searches (its segments exist). */
  searchable: boolean;
}

export const LANES: readonly LaneDecl[] = [
  { name: 'pictures', jobKind: 'video.pictures', concurrency: 1, nice: 0, searchable: true },
  { name: 'speech', jobKind: 'video.speech', concurrency: 1, nice: 10, searchable: false },
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
