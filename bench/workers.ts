/**
 * `npm run bench -- workers`: ingest throughput of 1 and 2 `vidembed worker` processes on one
 * library (the "1 vs 2 workers on this 2-core machine"). Each run: a fresh home, the same
 * 8 clips (12 s of 720p h264, a window panning over different eval photos) uploaded with no worker
 * started, then K worker processes with `--idle-exit 1`; wall time from their start until every
 * video is processed. Load average is reported beside (other work on the machine counts).
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalEngine } from '../src/runtime/engine.js';
import { benchDir, makeMovingPhotoClip, round } from './util.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/vidembed');
const PHOTOS = [
  'plasma-workspace-wallpapers__Path_1920x1080.jpg',
  'plasma-workspace-wallpapers__Kite_1920x1080.jpg',
  'plasma-workspace-wallpapers__EveningGlow_1920x1080.jpg',
  'plasma-workspace-wallpapers__ColorfulCups_2560x1600.jpg',
  'mate-backgrounds__Dune.jpg',
  'lomiri-wallpapers-16.04__aitzgorri_by_Aitzol_Berasategi.jpg',
  'opencv-doc__home.jpg',
  'python3-skimage__astronaut.jpg',
];

async function runWorkers(clips: string[], workers: number, dir: string): Promise<{ wall_s: number; videos: number; load_start: number; load_end: number }> {
  const home = path.join(dir, `home-${workers}`);
  const env = { ...process.env, VIDEMBED_HOME: home, VIDEMBED_NO_AUTO_WORKER: '1' };
  const engine = new LocalEngine({ home });
  try {
    const id = (await engine.createCollection({ name: 'bench' })).collection_id;
    for (const clip of clips) await engine.uploadVideo(id, { path: clip, filename: path.basename(clip) });
  } finally {
    await engine.close();
  }
  const loadStart = os.loadavg()[0];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: workers }, () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, 'worker', '--idle-exit', '1'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
        child.on('error', reject);
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited with ${code}`))));
      }),
    ),
  );
  const wall = (performance.now() - t0) / 1000 - 1; // less the idle second before each exits
  const check = new LocalEngine({ home });
  try {
    const videos = await check.listVideos('bench', { limit: 1000 });
    const processed = videos.filter((v) => v.status === 'processed').length;
    if (processed !== clips.length) throw new Error(`${processed} of ${clips.length} videos processed with ${workers} worker(s)`);
    return { wall_s: round(wall), videos: processed, load_start: round(loadStart), load_end: round(os.loadavg()[0]) };
  } finally {
    await check.close();
  }
}

export async function benchWorkers(seconds = 12): Promise<Record<string, unknown>> {
  const dir = benchDir();
  try {
    const clips = PHOTOS.map((photo, i) =>
      makeMovingPhotoClip(path.join(dir, `clip${i}.mp4`), { seconds, width: 1280, height: 720, photo: path.resolve(process.cwd(), '../shared/eval/photos', photo) }),
    );
    const one = await runWorkers(clips, 1, dir);
    const two = await runWorkers(clips, 2, dir);
    return {
      clips: `${clips.length} x ${seconds} s 1280x720 h264 30 fps`,
      cpus: os.cpus().length,
      one_worker: { ...one, footage_seconds_per_second: round((clips.length * seconds) / one.wall_s) },
      two_workers: { ...two, footage_seconds_per_second: round((clips.length * seconds) / two.wall_s) },
      speedup: round(one.wall_s / two.wall_s),
      target_speedup: 1.6,
      note: 'one worker already runs decoding, pixel tagging (a thread) and the models at once; the second shares the same 2 cores',
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
