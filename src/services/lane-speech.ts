/**
 * `video.speech`: the speech lane of one video — its track capabilities (speech, levels, any
 * other that listens) hear the soundtrack from one decode, at a lower priority (the lane's nice),
 * while the picture lane works. What they heard is kept with the video (`soundtrack/<id>.json`,
 * and the transcript); it reaches the segments in whichever lane settles second: here, merged
 * into the stored segments (facts, index terms, tags; never a vector) when the pictures are done;
 * else by the picture lane when it settles (`heardTrack`).
 */
import { errorMessage } from '../api/errors.js';
import type { Tags } from '../api/types.js';
import { analysisOf, keywordsOf, storedFacts } from '../analysis/keywords.js';
import type { SegmentAnalysis } from '../analysis/types.js';
import { laneOf, trackHearers, type Heard, type Hearer } from '../capabilities/index.js';
import { hearTrack, joinTrack } from '../pipeline/tracks.js';
import { sideLaneWaitMs, speechMinPieceS, speechParts } from '../env.js';
import { speechSlots } from '../speech/parts.js';
import { retagVideo } from '../pipeline/tags.js';
import type { CatalogTx, SegmentRevision } from '../store/catalog/types.js';
import { StagedArtifacts, stagingPrefix, VIDEO_ARTIFACTS } from './artifacts.js';
import { LaneJob, SettleAgain, type LaneRun } from './lane-job.js';
import type { JobContext } from './job-types.js';
import type { Library } from './library.js';

/** What a video's track capabilities heard, as kept (`soundtrack/<id>.json`): by capability name. */
type KeptTrack = Record<string, Heard>;

async function keptTrack(lib: Library, videoId: string): Promise<KeptTrack> {
  const key = VIDEO_ARTIFACTS.soundtrack(videoId);
  try {
    return (await lib.blobs.has(key)) ? (JSON.parse((await lib.blobs.get(key)).toString('utf8')) as KeptTrack) : {};
  } catch {
    return {}; // removed meanwhile, or unreadable: as if none
  }
}

/** The track capabilities' states of a video, as one string: a settle that read them checks they did not move. */
async function trackKey(catalog: Pick<CatalogTx, 'analysis'>, lib: Library, videoId: string): Promise<string> {
  const track = new Set(lib.capabilities.all().filter((d) => d.kind === 'track').map((d) => d.name));
  const rows = (await catalog.analysis.forVideo(videoId)).filter((r) => track.has(r.capability));
  return JSON.stringify(rows.map((r) => [r.capability, r.status, r.updated_at]));
}

/** The hearers of the track capabilities that are done for a video (what is joined to its segments). */
async function doneHearers(lib: Library, run: LaneRun, rows: { capability: string; status: string }[]): Promise<Array<{ name: string; hearer: Hearer }>> {
  const done = new Set(rows.filter((r) => r.status === 'done').map((r) => r.capability));
  const out: Array<{ name: string; hearer: Hearer }> = [];
  for (const d of lib.capabilities.all()) if (d.kind === 'track' && done.has(d.name) && d.hearer) out.push({ name: d.name, hearer: await d.hearer(run.capCtx) });
  return out;
}

/**
 * For the picture lane's settle: what the track capabilities heard so far, joined to the new
 * segments; `check` (inside the settle) throws SettleAgain when the speech lane settled meanwhile.
 */
export async function heardTrack(lib: Library, run: LaneRun): Promise<{ join(segments: Array<{ start: number; end: number; tags: Record<string, never> | Record<string, unknown>; analysis: SegmentAnalysis }>): void; check(tx: CatalogTx): Promise<void> }> {
  const videoId = run.video.id;
  const key = await trackKey(lib.catalog, lib, videoId);
  const rows = await lib.catalog.analysis.forVideo(videoId);
  const hearers = await doneHearers(lib, run, rows);
  const kept = hearers.length ? await keptTrack(lib, videoId) : {};
  return {
    join: (segments) => joinTrack(segments as Parameters<typeof joinTrack>[0], hearers, kept),
    check: async (tx) => {
      if ((await trackKey(tx, lib, videoId)) !== key) throw new SettleAgain('the speech lane settled meanwhile');
    },
  };
}

export class SpeechLaneJob extends LaneJob {
  readonly lane = 'speech' as const;

  protected async work(run: LaneRun, ctx: JobContext): Promise<void> {
    const { lib } = this;
    const { video, plan, capCtx, mine } = run;
    const nice = laneOf(this.lane).nice;
    // Hearing in parts: as many pieces at once as the cores the main lane leaves (src/speech/parts.ts).
    const cores = speechParts();
    const slots = speechSlots(cores, ctx.beside ?? { mainRunning: () => 0, maxWaitMs: sideLaneWaitMs() });
    const mineSet = new Set(mine);
    const hearers = await trackHearers(lib.capabilities, plan, capCtx, mineSet);
    run.running(hearers.map((h) => h.name));
    const staged = new StagedArtifacts(lib.blobs, stagingPrefix(ctx.job));
    run.onEnd(() => staged.discard());
    let heard: Record<string, Heard> = {};
    const failed = new Map<string, string>();
    if (hearers.length) {
      const file = await lib.localVideoFile(video);
      run.onEnd(() => file.release());
      run.redactAs(file.path, video.filename);
      const probed = await lib.media.probe(file.path, { signal: ctx.signal });
      try {
        // A long soundtrack is heard in pieces on the cores the pictures leave (src/speech/parts.ts).
        const minPieceS = speechMinPieceS();
        const parts = { durationS: probed.durationSec, cores, slots, ...(minPieceS ? { minPieceS } : {}) };
        heard = await hearTrack(probed.hasAudio ? lib.media.audio(file.path, { signal: ctx.signal, nice }) : undefined, hearers, { signal: ctx.signal, nice, parts });
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        for (const h of hearers) failed.set(h.name, errorMessage(run.redact(err)));
      }
    }
    run.progress(1);
    const kept = { ...(await keptTrack(lib, video.id)) };
    for (const name of mine) delete kept[name];
    Object.assign(kept, heard);
    await staged.put(VIDEO_ARTIFACTS.soundtrack(video.id), Buffer.from(JSON.stringify(kept)));
    // A capability that writes a transcript keeps it where the API reads it (one per video).
    for (const h of hearers) {
      if (!lib.capabilities.get(h.name).outputs.includes('transcript') || failed.has(h.name)) continue;
      const t = heard[h.name] as { transcript?: unknown; reason?: string } | undefined;
      const transcript = t?.transcript ?? { engine: '', language: '', words: [], duration: 0, reason: t?.reason ?? 'nothing heard' };
      await staged.put(VIDEO_ARTIFACTS.transcript(video.id), Buffer.from(JSON.stringify(transcript)));
    }
    const states = plan
      .filter((p) => mineSet.has(p.name))
      .map((p) => (!p.available ? run.skippedState(p) : failed.has(p.name) ? run.failedState(p, failed.get(p.name)!) : run.doneState(p)));
    const versions = new Map(plan.map((p) => [p.name, p.version]));
    const order = plan.map((p) => p.name);
    await run.settle(async (tx) => {
      const now = (await tx.collections.byId(run.collection.id))?.recipe_json;
      const recipe = now ? (JSON.parse(now) as Record<string, string>) : {};
      const speech = plan.find((p) => p.kind === 'track' && lib.capabilities.get(p.name).outputs.includes('transcript'));
      if (speech) await tx.collections.setRecipe(run.collection.id, { ...recipe, speech_setting: capCtx.speech.setting, [speech.name]: speech.version });
      const rows = await tx.segments.listForVideo(video.id);
      if (!rows.length) return { states }; // the picture lane joins it when it settles
      // Every track capability done after this settle: those done before and those that ran now.
      const after = (await tx.analysis.forVideo(video.id)).map((r) => (mineSet.has(r.capability) ? { ...r, status: states.find((s) => s.capability === r.capability)?.status ?? r.status } : r));
      const joined = await doneHearers(lib, run, after);
      const track = new Set(lib.capabilities.all().filter((d) => d.kind === 'track').map((d) => d.name));
      const revisions: SegmentRevision[] = [];
      const revised: Array<{ start: number; end: number; tags: Record<string, import('../api/types.js').TagValue> }> = [];
      for (const r of rows) {
        const own = Object.fromEntries(Object.entries(analysisOf(r.facts_json)).filter(([n]) => !track.has(n)));
        const seg = { start: r.start, end: r.end, tags: (r.tags_json ? JSON.parse(r.tags_json) : {}) as Record<string, import('../api/types.js').TagValue>, analysis: own };
        joinTrack([seg], joined, kept);
        const analysis: SegmentAnalysis = {};
        for (const n of order) if (seg.analysis[n]) analysis[n] = seg.analysis[n];
        for (const [n, a] of Object.entries(seg.analysis)) if (!analysis[n]) analysis[n] = a;
        const stored = JSON.parse(r.facts_json ?? '{}') as Record<string, { version?: string }>;
        const v = new Map(versions);
        for (const [n, s] of Object.entries(stored)) if (!track.has(n)) v.set(n, s.version ?? '');
        revisions.push({ idx: r.idx, keywords: keywordsOf(analysis), facts: storedFacts(analysis, v), tags: seg.tags });
        revised.push(seg);
      }
      await tx.segments.reviseForVideo(video.id, run.collection.id, run.collection.dim, revisions);
      const old = (await tx.videos.byId(video.id))?.tags_json;
      const tagsJson = old ? JSON.stringify(retagVideo(JSON.parse(old) as Tags, revised)) : undefined;
      return { states, ...(tagsJson !== undefined ? { tagsJson } : {}) };
    }, staged);
  }
}
