/**
 * Speech logic without processes: phones and sound keys, spoken matching, transcript formats,
 * soundtrack levels and the audio tag, the analyzer with a deterministic fake engine, and the
 * spoken side of search on a stub catalog.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { audioTag, soundtrackSegment, SpeechAnalyzer, type HeardSoundtrack } from '../../src/speech/analyzer.js';
import { attachSoundtrack, pcmFromFloat } from '../../src/speech/attach.js';
import { cuesOf, formatTranscript } from '../../src/speech/format.js';
import { isNarrowband, LevelMeter, type Level } from '../../src/speech/levels.js';
import { matchSpoken, saidContext, spokenQuery, wordRange } from '../../src/speech/match.js';
import { alignPhones, guessPhones, numberWords, parseDict, phonesOf, setDictForTests, soundGrams, soundKey, spokenTerm, spokenWords } from '../../src/speech/phonetic.js';
import { mirrorBand, parseWordLine } from '../../src/speech/pocketsphinx.js';
import { saidFeatures, spokenHits } from '../../src/speech/search.js';
import { saidProbability } from '../../src/search/evidence.js';
import { keywordsOf } from '../../src/analysis/keywords.js';
import type { SpeechEngine, SpokenWord, TranscribeOptions } from '../../src/speech/types.js';
import type { SegmentsCatalog } from '../../src/store/catalog/types.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';

const DICT = parseDict(
  [
    ';;; a few CMUdict entries',
    'the DH AH0',
    'the(2) DH IY0',
    'quarterly K W AO1 R T ER0 L IY0',
    'revenue R EH1 V AH0 N UW2',
    'grew G R UW1',
    'by B AY1',
    'twelve T W EH1 L V',
    'percent P ER0 S EH1 N T',
    'guess G EH1 S',
    'what W AH1 T',
    'dashwood D AE1 SH W UH2 D',
    'john JH AA1 N',
    'mister M IH1 S T ER0',
    'press P R EH1 S',
    'one W AH1 N',
    'for F AO1 R',
    'sales S EY1 L Z',
    'we W IY1',
    'did D IH1 D',
    'it IH1 T',
    'dog D AO1 G',
    'barked B AA1 R K T',
  ].join('\n'),
);

const words = (text: string, from = 0, step = 0.4): SpokenWord[] =>
  text.split(' ').map((w, i) => ({ w, start: from + i * step, end: from + i * step + step * 0.9, conf: 0.9 }));

beforeEach(() => setDictForTests(DICT));
afterEach(() => setDictForTests(undefined));

describe('phones', () => {
  it('spells numbers out and keeps apostrophes inside words', () => {
    expect(numberWords(12)).toEqual(['twelve']);
    expect(numberWords(305)).toEqual(['three', 'hundred', 'five']);
    expect(numberWords(2024)).toEqual(['two', 'thousand', 'twenty', 'four']);
    expect(spokenWords("Press 1 for sales, it's 'done'")).toEqual(['press', 'one', 'for', 'sales', "it's", 'done']);
  });

  it("takes the dictionary's pronunciation, the engine's variant, else letter-to-sound rules", () => {
    expect(phonesOf('revenue')).toEqual(['R', 'EH', 'V', 'AH', 'N', 'UW']);
    expect(phonesOf('the(2)')).toEqual(['DH', 'IY']);
    expect(phonesOf('the')).toEqual(['DH', 'AH']);
    // Not in the dictionary: rules (a silent final e, a soft c, a digraph).
    expect(guessPhones('nice')).toEqual(['N', 'AY', 'S']);
    expect(guessPhones('cat')).toEqual(['K', 'AE', 'T']);
    expect(guessPhones('phone')).toEqual(['F', 'OW', 'N']);
    expect(phonesOf('zorblax')).toEqual(guessPhones('zorblax'));
  });

  it('looks a word up once: the same frozen phones again, forgotten when the dictionary changes', () => {
    const first = phonesOf('revenue');
    expect(phonesOf('revenue')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    setDictForTests(parseDict('revenue R IY1 V'));
    expect(phonesOf('revenue')).toEqual(['R', 'IY', 'V']);
    setDictForTests(DICT);
    expect(phonesOf('revenue')).toEqual(['R', 'EH', 'V', 'AH', 'N', 'UW']);
  });

  it('gives alike-sounding words one sound key and short words none', () => {
    expect(soundKey('revenue')).toBe('zqrfn');
    // A misspelling the dictionary does not know still meets the right word.
    expect(soundKey('revenoo')).toBe(soundKey('revenue'));
    expect(soundKey('dog')).toBe('zqtk');
    expect(soundKey('one')).toBeUndefined();
  });

  it('indexes runs of sounds across words, so a phrase misheard word by word still shares some with the query', () => {
    const asked = soundGrams(['increase', 'the']);
    expect(asked).toEqual(['zknkr', 'zkkrs', 'zkrst']);
    // Heard on a telephone line as "moncrief the": no word and no word key in common, a run of sounds is.
    const heard = soundGrams(['moncrief', 'the']);
    expect(heard.filter((g) => asked.includes(g))).toEqual(['zknkr']);
    expect(soundGrams(['quarterly', 'revenue']).filter((g) => asked.includes(g))).toEqual([]);
    expect(soundGrams(['a', 'the'])).toEqual([]);
  });

  it('aligns a query exactly where it stands and scores a mishearing between exact and unrelated', () => {
    const t = 'mister john guess what had then leisure'.split(' ').map((w) => phonesOf(w));
    const exact = alignPhones(['JH', 'AA', 'N'], t)!;
    expect(exact.score).toBe(1);
    expect([exact.first, exact.last]).toEqual([1, 1]);
    const misheard = alignPhones([...phonesOf('john'), ...phonesOf('dashwood')], t)!;
    const unrelated = alignPhones([...phonesOf('quarterly'), ...phonesOf('revenue')], t)!;
    expect(misheard.score).toBeGreaterThan(0.5);
    expect(misheard.score).toBeLessThan(1);
    expect(unrelated.score).toBeLessThan(misheard.score);
    expect(misheard.first).toBe(1);
  });
});

describe('spoken matching', () => {
  const transcript = words('we did it the quarterly revenue grew by twelve percent');

  it('finds a phrase, its words and the moment its first word starts', () => {
    const q = spokenQuery('quarterly revenue')!;
    const m = matchSpoken(q, transcript)!;
    expect(m.score).toBe(1);
    expect(transcript.slice(m.first, m.last + 1).map((w) => w.w)).toEqual(['quarterly', 'revenue']);
    expect(m.start).toBeCloseTo(transcript[4].start, 6);
    const ctx = saidContext(transcript, m, 2);
    expect(ctx.text).toBe('… it the *quarterly revenue* grew by …');
    expect(ctx.matched).toEqual(['quarterly', 'revenue']);
  });

  it('matches numbers written as digits against spoken numbers', () => {
    const m = matchSpoken(spokenQuery('grew by 12 percent')!, transcript)!;
    expect(m.score).toBe(1);
    expect(transcript[m.first].w).toBe('grew');
  });

  it('has terms for the keyword index: content words as spoken terms, their sound keys and runs of sounds', () => {
    const q = spokenQuery('the quarterly revenue')!;
    expect(q.terms).toEqual(['zwquarterly', soundKey('quarterly'), 'zwrevenue', soundKey('revenue'), ...soundGrams(['the', 'quarterly', 'revenue'])]);
    expect(q.content).toEqual(['quarterly', 'revenue']);
    expect(spokenTerm("don't")).toBe('zwdont');
    expect(spokenQuery('the of a')).toBeUndefined();
  });

  it('gives the word range around a stretch of time', () => {
    const [lo, hi] = wordRange(transcript, 1.6, 2.0, 0);
    expect(transcript.slice(lo, hi).map((w) => w.w)).toEqual(['quarterly', 'revenue']);
  });
});

describe('transcript formats', () => {
  const t = { engine: 'x', language: 'en', duration: 10, words: [...words('hello there', 0.5), ...words('general kenobi', 3.5)] };

  it('breaks cues at pauses', () => {
    expect(cuesOf(t.words).map((c) => c.text)).toEqual(['hello there', 'general kenobi']);
  });

  it('writes SubRip and WebVTT times', () => {
    const srt = formatTranscript(t, 'srt');
    expect(srt).toContain('1\n00:00:00,500 --> 00:00:01,260\nhello there\n');
    expect(srt).toContain('2\n00:00:03,500 --> 00:00:04,260\ngeneral kenobi');
    const vtt = formatTranscript(t, 'vtt');
    expect(vtt.startsWith('WEBVTT\n\n00:00:00.500 --> 00:00:01.260\nhello there\n')).toBe(true);
    expect(formatTranscript(t, 'txt')).toBe('hello there\ngeneral kenobi\n');
    expect(JSON.parse(formatTranscript(t, 'json', 'vid_1')).video_id).toBe('vid_1');
  });
});

/** 16 kHz s16le of `f(i)` for `seconds`. */
function pcm(seconds: number, f: (i: number) => number): Buffer {
  const n = Math.round(seconds * 16000);
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(f(i) * 32767))), i * 2);
  return b;
}

/** Deterministic noise in [-1, 1]. */
function noise(seed: number): (i: number) => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return (s / 0x7fffffff) * 2 - 1;
  };
}

describe('levels', () => {
  it('measures loudness, flatness and the high band, ten windows a second, across chunk edges', () => {
    const meter = new LevelMeter();
    const tone = pcm(1, (i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / 16000));
    meter.push(tone.subarray(0, 1001)); // an odd cut inside a sample
    meter.push(tone.subarray(1001));
    meter.push(pcm(1, noise(7)));
    meter.push(pcm(1, () => 0));
    expect(meter.levels).toHaveLength(30);
    const [tonal, white, silent] = [meter.levels[5], meter.levels[15], meter.levels[25]];
    expect(tonal.db).toBeCloseTo(20 * Math.log10(0.5 / Math.SQRT2), 0);
    expect(tonal.flatness).toBeLessThan(0.05);
    expect(white.flatness).toBeGreaterThan(0.4);
    expect(white.hf).toBeGreaterThan(0.3);
    expect(silent.db).toBe(-100);
  });

  it('tells telephone-band sound (nothing above 4 kHz) from wideband', () => {
    const meter = new LevelMeter();
    // 300 Hz + 1 kHz + 3 kHz: band-limited speech-like content.
    meter.push(pcm(2, (i) => 0.2 * (Math.sin(i * 0.1178) + Math.sin(i * 0.3927) + Math.sin(i * 1.178))));
    expect(isNarrowband(meter.levels, -45)).toBe(true);
    const wide = new LevelMeter();
    wide.push(pcm(2, noise(3)));
    expect(isNarrowband(wide.levels, -45)).toBe(false);
  });

  it('mirrors telephone-band audio into the empty upper band, keeping sample parity across chunks', () => {
    const a = mirrorBand(pcm(0.001, () => 0.25), 0);
    expect([a.readInt16LE(0), a.readInt16LE(2), a.readInt16LE(4)]).toEqual([16384, 0, 16384]);
    const b = mirrorBand(pcm(0.001, () => 0.25), 1);
    expect([b.readInt16LE(0), b.readInt16LE(2)]).toEqual([0, 16384]);
  });
});

describe('the audio tag', () => {
  const lv = (db: number, flatness: number): Level => ({ db, flatness, hf: 0.1 });
  const heard = (levels: Level[], spoken: SpokenWord[] = []): HeardSoundtrack => ({
    hasAudio: true,
    levels,
    transcript: { engine: 'fake', language: 'en', words: spoken, duration: levels.length / 10 },
  });

  it('says silence without an audio track or without sound, speech where words cover the time, music where sound is tonal', () => {
    expect(audioTag({ hasAudio: false, levels: [] }, 0, 4).label).toBe('silence');
    expect(audioTag(heard(Array(40).fill(lv(-70, 1))), 0, 4).label).toBe('silence');
    const speech = audioTag(heard(Array(40).fill(lv(-20, 0.3)), words('we did it the quarterly revenue grew by twelve percent', 0)), 0, 4);
    expect(speech.label).toBe('speech');
    expect(speech.scores.speech).toBeGreaterThan(speech.scores.music);
    expect(audioTag(heard(Array(40).fill(lv(-20, 0.02))), 0, 4).label).toBe('music');
    const other = audioTag(heard(Array(40).fill(lv(-20, 0.6))), 0, 4);
    expect(other.label).toBe('other');
    expect(Object.values(other.scores).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 2);
  });

  it('puts what was said in a segment into a fact, its words as spoken terms, their sound keys and runs of sounds into index terms', () => {
    const out = soundtrackSegment(heard(Array(40).fill(lv(-20, 0.3)), words('the quarterly revenue', 1, 0.6)), 0, 4);
    expect(out.facts).toEqual([{ kind: 'speech', label: 'the quarterly revenue', confidence: 0.9 }]);
    expect(out.terms).toEqual(['zwthe', soundKey('the'), 'zwquarterly', soundKey('quarterly'), 'zwrevenue', soundKey('revenue'), ...soundGrams(['the', 'quarterly', 'revenue'])].filter(Boolean));
    // What is said never enters the keyword index as plain words (they would match as if seen).
    expect(keywordsOf({ speech: out })).not.toMatch(/\bquarterly\b/);
    expect(out.tags?.audio.label).toBe('speech');
  });
});

/** A deterministic engine: "hears" a word per second of sound, named by the loudness it read. */
class FakeEngine implements SpeechEngine {
  readonly name = 'fake';
  readonly version = 'fake-1';
  readonly language = 'en';
  narrowband?: boolean;
  constructor(private readonly fail?: string) {}
  async transcribe(chunks: AsyncIterable<Buffer>, onWord: (w: SpokenWord) => void, opts: TranscribeOptions): Promise<void> {
    this.narrowband = opts.narrowband;
    let t = 0;
    for await (const c of chunks) {
      const secs = c.length / 32000;
      if (this.fail && t >= 1) throw new Error(this.fail);
      onWord({ w: 'word', start: t, end: t + secs * 0.5, conf: 0.8 });
      t += secs;
    }
  }
}

describe('the speech analyzer', () => {
  it('hears a soundtrack: words from the engine, levels on the way', async () => {
    const engine = new FakeEngine();
    const heard = await new SpeechAnalyzer(engine).listen(pcmFromFloat(Float32Array.from({ length: 48000 }, (_, i) => 0.3 * Math.sin(i * 0.2))));
    expect(heard.transcript?.words.map((w) => w.start)).toEqual([0, 1, 2]);
    expect(heard.levels).toHaveLength(30);
    expect(engine.narrowband).toBe(true); // a 509 Hz tone has nothing above 4 kHz
  });

  it('keeps the levels and says why when the engine fails, and says so without an audio track', async () => {
    const heard = await new SpeechAnalyzer(new FakeEngine('boom')).listen(pcmFromFloat(new Float32Array(48000).fill(0.1)));
    expect(heard.transcript).toBeUndefined();
    expect(heard.reason).toBe('speech recognition failed: boom');
    expect(heard.levels.length).toBeGreaterThan(0);
    expect((await new SpeechAnalyzer(new FakeEngine()).listen(undefined)).reason).toBe('no audio track');
    expect((await new SpeechAnalyzer(undefined, 'none here').listen(pcmFromFloat(new Float32Array(16000)))).reason).toBe('none here');
  });

  it("tags a speaking segment's audio and never changes its vector (what is said is its own evidence)", async () => {
    const e = new FakeEmbedder();
    const seg = { start: 0, end: 4, vector: (await e.embedText('red')).vector, tags: {}, analysis: {} };
    const silent = { start: 4, end: 8, vector: seg.vector, tags: {}, analysis: {} };
    const heard: HeardSoundtrack = {
      hasAudio: true,
      levels: [...Array(40).fill({ db: -20, flatness: 0.3, hf: 0.1 }), ...Array(40).fill({ db: -80, flatness: 1, hf: 0 })],
      transcript: { engine: 'fake', language: 'en', words: words('we did it we did it we did it', 0), duration: 8 },
    };
    attachSoundtrack([seg, silent], heard);
    expect(seg.vector).toEqual((await e.embedText('red')).vector); // the picture alone, words or not
    expect(silent.vector).toEqual((await e.embedText('red')).vector);
    expect((seg.tags as Record<string, { label: string }>).audio.label).toBe('speech');
    expect((silent.tags as Record<string, { label: string }>).audio.label).toBe('silence');
    expect(seg.analysis).toHaveProperty('speech.facts.0.kind', 'speech');
  });
});

describe('pocketsphinx output', () => {
  it('reads words with times and posteriors, drops fillers and hypothesis lines, keeps the variant', () => {
    expect(parseWordLine('was(2) 0.330 0.540 0.999800')).toEqual({ w: 'was', start: 0.33, end: 0.54, conf: 1, variant: 2 });
    expect(parseWordLine('consider 2.900 3.440 0.999700')).toEqual({ w: 'consider', start: 2.9, end: 3.44, conf: 1 });
    expect(parseWordLine('<sil> 3.910 3.930 0.553348')).toBeUndefined();
    expect(parseWordLine('[NOISE] 1 2 0.5')).toBeUndefined();
    expect(parseWordLine('he was not an illness those young man')).toBeUndefined();
  });
});

describe('spoken search', () => {
  // A stub of the three catalog calls the spoken side makes: two videos, one segment each.
  const rows = new Map([
    [1, { id: 1, video_id: 'v1', start: 0, end: 4 }],
    [2, { id: 2, video_id: 'v2', start: 0, end: 4 }],
  ]);
  const index: Record<string, number[]> = { zwquarterly: [1], [soundKey('quarterly')!]: [1], zwrevenue: [1, 2], [soundKey('revenue')!]: [1, 2] };
  const catalog = {
    selectiveTerms: async (terms: string[]) => terms,
    termMatches: async (_c: string, terms: string[]) => new Map(terms.filter((t) => index[t]).map((t) => [t, index[t]])),
    byIds: async (ids: number[]) => new Map(ids.filter((i) => rows.has(i)).map((i) => [i, rows.get(i)!])),
  } as unknown as SegmentsCatalog;
  const transcripts: Record<string, SpokenWord[]> = {
    v1: words('we did it the quarterly revenue grew', 0.2),
    v2: words('our revenue is mister john', 0.2),
  };

  it('scores each candidate by aligning the query with its words, and starts at the first matched word', async () => {
    const q = spokenQuery('quarterly revenue')!;
    const hits = await spokenHits(catalog, 'c', q, async (v) => transcripts[v]);
    expect(hits.get(1)?.score).toBe(1);
    expect(hits.get(1)?.start).toBeCloseTo(0.2 + 4 * 0.4, 6);
    expect(hits.get(1)?.said.text).toContain('*quarterly revenue*');
    expect(hits.get(2)?.score ?? 0).toBeLessThan(1);
    // The said curve reads the match: verbatim and every word heard as itself beats a partial one.
    const full = saidFeatures(hits.get(1)!, q);
    expect(full).toMatchObject({ score: 1, content: 2, exact: 1 });
    expect(full.rarity).toBeGreaterThan(4); // "quarterly revenue": rarer than 10^-4 per word
    expect(saidProbability(full)).toBeGreaterThan(saidProbability(saidFeatures(hits.get(2)!, q)));
  });
});
