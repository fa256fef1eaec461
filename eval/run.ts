/**
 * `npm run eval [-- section ...]`: measures the taggers and the perception embedder on the shared
 * evaluation set (`../shared/eval` from the repository root). Prints one JSON document on stdout
 * and a human summary on stderr.
 *
 * Sections (default: all):
 *   shot_size   shot size confusion matrix, exact and within-one-step accuracy (catalog photos;
 *               per half of the held-out split in `shot_size_by_half`)
 *   angle       shooting angle confusion matrix and accuracy (catalog photos; `shooting_angle_by_half`)
 *   reliability confidence bins vs accuracy for shot size, angle and camera movement
 *   camera      camera movement on clips generated with ffmpeg from the photos (≥ 40)
 *   retrieval   caption → photo retrieval with the perception embedder (recall@1/@5, MRR)
 *   search      query → clip through the real engine (judged catalog + more/, 123 items), per half,
 *               per query column (`query`: what a person would type, else the caption; `caption`),
 *               with and without ImageNet: R@1/@5/MRR with 95 % bootstrap intervals, per kind,
 *               and the reliability of the confidence labels (`--half tuning` for one half; speech too)
 *   speech      spoken-phrase search over recorded speech through the engine and pocketsphinx:
 *               R@1, start within 1 s, word error rate, per half and band, clean / 20 dB / 10 dB
 *               (`speech clean` for the clean condition only)
 *   mixed       the library users have: picture items and recorded speech under footage in one
 *               collection (eval/mixed.ts), with and without ImageNet, per half: picture R@1/R@5
 *               mixed vs picture-only, spoken leaks by label, reliability per kind, phrase R@1;
 *               with `--home`, every query's results with their evidence are kept in
 *               HOME/mixed-<variant>-<half>.json for eval/fit-evidence.ts (`--variant base|imagenet`:
 *               one library only)
 *   picture     search by picture (issue 29): each item's picture cropped to 70 % and colour-shifted
 *               (and the milder change), searched on the picture-only library with ImageNet, before
 *               and after the geometric check in the same run: R@1/R@5 for photos, the eight
 *               photos (eval/example-queries.ts eightPhotos), video frames; ms a query (eval/picture-eval.ts)
 * Aliases: `framing` = shot_size + angle; `all`.
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { decodeImage } from '../src/media/frames.js';
import type { Frame } from '../src/media/types.js';
import { CAMERA_MOVEMENT_LABELS } from '../src/tagging/index.js';
import { SHOOTING_ANGLE_LABELS, SHOT_SIZE_LABELS } from '../src/tagging/framing.js';
import { evaluateCameraMovement, type CameraEvalResult } from './camera.js';
import { loadCatalog, loadSearchCatalog, MissingEvalDataError, requireEvalDir, type CatalogRow, type QueryColumn } from './catalog.js';
import { EVAL_FRAME_SIDE, evaluateFraming, type FramingEvalResult } from './framing-eval.js';
import { formatConfusion, formatReliability, type ConfusionReport } from './metrics.js';
import { evaluateRetrieval, type RetrievalResult } from './retrieval.js';
import { LocalEngine } from '../src/runtime/engine.js';
import { sharedModelsDir } from './catalog.js';
import { tempDir } from './clips.js';
import { ensureLibrary, evaluateSearchQuality, type SearchQuality } from './search-quality.js';
import { evaluateShortQueries } from './short-queries.js';
import { HALVES, inHalf, type Half } from './split.js';
import { commitOf, formatSearch } from './search-report.js';
import { evaluateSpeech, SPEECH_CONDITIONS, type SpeechEval } from './speech.js';
import { evaluateMixed, formatMixed, type MixedFigures } from './mixed.js';
import { ensureMixedLibrary, openVariant, VARIANTS } from './mixed-library.js';
import { loadSpeechItems } from './speech-data.js';
import { evaluatePictureQueries, formatPictureFigures, pictureFigures, type PictureFigures } from './picture-eval.js';
import { writeFileSync } from 'node:fs';

const SECTIONS = ['shot_size', 'angle', 'reliability', 'camera', 'retrieval', 'search', 'speech', 'mixed', 'picture'] as const;
type Section = (typeof SECTIONS)[number];
const ALIASES: Record<string, Section[]> = { framing: ['shot_size', 'angle'], all: [...SECTIONS], quality: ['search'], shot: ['shot_size'], camera_movement: ['camera'] };

function parseSections(argv: string[]): { sections: Set<Section>; verbose: boolean; home?: string; halves: Half[] } {
  const verbose = argv.includes('-v') || argv.includes('--verbose');
  const homeAt = argv.indexOf('--home');
  const home = homeAt >= 0 ? argv[homeAt + 1] : undefined;
  // `--half tuning`: search figures of the tuning half only (what tuning may look at).
  const halfAt = argv.indexOf('--half');
  const halves = halfAt >= 0 ? HALVES.filter((h) => h === argv[halfAt + 1]) : HALVES;
  if (halfAt >= 0 && !halves.length) throw new UsageError(`--half: choose from ${HALVES.join(', ')}`);
  const variantAt = argv.indexOf('--variant');
  const names = argv.filter((a, i) => !a.startsWith('-') && !(homeAt >= 0 && i === homeAt + 1) && !(halfAt >= 0 && i === halfAt + 1) && !(variantAt >= 0 && i === variantAt + 1) && !['clean', 'snr20', 'snr10'].includes(a));
  const out = new Set<Section>();
  for (const n of names.length ? names : ['all']) {
    const key = n.toLowerCase();
    if ((SECTIONS as readonly string[]).includes(key)) out.add(key as Section);
    else if (ALIASES[key]) for (const s of ALIASES[key]) out.add(s);
    else throw new UsageError(`unknown eval section "${n}"; choose from ${[...SECTIONS, ...Object.keys(ALIASES)].join(', ')}`);
  }
  return { sections: out, verbose, home, halves };
}

class UsageError extends Error {}

const err = (s: string): void => {
  process.stderr.write(s + '\n');
};

function pct(x: number | undefined): string {
  return x === undefined ? '-' : `${(100 * x).toFixed(1)}%`;
}

function confusionSummary<L extends string>(title: string, rep: ConfusionReport<L>, abbrev: (l: L) => string): string {
  const lines = [
    `${title}: accuracy ${pct(rep.accuracy)} (${rep.correct}/${rep.n})` +
      (rep.withinOneAccuracy !== undefined ? `, within one step ${pct(rep.withinOneAccuracy)}` : '') +
      `; majority baseline (${rep.majorityBaseline.label}) ${pct(rep.majorityBaseline.accuracy)}`,
    formatConfusion(rep, abbrev),
  ];
  return lines.join('\n');
}

const SHOT_ABBR: Record<string, string> = {
  extreme_close_up: 'ECU',
  close_up: 'CU',
  medium_close_up: 'MCU',
  medium: 'M',
  medium_wide: 'MW',
  wide: 'W',
  extreme_wide: 'EW',
};
const ANGLE_ABBR: Record<string, string> = { eye_level: 'eye', high_angle: 'high', low_angle: 'low', overhead: 'overhead', dutch: 'dutch' };
const MOVE_ABBR = (l: string): string => l.replace('pan_', 'p_').replace('tilt_', 't_').replace('zoom_', 'z_').slice(0, 8);

async function main(): Promise<void> {
  const { sections, verbose, home, halves } = parseSections(process.argv.slice(2));
  const dir = requireEvalDir();
  const catalog = loadCatalog(dir);
  const photos = catalog.filter((r) => r.kind === 'photo');
  const photo = (name: string): string => join(dir, 'photos', name);
  const log = verbose ? err : () => {};
  const t0 = performance.now();

  const frames = new Map<string, Frame>();
  const frameOf = async (row: CatalogRow): Promise<Frame> => {
    let f = frames.get(row.name);
    if (!f) {
      f = await decodeImage(row.file, EVAL_FRAME_SIDE);
      frames.set(row.name, f);
    }
    return f;
  };

  const needFraming = sections.has('shot_size') || sections.has('angle') || sections.has('reliability');
  const needCamera = sections.has('camera') || sections.has('reliability');
  let framing: FramingEvalResult | undefined;
  let camera: CameraEvalResult | undefined;
  let retrieval: RetrievalResult | undefined;

  if (needFraming) {
    err(`framing: ${photos.length} catalog photos (object detector, faces, pose, pixel cues)…`);
    framing = await evaluateFraming(photos, frameOf, log);
  }
  if (needCamera) {
    err('camera movement: generating clips with ffmpeg…');
    camera = await evaluateCameraMovement(photo, log);
  }
  if (sections.has('retrieval')) {
    err(`retrieval: embedding ${photos.length} photos with the perception embedder…`);
    retrieval = await evaluateRetrieval(photos, frameOf, log);
  }
  let search: Record<string, Partial<Record<Half, Record<QueryColumn, SearchQuality>>>> | undefined;
  if (sections.has('search')) {
    search = {};
    // The judged catalog and more/ (123 items); each half its own collection.
    const items = loadSearchCatalog(dir);
    // Without the ImageNet analyzer first (the offline default), then with it (pulled from ../shared/models).
    for (const variant of ['base', 'imagenet'] as const) {
      const variantHome = home ? join(home, variant) : tempDir(`vidembed-eval-${variant}-`).dir;
      err(`search (${variant === 'base' ? 'perception tier without ImageNet' : 'perception tier with the ImageNet analyzer'}): library in ${variantHome}`);
      process.env.VIDEMBED_MODELS_DIR = join(variantHome, 'models');
      if (variant === 'imagenet') {
        delete process.env.VIDEMBED_NO_IMAGENET;
        const { ModelManager } = await import('../src/models/manager.js');
        await new ModelManager().pull('imagenet-mobilenet-v2', { from: join(sharedModelsDir(), 'imagenet-mobilenet-v2') });
      } else process.env.VIDEMBED_NO_IMAGENET = '1';
      const engine = new LocalEngine({ home: variantHome });
      search[variant] = {};
      for (const half of halves) {
        const rows = inHalf(items, half);
        const id = await ensureLibrary(engine, rows, half, { home: variantHome, log: err });
        search[variant][half] = {
          query: { ...(await evaluateSearchQuality(engine, id, rows, half, log, 'query')), short: await evaluateShortQueries(engine, id, rows) },
          caption: await evaluateSearchQuality(engine, id, rows, half, log, 'caption'),
        };
      }
      await engine.close();
    }
  }

  let mixed: Record<string, Partial<Record<Half, Omit<MixedFigures, 'samples'>>>> | undefined;
  if (sections.has('mixed')) {
    mixed = {};
    const items = loadSearchCatalog(dir);
    const talks = loadSpeechItems();
    const mixedHome = home ?? tempDir('vidembed-eval-mixed-').dir;
    const only = process.argv.indexOf('--variant');
    for (const variant of VARIANTS.filter((v) => only < 0 || v === process.argv[only + 1])) {
      err(`mixed (${variant === 'base' ? 'without ImageNet' : 'with ImageNet'}): libraries in ${join(mixedHome, variant)}`);
      const engine = await openVariant(mixedHome, variant);
      mixed[variant] = {};
      try {
        for (const half of halves) {
          const rows = inHalf(items, half);
          const pictureOnly = await ensureLibrary(engine, rows, half, { home: join(mixedHome, variant), log: err });
          const mixedId = await ensureMixedLibrary(engine, join(mixedHome, variant), rows, talks.filter((t) => t.half === half), half, err);
          const { samples, ...figures } = await evaluateMixed(engine, { mixed: mixedId, pictureOnly }, rows, talks.filter((t) => t.half === half), half, log);
          if (home) writeFileSync(join(home, `mixed-${variant}-${half}.json`), JSON.stringify(samples));
          mixed[variant][half] = figures;
        }
      } finally {
        await engine.close();
      }
    }
  }

  let picture: Partial<Record<Half, PictureFigures[]>> | undefined;
  if (sections.has('picture')) {
    picture = {};
    const items = loadSearchCatalog(dir);
    const pictureHome = home ?? tempDir('vidembed-eval-picture-').dir;
    err(`picture (with ImageNet): libraries in ${join(pictureHome, 'imagenet')}`);
    const engine = await openVariant(pictureHome, 'imagenet');
    try {
      for (const half of halves) {
        const rows = inHalf(items, half);
        const id = await ensureLibrary(engine, rows, half, { home: join(pictureHome, 'imagenet'), log: err });
        const figures = pictureFigures(await evaluatePictureQueries(engine, id, rows, join(pictureHome, 'imagenet', 'picture-queries'), ['crop-shift', 'mild']), rows);
        err(formatPictureFigures(half, figures));
        picture[half] = figures;
      }
    } finally {
      await engine.close();
    }
  }

  let speech: SpeechEval | undefined;
  if (sections.has('speech')) {
    const conditions = process.argv.slice(2).filter((a) => SPEECH_CONDITIONS.some((c) => c.name === a));
    speech = await evaluateSpeech({ home: home ? join(home, 'speech') : undefined, conditions: conditions.length ? conditions : undefined, halves, log: err });
  }

  const out: Record<string, unknown> = {
    generatedAt: new Date().toISOString(),
    commit: commitOf(),
    machine: { cpus: cpus().length, node: process.version },
    sections: [...sections],
    data: { dir, photos: photos.length, shotLabelled: photos.filter((p) => p.shot).length, angleLabelled: photos.filter((p) => p.angle).length },
  };
  const strip = <T extends { reliability?: unknown }>(x: T): Omit<T, 'reliability'> => {
    const { reliability: _r, ...rest } = x;
    return rest;
  };
  err('');
  if (framing && sections.has('shot_size')) {
    out.shot_size = { ...strip(framing.shot_size), ms: framing.ms };
    err(confusionSummary('SHOT SIZE (catalog photos, rows = person, columns = tagger)', framing.shot_size, (l) => SHOT_ABBR[l] ?? l));
    // Per half of the held-out split: weights are tuned on `tuning`, targets are measured on `check`.
    out.shot_size_by_half = Object.fromEntries(HALVES.map((h) => [h, strip(framing.byHalf[h].shot_size)]));
    for (const h of HALVES) err(confusionSummary(`  ${h} half`, framing.byHalf[h].shot_size, (l) => SHOT_ABBR[l] ?? l));
    err('');
  }
  if (framing && sections.has('angle')) {
    out.shooting_angle = strip(framing.shooting_angle);
    err(confusionSummary('SHOOTING ANGLE (catalog photos)', framing.shooting_angle, (l) => ANGLE_ABBR[l] ?? l));
    out.shooting_angle_by_half = Object.fromEntries(HALVES.map((h) => [h, strip(framing.byHalf[h].shooting_angle)]));
    for (const h of HALVES) err(confusionSummary(`  ${h} half`, framing.byHalf[h].shooting_angle, (l) => ANGLE_ABBR[l] ?? l));
    err('');
  }
  if (framing && (sections.has('shot_size') || sections.has('angle'))) {
    out.framing_predictions = framing.predictions;
  }
  if (camera && sections.has('camera')) {
    out.camera_movement = { main: camera.main, all: strip(camera.all), clips: camera.clips, ms: camera.ms };
    err(confusionSummary(`CAMERA MOVEMENT, main set (${camera.main.n} generated clips)`, camera.main, MOVE_ABBR));
    err(`main + hard sets (${camera.all.n} clips): accuracy ${pct(camera.all.accuracy)}`);
    err('');
  }
  if (sections.has('reliability') && framing && camera) {
    out.reliability = {
      shot_size: framing.shot_size.reliability,
      shooting_angle: framing.shooting_angle.reliability,
      camera_movement: camera.all.reliability,
    };
    err('RELIABILITY (confidence bins vs accuracy)');
    err(formatReliability('shot size', framing.shot_size.reliability));
    err(formatReliability('shooting angle', framing.shooting_angle.reliability));
    err(formatReliability('camera movement (main + hard clips)', camera.all.reliability));
    err('');
  }
  if (retrieval) {
    out.retrieval = retrieval;
    err(
      `RETRIEVAL (caption → photo, ${retrieval.n} photos): recall@1 ${pct(retrieval.recallAt1)}, recall@5 ${pct(retrieval.recallAt5)}, MRR ${retrieval.mrr} (chance@1 ${pct(retrieval.chanceAt1)})`,
    );
    err('');
  }
  if (search) {
    out.search = search;
    err(formatSearch(search));
  }
  if (picture) out.picture = picture;
  if (mixed) {
    out.mixed = mixed;
    for (const [variant, halves] of Object.entries(mixed)) {
      for (const f of Object.values(halves)) err(formatMixed(variant === 'base' ? 'without ImageNet' : 'with ImageNet', f!) + '\n');
    }
  }
  if (speech) {
    out.speech = speech;
    err('SPEECH (a 2–4-word phrase of a reference transcript, searched with `said` among every clip; pocketsphinx)');
    for (const [cond, halves] of Object.entries(speech)) {
      for (const [half, bands] of Object.entries(halves)) {
        for (const [band, f] of Object.entries(bands)) {
          err(`  ${cond.padEnd(6)} ${half.padEnd(6)} ${band.padEnd(8)} ${f.items} clips, ${f.phrases} phrases: R@1 ${pct(f.r_at_1)}, start within 1 s ${pct(f.start_within_1s)} of ${f.timed_hits} timed hits, WER ${pct(f.wer)}`);
        }
      }
    }
    err('');
  }
  out.labels = { shot_size: SHOT_SIZE_LABELS, shooting_angle: SHOOTING_ANGLE_LABELS, camera_movement: CAMERA_MOVEMENT_LABELS };
  out.ms = Math.round(performance.now() - t0);
  err(`done in ${(Number(out.ms) / 1000).toFixed(1)} s`);
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    if (e instanceof MissingEvalDataError || e instanceof UsageError) {
      err(`eval: ${e.message}`);
      process.exit(2);
    }
    err(`eval failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
