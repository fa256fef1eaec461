/**
 * Telephone-band audio reaches pocketsphinx with the narrowband adaptation (src/speech/narrowband.ts),
 * wideband audio without it; and the real program accepts the shipped files and hears an 8 kHz
 * recording through them.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { streamPcm } from '../../src/media/audio.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { narrowbandArgs } from '../../src/speech/narrowband.js';
import { findPocketsphinx, PocketsphinxEngine } from '../../src/speech/pocketsphinx.js';
import type { SpokenWord } from '../../src/speech/types.js';
import { removeDir, tempDir } from '../helpers/clips.js';

const RECORDING = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';

describe('narrowband audio and pocketsphinx', () => {
  const dir = tempDir('vidembed-e2e-narrowband-');
  afterAll(() => removeDir(dir));

  it('passes the narrowband feature parameters and MLLR transform for telephone-band audio only', async () => {
    // A stand-in recognizer that records its options, reads its input and says one word.
    const stub = path.join(dir, 'stub.sh');
    const argsFile = path.join(dir, 'args');
    writeFileSync(stub, `#!/bin/sh\necho "$@" > "${argsFile}"\ncat > /dev/null\necho "hello 1.500 1.900 0.9"\n`);
    chmodSync(stub, 0o755);
    const engine = new PocketsphinxEngine(stub);
    const pcm = async function* () {
      yield Buffer.alloc(3200);
    };
    for (const narrowband of [true, false]) {
      const words: SpokenWord[] = [];
      await engine.transcribe(pcm(), (w) => words.push(w), { narrowband });
      expect(words).toEqual([{ w: 'hello', start: 0.5, end: 0.9, conf: 0.9 }]);
      const args = readFileSync(argsFile, 'utf8').trim().split(' ');
      const [featFlag, feat, mllrFlag, mllr] = narrowbandArgs();
      if (narrowband) {
        expect(args).toContain(featFlag);
        expect(args[args.indexOf(featFlag) + 1]).toBe(feat);
        expect(args[args.indexOf(mllrFlag) + 1]).toBe(mllr);
      } else {
        expect(args).not.toContain(featFlag);
        expect(args).not.toContain(mllrFlag);
      }
    }
    // The eval's candidates replace them.
    await new PocketsphinxEngine(stub, { narrowbandArgs: ['-lowerf', '200'] }).transcribe(pcm(), () => {}, { narrowband: true });
    const args = readFileSync(argsFile, 'utf8');
    expect(args).toContain('-lowerf 200');
    expect(args).not.toContain('-mllr');
  });

  it('hears an 8 kHz recording with the real recognizer and the shipped files', async () => {
    const program = findPocketsphinx();
    expect(program, 'pocketsphinx_continuous must be installed (apt-get install pocketsphinx pocketsphinx-en-us)').toBeDefined();
    const phone = path.join(dir, 'phone.wav');
    const res = await runFfmpeg(['-y', '-v', 'error', '-i', RECORDING, '-ar', '8000', phone], { stdout: false });
    expect(res.code).toBe(0);
    const words: SpokenWord[] = [];
    await new PocketsphinxEngine(program!).transcribe(streamPcm(phone), (w) => words.push(w), { narrowband: true });
    // "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them"
    expect(words.length).toBeGreaterThan(10);
    expect(words.map((w) => w.w)).toContain('consider');
  }, 60_000);
});
