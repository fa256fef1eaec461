/**
 * OCR cost per keyframe (`npm run -s bench -- ocr`): the pixel gate, PP-OCRv4 detection and
 * recognition on 1280×720 frames, single-threaded ONNX Runtime (VIDEMBED_ONNX_THREADS=1, the
 * reader's default). Ten frames with signs (text drawn with ffmpeg over evaluation photos) and
 * ten evaluation photos without text; everything runs once as warm-up, then per-frame means over
 * all frames of a round, best of three rounds (the machine may be shared).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeImage } from '../src/media/frames.js';
import type { Frame } from '../src/media/types.js';
import { TextReader } from '../src/models/ocr/index.js';
import { benchDir, ffmpegBin, round } from './util.js';

const PHOTOS = path.resolve(process.cwd(), '../shared/eval/photos');
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';
const SIGNS: Array<[string, string]> = [
  ['EXIT', 'python3-skimage__coffee'],
  ['PLATFORM 9', 'opencv-doc__leuvenA'],
  ['OPEN 24 HOURS', 'kphotoalbum__donna'],
  ['Main Street', 'psychtoolbox-3-common__town'],
  ['NO SWIMMING', 'kphotoalbum__skagen'],
  ['Ticket Office', 'opencv-doc__home'],
  ['Fresh Bread Daily', 'plasma-workspace-wallpapers__Path_1920x1080'],
  ['Gate B12', 'mate-backgrounds__Dune'],
  ['Breaking News', 'kphotoalbum__bar55'],
  ['Museum of Art', 'lomiri-wallpapers-16.04__life_by_Aitzol_Berasategi'],
];
const TEXT_FREE = [
  'kphotoalbum__grand_canyon_3', 'python3-scipy__face_raccoon', 'mate-backgrounds__Garden', 'opencv-doc__fruits', 'psychtoolbox-3-common__stim4',
  'lomiri-wallpapers-16.04__aitzgorri_by_Aitzol_Berasategi', 'plasma-workspace-wallpapers__Kite_1920x1080', 'opencv-doc__apple', 'kphotoalbum__jesper_2', 'labelme-examples__2011_000006',
];

async function perFrame(frames: Frame[], fn: (f: Frame) => unknown | Promise<unknown>, rounds = 3): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (const f of frames) await fn(f);
    best = Math.min(best, (performance.now() - t0) / frames.length);
  }
  return best;
}

export async function benchOcr(): Promise<Record<string, unknown>> {
  if (!existsSync(PHOTOS)) throw new Error(`evaluation photos not found: ${PHOTOS}`);
  if (!existsSync(FONT)) throw new Error(`font not found: ${FONT} (Debian: fonts-dejavu-core)`);
  const dir = benchDir();
  try {
    const text: Frame[] = [];
    for (const [i, [words, photo]] of SIGNS.entries()) {
      const out = path.join(dir, `sign${i}.png`);
      const y = 80 + ((i * 130) % 520);
      const vf = `scale=1280:720,setsar=1,drawtext=fontfile=${FONT}:text='${words}':fontsize=${40 + (i % 4) * 12}:fontcolor=white:box=1:boxcolor=black@0.6:boxborderw=10:x=100+${i * 40}:y=${y}`;
      execFileSync(ffmpegBin(), ['-v', 'error', '-y', '-i', path.join(PHOTOS, `${photo}.jpg`), '-frames:v', '1', '-vf', vf, out]);
      text.push(await decodeImage(out, 1280));
    }
    const free: Frame[] = [];
    for (const p of TEXT_FREE) free.push(await decodeImage(path.join(PHOTOS, `${p}.jpg`), 1280));

    const reader = new TextReader();
    const wide = new TextReader({ detMaxSide: 960 });
    await Promise.all([reader.load(), wide.load()]);
    const lines = new Map<Frame, Awaited<ReturnType<TextReader['detect']>>>();
    // Warm-up: every path once.
    for (const f of [...text, ...free]) {
      reader.hasTextLikeRegions(f);
      await reader.read(f);
    }
    for (const f of text) {
      lines.set(f, await reader.detect(f));
      await wide.detect(f);
    }

    const gateText = await perFrame(text, (f) => reader.hasTextLikeRegions(f));
    const gateFree = await perFrame(free, (f) => reader.hasTextLikeRegions(f));
    const detect = await perFrame(text, (f) => reader.detect(f));
    const detect960 = await perFrame(text, (f) => wide.detect(f));
    const recognize = await perFrame(text, (f) => reader.recognize(f, lines.get(f)!));
    const readText = await perFrame(text, (f) => reader.read(f));
    const readFree = await perFrame(free, (f) => reader.read(f));
    let wordsRead = 0;
    let wordsWanted = 0;
    for (const [i, f] of text.entries()) {
      const got = new Set((await reader.read(f)).map((w) => w.text.toLowerCase()));
      const want = SIGNS[i][0].toLowerCase().split(' ');
      wordsWanted += want.length;
      wordsRead += want.filter((w) => got.has(w)).length;
    }
    const gatePassedFree = free.filter((f) => reader.hasTextLikeRegions(f)).length;
    await Promise.all([reader.dispose(), wide.dispose()]);
    return {
      frames: '1280x720 (text) / 1280 longest side (text-free)',
      onnx_threads: Number(process.env.VIDEMBED_ONNX_THREADS) || 1,
      gate_ms: { text: round(gateText), text_free: round(gateFree) },
      detect_ms_640: round(detect),
      detect_ms_960: round(detect960),
      recognize_ms: round(recognize),
      lines_per_text_frame: round([...lines.values()].reduce((s, l) => s + l.length, 0) / text.length),
      read_ms: { text: round(readText), text_free: round(readFree) },
      words_read: `${wordsRead}/${wordsWanted}`,
      gate_passed_text_free: `${gatePassedFree}/${free.length}`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
