/**
 * `node dist/eval/narrowband-adapt.js [DIR]`: the adaptation data for telephone-band audio
 * (issue 20) and what is estimated from it. Voices the eval never hears, made narrowband the way
 * 8 kHz recordings are: flite's voices (kal, awb, rms, slt) reading the sentences below (written
 * for this, not the eval's transcripts) and the tuning half's card names (pocketsphinx-testdata; not
 * its LibriVox reader, below), each resampled to 8 kHz, then to 16 kHz and mirrored into the upper band
 * exactly as the engine does (`mirrorBand`), after the engine's second of silence. None of the
 * 8 kHz eval prompts is used (one voice, in both halves: adapting to her would be speaker leakage).
 *
 * Writes DIR/NAME.raw (16 kHz s16le, what the recognizer hears), DIR/adapt.fileids and
 * DIR/adapt.transcription (sphinxtrain's inputs), and DIR/feat.params: the model's with `-cmninit`
 * set to the mean over the utterances of pocketsphinx's own cepstral mean (its log's last
 * "CMN … Update to <…>" of each; utterances too short for an update are left out) — what
 * src/speech/models/en-us-narrowband.feat.params is. Then eval/narrowband-mllr.sh DIR.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runFfmpeg } from '../src/media/ffmpeg.js';
import { streamPcm } from '../src/media/audio.js';
import { spokenWords } from '../src/speech/phonetic.js';
import { meanCepstrum, withCmninit } from '../src/speech/narrowband.js';
import { findPocketsphinx, mirrorBand } from '../src/speech/pocketsphinx.js';
import { pool } from './clips.js';
import { loadSpeechItems } from './speech-data.js';

/** Prompt-like sentences, in the dictionary's words. */
export const ADAPT_SENTENCES = [
  'please hold while we connect your call',
  'your account balance is four hundred twenty dollars',
  'press one to hear your messages again',
  'the office is closed for the holiday weekend',
  'we could not find a record matching that number',
  'say yes or no after the beep',
  'thank you for calling the city library',
  'to speak with a nurse press two now',
  'the meeting will start in five minutes',
  'you have three new voice messages and one saved message',
  'enter the last four digits of your social security number',
  'our business hours are monday through friday nine to five',
  'the next train to the airport leaves at seven fifteen',
  'your package was delivered this morning at the front door',
  'if you know your party extension you may dial it at any time',
  'goodbye and have a pleasant evening',
  'the weather today will be cloudy with a chance of rain',
  'this call may be recorded for quality purposes',
  'please stay on the line and an operator will be with you shortly',
  'the password you entered is not valid',
  'for billing questions press three',
  'your appointment is confirmed for tuesday at ten thirty',
  'all of our representatives are busy helping other customers',
  'to return to the main menu press the star key',
  'the conference room is on the second floor near the elevator',
  'please record your name after the tone',
  'we are sorry but that option is not available',
  'your estimated wait time is less than two minutes',
  'the museum opens at eight and closes at six',
  'check your order status on our web site',
  'a technician will call you back within one hour',
  'the number you have dialed has been changed',
  'she sold her old car and bought a new bicycle',
  'the children played in the garden until the sun went down',
  'he reads the morning paper with a cup of coffee',
  'please spell the first three letters of the city name',
  'the quarterly report shows that revenue grew by twelve percent',
  'turn left at the bridge and follow the river north',
  'the doctor will see you after lunch',
  'we will send a confirmation to your email address',
];

export const FLITE_VOICES = ['kal', 'awb', 'rms', 'slt'];

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us/en-us';

/** Seconds of silence the engine puts before the audio (src/speech/pocketsphinx.ts LEAD_S). */
const LEAD_S = 1;

/** `file` as the engine hears it after an 8 kHz channel: resampled down and up, mirrored, after the lead. */
async function narrowbandRaw(file: string, out: string): Promise<void> {
  const eight = `${out}.8k.wav`;
  const r = await runFfmpeg(['-y', '-v', 'error', '-i', file, '-ac', '1', '-ar', '8000', eight], { stdout: false });
  if (r.code !== 0) throw new Error(`ffmpeg: ${r.stderr}`);
  const parts: Buffer[] = [Buffer.alloc(LEAD_S * 16000 * 2)];
  let samples = 0;
  for await (const raw of streamPcm(eight)) {
    parts.push(mirrorBand(raw, samples & 1));
    samples += raw.length >> 1;
  }
  writeFileSync(out, Buffer.concat(parts));
}

async function main(): Promise<void> {
  const dir = process.argv[2] ?? '/tmp/vidembed-narrowband-adapt';
  mkdirSync(dir, { recursive: true });
  const utts: { id: string; src: string; text: string }[] = [];
  for (const voice of FLITE_VOICES) {
    ADAPT_SENTENCES.forEach((text, i) => {
      const id = `flite-${voice}-${String(i).padStart(2, '0')}`;
      const wav = join(dir, `${id}.wav`);
      const r = spawnSync('flite', ['-voice', voice, '-t', text, '-o', wav]);
      if (r.status !== 0) throw new Error(`flite -voice ${voice} failed: ${String(r.stderr)}`);
      utts.push({ id, src: wav, text });
    });
  }
  // Not the LibriVox reader: the recordings (64 kb/s MP3 at the source) carry nothing above 4 kHz,
  // so the engine hears them as narrowband too, and the same reader is in both halves (speaker leakage).
  for (const it of loadSpeechItems().filter((i) => i.half === 'tuning' && i.band === 'wideband' && !i.name.startsWith('librivox-'))) {
    utts.push({ id: it.name.replace(/\.wav$/, ''), src: it.file, text: spokenWords(it.transcript).join(' ') });
  }
  await pool(utts, 2, (u) => narrowbandRaw(u.src, join(dir, `${u.id}.raw`)));
  writeFileSync(join(dir, 'adapt.fileids'), utts.map((u) => u.id).join('\n') + '\n');
  writeFileSync(join(dir, 'adapt.transcription'), utts.map((u) => `<s> ${u.text} </s> (${u.id})`).join('\n') + '\n');

  // The recognizer's own live CMN at each utterance's end (-logfn), averaged over the utterances.
  const ps = findPocketsphinx()!;
  const means: number[][] = [];
  for (const u of utts) {
    const log = join(dir, `${u.id}.log`);
    spawnSync(ps, ['-infile', join(dir, `${u.id}.raw`), '-logfn', log, '-fwdflat', 'no', '-bestpath', 'no', '-topn', '2', '-maxhmmpf', '3000', '-maxwpf', '5']);
    const ups = [...readFileSync(log, 'utf8').matchAll(/Update to\s+<([^>]*)>/g)];
    if (ups.length) means.push(ups[ups.length - 1][1].trim().split(/\s+/).map(Number));
  }
  const feat = withCmninit(readFileSync(join(MODEL_DIR, 'feat.params'), 'utf8'), meanCepstrum(means));
  writeFileSync(join(dir, 'feat.params'), feat);
  console.log(`${utts.length} utterances (${means.length} long enough for a CMN update) in ${dir}`);
  console.log(`${join(dir, 'feat.params')}: ${feat.trim().split('\n').pop()}`);
}

if (process.argv[1]?.endsWith('narrowband-adapt.js')) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
