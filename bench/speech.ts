/**
 * `npm run bench -- speech`: what hearing costs at ingest. The same 60 s of footage (a window
 * panning over a photo, 1280x720) is ingested with the default analyzers and embedder, first
 * without the speech analyzer, then with it, under three soundtracks: continuous real speech (the
 * eval's recordings back to back), a soundtrack without speech (pink noise and a tone), and no
 * audio track. Targets (issue 20): at most +40% wall time with continuous speech (pocketsphinx),
 * at most +5% without speech. And memory: peak RSS growth while the analyzer hears 20 minutes of
 * talk (streamed: it never holds the PCM; a 3-hour talk holds no more).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { analyzersFor } from '../src/capabilities/index.js';
import { analyzeVideo } from '../src/pipeline/pipeline.js';
import { streamPcm } from '../src/media/audio.js';
import { ffmpegPath } from '../src/media/index.js';
import { getEmbedder } from '../src/embedders/registry.js';
import { SpeechAnalyzer } from '../src/speech/analyzer.js';
import { speechAnalyzerFor } from '../src/speech/engines.js';
import { findPocketsphinx, PocketsphinxEngine } from '../src/speech/pocketsphinx.js';
import { benchDir, makeMovingPhotoClip, round } from './util.js';

const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';

function ff(args: string[]): void {
  execFileSync(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
}

/** 60 s of continuous speech: the LibriVox recordings and the phone prompts back to back, looped. */
function talkTrack(dir: string, seconds: number): string {
  const list = path.join(dir, 'talk.txt');
  const extra = path.resolve(process.cwd(), '../shared/eval/speech/extra');
  const files = [...readdirSync(LIBRIVOX).filter((f) => f.endsWith('.wav')).map((f) => path.join(LIBRIVOX, f)), ...readdirSync(extra).slice(0, 10).map((f) => path.join(extra, f))];
  const wavs = files.map((f, i) => {
    const out = path.join(dir, `t${i}.wav`);
    ff(['-i', f, '-ac', '1', '-ar', '16000', out]);
    return out;
  });
  writeFileSync(list, wavs.map((w) => `file '${w}'`).join('\n'));
  const out = path.join(dir, 'talk.wav');
  ff(['-stream_loop', '-1', '-f', 'concat', '-safe', '0', '-i', list, '-t', String(seconds), out]);
  return out;
}

function mux(video: string, audio: string | undefined, out: string): string {
  if (!audio) ff(['-i', video, '-an', '-c', 'copy', out]);
  else ff(['-i', video, '-i', audio, '-map', '0:v', '-map', '1:a', '-c:v', 'copy', '-c:a', 'aac', '-shortest', out]);
  return out;
}

function rssMb(): number {
  return process.memoryUsage().rss / 2 ** 20;
}

export async function benchSpeech(seconds = 60): Promise<Record<string, unknown>> {
  if (!findPocketsphinx()) return { error: 'pocketsphinx_continuous not found: apt-get install pocketsphinx pocketsphinx-en-us' };
  const dir = benchDir();
  try {
    const footage = makeMovingPhotoClip(path.join(dir, 'v.mp4'), { seconds, width: 1280, height: 720, preset: 'ultrafast' });
    const talk = talkTrack(dir, seconds);
    const noise = path.join(dir, 'noise.wav');
    ff(['-f', 'lavfi', '-i', `anoisesrc=color=pink:amplitude=0.05:duration=${seconds}`, '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-filter_complex', 'amix=inputs=2', '-ar', '44100', noise]);
    const clips = {
      speech: mux(footage, talk, path.join(dir, 'speech.mp4')),
      no_speech: mux(footage, noise, path.join(dir, 'nospeech.mp4')),
      no_audio: mux(footage, undefined, path.join(dir, 'noaudio.mp4')),
    };
    const embedder = getEmbedder();
    await embedder.load();
    const analyzers = await analyzersFor(embedder);
    const speech = speechAnalyzerFor('auto');
    const run = async (clip: string, withSpeech: boolean) => {
      const t0 = performance.now();
      await analyzeVideo(clip, embedder, { segmentSeconds: 4, fps: 1, analyzers, ...(withSpeech ? { speech } : {}) });
      return (performance.now() - t0) / 1000;
    };
    await run(clips.no_audio, true); // warm-up: models' first calls, the worker thread
    const out: Record<string, unknown> = { video: `${seconds} s 1280x720 h264, a window panning over a photo`, engine: speech.engine?.version };
    for (const [name, clip] of Object.entries(clips)) {
      // Alternate, twice each, so a change in the machine's load hits both alike.
      const without: number[] = [];
      const withIt: number[] = [];
      for (let i = 0; i < 2; i++) {
        without.push(await run(clip, false));
        withIt.push(await run(clip, true));
      }
      const a = Math.min(...without);
      const b = Math.min(...withIt);
      out[name] = { without_speech_s: round(a), with_speech_s: round(b), overhead: round(b / a - 1) };
    }
    out.targets = { speech_overhead_max: 0.4, no_speech_overhead_max: 0.05 };

    // Memory: hearing 20 minutes of talk (looped), streamed through ffmpeg and the recognizer.
    const long = path.join(dir, 'long.wav');
    ff(['-stream_loop', '-1', '-i', talk, '-t', '1200', long]);
    const listener = new SpeechAnalyzer(new PocketsphinxEngine(findPocketsphinx()!));
    const base = rssMb();
    let peak = base;
    const timer = setInterval(() => (peak = Math.max(peak, rssMb())), 200);
    const t0 = performance.now();
    const heard = await listener.listen(streamPcm(long));
    clearInterval(timer);
    out.long_talk = {
      audio_s: 1200,
      words: heard.transcript?.words.length ?? 0,
      wall_s: round((performance.now() - t0) / 1000),
      rss_growth_mb: round(peak - base),
      note: 'node process only; the recognizer (~110 MB) and ffmpeg are their own processes, of constant size',
    };
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
