/**
 * Reads the header of a whisper.cpp model file (the legacy `ggml` format of `ggml-base.en.bin`):
 * its hyperparameters, whether its vocabulary is English-only, and whether weight tensors follow
 * the vocabulary. whisper.cpp itself accepts a file without tensors ("assuming empty model for
 * testing") and then hears nothing, so an engine is only offered for a file that has them; a file
 * that is not a whisper model at all is refused here, before the native binding sees it.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ModelError } from '../api/errors.js';

const MAGIC = 0x67676d6c; // "ggml"
/** Vocabulary size of the English-only models (`*.en`); multilingual ones have 51865 or more. */
const ENGLISH_ONLY_VOCAB = 51864;
const HPARAMS = ['n_vocab', 'n_audio_ctx', 'n_audio_state', 'n_audio_head', 'n_audio_layer', 'n_text_ctx', 'n_text_state', 'n_text_head', 'n_text_layer', 'n_mels', 'ftype'] as const;

export interface GgmlWhisperHeader {
  hparams: Record<(typeof HPARAMS)[number], number>;
  /** Tokens in the vocabulary section (whisper.cpp adds the special tokens up to `hparams.n_vocab`). */
  vocabTokens: number;
  /** `en` for the English-only models, `multilingual` otherwise. */
  languages: 'en' | 'multilingual';
  /** Whether weight tensors follow the vocabulary. */
  hasWeights: boolean;
  bytes: number;
}

/** Reads the header of `file`; throws ModelError naming the file when it is not a whisper ggml model. */
export function readGgmlWhisperHeader(file: string, name = file): GgmlWhisperHeader {
  const fd = openSync(file, 'r');
  try {
    const bytes = fstatSync(fd).size;
    let pos = 0;
    const bad = (why: string): never => {
      throw new ModelError(`${name} is not a whisper.cpp model: ${why}`);
    };
    const read = (n: number): Buffer => {
      if (pos + n > bytes) bad(`it ends at byte ${bytes}, inside its header`);
      const buf = Buffer.alloc(n);
      readSync(fd, buf, 0, n, pos);
      pos += n;
      return buf;
    };
    const i32 = (): number => read(4).readInt32LE(0);
    if (bytes < 4 || read(4).readUInt32LE(0) !== MAGIC) bad('no ggml magic');
    const hparams = {} as GgmlWhisperHeader['hparams'];
    for (const k of HPARAMS) hparams[k] = i32();
    const sane = (v: number, lo: number, hi: number) => Number.isInteger(v) && v >= lo && v <= hi;
    if (!sane(hparams.n_vocab, 1, 1 << 20) || !sane(hparams.n_mels, 1, 1024) || !sane(hparams.n_audio_layer, 1, 256) || !sane(hparams.n_text_layer, 1, 256)) {
      bad('implausible hyperparameters');
    }
    const nMel = i32();
    const nFft = i32();
    if (!sane(nMel, 1, 1024) || !sane(nFft, 1, 1 << 16)) bad('implausible mel filter bank');
    pos += nMel * nFft * 4;
    const vocabTokens = i32();
    if (!sane(vocabTokens, 1, 1 << 20)) bad('implausible vocabulary size');
    for (let t = 0; t < vocabTokens; t++) {
      const len = read(4).readUInt32LE(0);
      if (len > 1024) bad(`token ${t} is ${len} bytes long`);
      pos += len;
      if (pos > bytes) bad('its vocabulary is cut short');
    }
    return {
      hparams,
      vocabTokens,
      languages: hparams.n_vocab === ENGLISH_ONLY_VOCAB ? 'en' : 'multilingual',
      hasWeights: pos < bytes,
      bytes,
    };
  } finally {
    closeSync(fd);
  }
}
