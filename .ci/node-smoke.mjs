// The Node LTS lines vidembed supports (package.json engines), each run as
// `npx -p node@N node .ci/node-smoke.mjs` by .ci/node-lines: the CLI starts, and one clip is
// uploaded, processed and found. The catalog is a throwaway PostgreSQL cluster: this machine's
// better-sqlite3 is built for the Node that ran `npm install`, and a native module built for one
// Node line does not load in another (everything else vidembed loads is JavaScript, WebAssembly or
// N-API, which every line loads).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { startThrowawayCluster } = await import(path.join(root, 'dist/src/store/pg/throwaway.js'));
const { runFfmpeg } = await import(path.join(root, 'dist/src/media/ffmpeg.js'));

const dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-node-smoke-'));
const cluster = await startThrowawayCluster();
// The worker is this script's own (no background worker is started for the upload), so it is
// stopped here before its database is: one left behind would outlive the cluster.
let worker;
try {
  const env = { ...process.env, VIDEMBED_HOME: path.join(dir, 'home'), VIDEMBED_DATABASE_URL: cluster.url(), VIDEMBED_NO_AUTO_WORKER: '1', CI: '1' };
  worker = spawn(process.execPath, [path.join(root, 'bin/vidembed'), 'worker'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const cli = (...args) => execFileSync(process.execPath, [path.join(root, 'bin/vidembed'), ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const version = cli('--version').trim();
  const clip = path.join(dir, 'clip.mp4');
  const made = await runFfmpeg(['-y', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=10:duration=2', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'ultrafast', clip], { stdout: false });
  if (made.code !== 0) throw new Error(`ffmpeg: ${made.stderr}`);
  cli('collection', 'create', 'smoke');
  const up = JSON.parse(cli('upload', clip, '--collection', 'smoke', '--wait', '--json'));
  if (up.status !== 'processed') throw new Error(`upload: ${JSON.stringify(up)}`);
  const found = JSON.parse(cli('search', 'a test pattern', '--collection', 'smoke', '--json'));
  if (found.results[0]?.video_id !== up.video_id) throw new Error(`search: ${JSON.stringify(found)}`);
  console.log(`node ${process.versions.node}: vidembed ${version} starts, ingests one clip and finds it`);
} finally {
  if (worker && worker.exitCode === null && worker.signalCode === null) {
    worker.kill('SIGTERM');
    await once(worker, 'exit');
  }
  cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
