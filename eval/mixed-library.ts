/**
 * The mixed library, the one users have: a half's picture items (photos as 6 s still clips, videos
 * as they are) and its recorded speech under footage (eval/speech-data.ts: the recording after 1 s
 * of silence, under a generated test picture) in ONE collection, `eval-mixed-<half>`, ingested by
 * the real engine with pocketsphinx listening. Beside it, in the same engine home, the half's
 * picture-only collection (`eval-<half>`, eval/search-quality.ts) that the mixed figures are
 * compared with. Built once per home and reused (`--home`); re-scoring needs no re-ingest.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LocalEngine } from '../src/runtime/engine.js';
import { Worker } from '../src/runtime/worker.js';
import { findPocketsphinx } from '../src/speech/pocketsphinx.js';
import { sharedModelsDir, type CatalogRow } from './catalog.js';
import { pool } from './clips.js';
import { libraryFileName, stillClip } from './search-quality.js';
import { makeSpeechClip, type SpeechItem } from './speech-data.js';
import type { Half } from './split.js';

/** Seconds of silence before a recording starts in its clip (as the speech eval). */
export const TALK_LEAD = 1;

/** The file name a recording's clip has in the mixed library. */
export const talkFileName = (it: Pick<SpeechItem, 'name'>): string => `talk-${it.name}.mp4`;
export const isTalkFile = (filename: string): boolean => filename.startsWith('talk-');

export type Variant = 'base' | 'imagenet';
export const VARIANTS: Variant[] = ['base', 'imagenet'];

/** An engine on `home/<variant>`: without the ImageNet analyzer, or with it (pulled from ../shared/models). */
export async function openVariant(home: string, variant: Variant): Promise<LocalEngine> {
  const variantHome = join(home, variant);
  process.env.VIDEMBED_MODELS_DIR = join(variantHome, 'models');
  if (variant === 'imagenet') {
    delete process.env.VIDEMBED_NO_IMAGENET;
    const { ModelManager } = await import('../src/models/manager.js');
    await new ModelManager().pull('imagenet-mobilenet-v2', { from: join(sharedModelsDir(), 'imagenet-mobilenet-v2') });
  } else process.env.VIDEMBED_NO_IMAGENET = '1';
  return new LocalEngine({ home: variantHome });
}

export async function ensureMixedLibrary(engine: LocalEngine, home: string, rows: CatalogRow[], talks: SpeechItem[], half: Half, log: (s: string) => void = () => {}): Promise<string> {
  const name = `eval-mixed-${half}`;
  const existing = (await engine.listCollections({ limit: 1000 })).find((c) => c.name === name);
  if (existing && existing.video_count === rows.length + talks.length) return existing.id;
  if (existing) throw new Error(`${home} holds a partial ${name} collection: remove the directory and run again`);
  const clipDir = join(home, 'clips');
  mkdirSync(clipDir, { recursive: true });
  const id = (await engine.createCollection({ name })).collection_id;
  const pictures = await pool(rows, 2, async (r) => (r.kind === 'photo' ? stillClip(r.file, join(clipDir, `${r.name}.mp4`)) : r.file));
  for (let i = 0; i < rows.length; i++) await engine.uploadVideo(id, { path: pictures[i], filename: libraryFileName(rows[i]) });
  await addTalkClips(engine, home, id, talks, log, name);
  return id;
}

/**
 * Adds the recordings, each under footage, to a collection and processes everything waiting
 * (the e2e gate adds them to the picture-only library it has just measured: one library per run).
 */
export async function addTalkClips(engine: LocalEngine, home: string, collectionId: string, talks: SpeechItem[], log: (s: string) => void = () => {}, name = collectionId): Promise<void> {
  if (!findPocketsphinx()) throw new Error('the mixed library needs pocketsphinx: apt-get install pocketsphinx pocketsphinx-en-us');
  const clipDir = join(home, 'clips');
  mkdirSync(clipDir, { recursive: true });
  const talkFiles = await pool(talks, 2, async (it) => {
    const file = join(clipDir, talkFileName(it));
    if (!existsSync(file)) await makeSpeechClip(it.file, file, { lead: TALK_LEAD });
    return file;
  });
  for (let i = 0; i < talks.length; i++) await engine.uploadVideo(collectionId, { path: talkFiles[i], filename: talkFileName(talks[i]) });
  const t0 = performance.now();
  log(`  ${name}: ingesting with ${talks.length} talk clips…`);
  await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
  log(`  ${name}: ingested in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
