import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywordsOf } from '../../src/analysis/keywords.js';
import { wordsToLines } from '../../src/analysis/ocr.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { inHalf } from '../../eval/split.js';
import { evalPhotos, ffmpeg, removeDir, tempDir } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';

const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';

describe('analysis apart from embedding', () => {
  it('groups words on a line into one fact, in reading order', () => {
    const w = (text: string, x: number, y: number) => ({ text, confidence: 0.9, box: { x, y, w: 0.1, h: 0.05 } });
    expect(wordsToLines([w('HOURS', 0.5, 0.2), w('OPEN', 0.1, 0.21), w('24', 0.3, 0.2), w('EXIT', 0.1, 0.7)]).map((l) => l.text)).toEqual(['OPEN 24 HOURS', 'EXIT']);
  });

  it('indexes what analysis found, never template sentences', () => {
    const words = keywordsOf({
      perception: {
        facts: [
          { kind: 'object', label: 'dog', confidence: 0.3, alternatives: [{ label: 'cat', confidence: 0.3 }] },
          { kind: 'scene', label: 'blue sky at the top', confidence: 1 },
        ],
      },
      ocr: { facts: [{ kind: 'text', label: 'EXIT', confidence: 0.99 }] },
    });
    expect(words.split(/\s*\n\s*/)).toEqual(['dog', 'cat', 'EXIT']);
  });

  describe('every collection gets the analyzers, whatever its embedder', () => {
    const dir = tempDir('vidembed-analysis-');
    let engine: LocalEngine;
    let videoId: string;
    let collectionId: string;
    beforeAll(async () => {
      // A photo of the check half with a sign drawn on it, as a 3 s clip.
      const photo = inHalf(evalPhotos().map((file) => ({ file, name: path.basename(file) })), 'check')[0].file;
      const clip = path.join(dir, 'sign.mp4');
      await ffmpeg([
        '-loop', '1', '-i', photo, '-t', '3', '-r', '25',
        '-vf', `scale=960:540,drawbox=x=300:y=180:w=360:h=150:color=white:t=fill,drawtext=fontfile=${FONT}:text='EXIT':fontsize=110:fontcolor=black:x=345:y=200,format=yuv420p`,
        '-c:v', 'libx264', '-preset', 'veryfast', clip,
      ]);
      // An embedder that reads no facts at all: the analyzers run anyway (default analyzer set).
      const fake = new FakeEmbedder();
      engine = new LocalEngine({ home: path.join(dir, 'home'), embedderFor: () => fake });
      collectionId = (await engine.createCollection({ name: 'signs', model: fake.id })).collection_id;
      videoId = (await engine.uploadVideo(collectionId, { path: clip, filename: 'sign.mp4' })).video_id;
      const { Worker } = await import('../../src/runtime/worker.js');
      await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
    });
    afterAll(async () => {
      await engine?.close();
      removeDir(dir);
    });

    it('stores facts by analyzer, tags every segment with shot size and angle, and finds the sign by its word', async () => {
      expect((await engine.videoStatus(videoId)).status).toBe('processed');
      const seg = engine.store.segments.listForVideo(videoId)[0];
      const facts = JSON.parse(seg.facts_json!) as Record<string, { version: string; facts: { kind: string; label: string }[] }>;
      // The speech lane runs on every video too (speech, and levels: its audio tag; this clip has no audio track).
      expect(Object.keys(facts).sort()).toEqual(['levels', 'ocr', 'perception', 'speech']);
      expect(facts.ocr.version).toMatch(/^pp-ocrv4@/);
      expect(facts.ocr.facts.some((f) => f.label.split(' ').includes('EXIT')), JSON.stringify(facts.ocr.facts)).toBe(true);
      const tags = JSON.parse(seg.tags_json!) as Record<string, { label: string }>;
      expect(tags.shot_size.label).toBeTruthy();
      expect(tags.shooting_angle.label).toBeTruthy();
      // Every tag kind's label is filterable (generic labels, issue 19).
      expect(seg.labels).toMatchObject({ shot_size: tags.shot_size.label, shooting_angle: tags.shooting_angle.label });
      // What a person reads comes from analysis (the fake embedder says nothing).
      expect(seg.description).toMatch(/Text on screen: .*EXIT/);
      const res = await engine.search(collectionId, { text: 'exit', top_k: 1 }, { explain: true });
      expect(res.results[0]).toMatchObject({ video_id: videoId, matched_words: ['exit'] });
      // The fake embedder reads no facts: its recipe names no analyzer, only the speech setting and
      // the speech analyzer behind its transcripts.
      const { speech, speech_setting, ...analyzers } = (await engine.getCollection(collectionId)).recipe ?? {};
      expect(analyzers).toEqual({});
      expect(speech_setting).toBe('auto');
      expect(speech).toMatch(/soundtrack-3$/);
      expect(facts.speech.version).toBe(speech);
    });

    it('keeps a keyframe thumbnail per segment and a poster, served over HTTP, gone with the video', async () => {
      const segs = engine.store.segments.listForVideo(videoId);
      for (const sg of segs) {
        const jpeg = await engine.videoThumbnail(videoId, sg.start + 0.1);
        expect([jpeg[0], jpeg[1], jpeg[jpeg.length - 2], jpeg[jpeg.length - 1]]).toEqual([0xff, 0xd8, 0xff, 0xd9]);
        expect(jpeg.length).toBeLessThanOrEqual(30 * 1024);
        expect(jpeg.equals(await engine.blobs.get(`thumbs/${videoId}/${sg.idx}.jpg`))).toBe(true);
      }
      expect((await engine.videoThumbnail(videoId)).length).toBeGreaterThan(100);
      const details = await engine.videoDetails(videoId);
      expect(details.segments[0].thumbnail_url).toBe(`/videos/${videoId}/thumbnail?t=0`);
      const found = await engine.search(collectionId, { text: 'exit', top_k: 1 });
      expect(found.results[0].thumbnail_url).toBe(`/videos/${videoId}/thumbnail?t=${found.results[0].start}`);

      const { buildServer } = await import('../../src/server/app.js');
      const app = await buildServer(engine.services, { auth: false });
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      try {
        const { request } = await import('undici');
        const res = await request(`${url}${found.results[0].thumbnail_url}`);
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('image/jpeg');
        const body = Buffer.from(await res.body.arrayBuffer());
        expect(body[0]).toBe(0xff);
        expect((await request(`${url}/videos/${videoId}/thumbnail?t=-1`)).statusCode).toBe(422);
      } finally {
        await app.close();
      }

      await engine.deleteVideo(videoId);
      expect(await engine.blobs.has(`thumbs/${videoId}/poster.jpg`)).toBe(false);
      await expect(engine.videoThumbnail(videoId)).rejects.toMatchObject({ status: 404 });
    });
  });
});
