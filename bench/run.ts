/**
 * `npm run bench [-- section ...]`: performance figures as JSON on stdout (progress on stderr).
 * Sections: search, ingest, ingest_people, rss, http, media, clip, ocr, cli, scale1m, queue, workers, scale, pgvector, speech, playback, load, serve_worker, webhooks, lanes, goals. Default: all.
 */
import { benchSearch } from './search.js';
import { benchIngest, benchWorkerRss } from './ingest.js';
import { benchHttp } from './http.js';

const SECTIONS: Record<string, () => Promise<unknown>> = {
  search: () => benchSearch(),
  ingest: () => benchIngest(),
  // The same on footage with people (three faces in view: gender and expression are read).
  ingest_people: () => benchIngest(60, 'labelme-examples__2011_000006.jpg'),
  rss: () => benchWorkerRss(),
  http: () => benchHttp(),
  media: async () => (await import('./media.js')).benchMedia(),
  clip: async () => (await import('./clip.js')).benchClipPreprocess(),
  ocr: async () => (await import('./ocr.js')).benchOcr(),
  scale1m: async () => (await import('./scale.js')).benchScale1m(),
  cli: async () => (await import('./cli.js')).benchCli(),
  queue: async () => (await import('./queue.js')).benchQueue(),
  workers: async () => (await import('./workers.js')).benchWorkers(),
  // PostgreSQL search at 100k segments against SQLite's in-memory index; written-on-one-node to found-on-another.
  scale: async () => ({ memory_index: await (await import('./pg-scale.js')).benchPgScale(), pgvector: await (await import('./pgvector-scale.js')).benchPgvectorScale() }),
  pgvector: async () => (await import('./pgvector-scale.js')).benchPgvectorScale(),
  // Ingest with and without the speech analyzer (continuous speech, no speech, no audio); memory while hearing a long talk.
  speech: async () => (await import('./speech.js')).benchSpeech(),
  // Seconds of playback proxy per second of footage, on the eval videos browsers do not play.
  playback: async () => (await import('./playback.js')).benchPlayback(),
  // 12 synchronous encodes and 3 largest tensor uploads at once: every answer 200/429/503, /healthz p99.
  load: async () => (await import('./load.js')).benchLoad(),
  // /healthz p99 of a serve whose own worker processes a 10-minute video (and then also 12 sync encodes) over an idle serve's, same run.
  serve_worker: async () => (await import('./load.js')).benchServeWorker(),
  // 1,000 events to a loopback receiver, up and failing 30 % at random: exactly once after dedupe, signatures, latency.
  webhooks: async () => (await import('./webhooks.js')).benchWebhooks(),
  // Issue 31's lanes: searchable before speech is done (vs speech off), reindex after an ImageNet pull vs a full ingest, CMUdict in a new process.
  lanes: async () => (await import('./lanes.js')).benchLanes(),
  // Issue 31's goals (CLI warm search, HTTP 32 clients, silent 1080p ingest) for this build and VIDEMBED_BENCH_PREVIOUS's, same run.
  goals: async () => (await import('./goals.js')).benchGoals(),
};

async function main(): Promise<void> {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const names = asked.length ? asked : Object.keys(SECTIONS);
  const out: Record<string, unknown> = { machine: { cpus: (await import('node:os')).cpus().length, node: process.version } };
  const failed: string[] = [];
  for (const name of names) {
    const fn = SECTIONS[name];
    if (!fn) throw new Error(`unknown bench section ${name} (known: ${Object.keys(SECTIONS).join(', ')})`);
    process.stderr.write(`bench: ${name}...\n`);
    const t = Date.now();
    try {
      out[name] = await fn();
    } catch (err) {
      // Said on stderr at once and counted in the exit status: a section that died is never just a JSON field.
      out[name] = { error: (err as Error).message };
      failed.push(name);
      process.stderr.write(`bench: ${name} FAILED: ${(err as Error).message}\n`);
    }
    process.stderr.write(`bench: ${name} done in ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
  }
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  if (failed.length) throw new Error(`${failed.length} section(s) failed: ${failed.join(', ')}`);
}

// Node exits quietly with status 0 when its event loop empties while a promise still waits (a
// socket gone without an error, a child's pipe closed): then say so and fail instead.
let settled = false;
process.on('beforeExit', () => {
  if (settled) return;
  process.stderr.write('bench failed: the process ran out of work before the bench finished (a promise that can no longer settle)\n');
  process.exit(1);
});

main().then(
  () => {
    settled = true;
    process.exit(0);
  },
  (err) => {
    settled = true;
    process.stderr.write(`bench failed: ${err.message}\n`);
    process.exit(1);
  },
);
