/** Embedding and tagging a video that is not stored: by URL, bytes, a local path, or uploaded tensors. */
import type { EncodeVideoRequest, EncodeVideoResponse, TagVideoResponse, TensorRef } from '../api/types.js';
import { LIMITS } from '../api/defaults.js';
import type { Embedder } from '../embedders/types.js';
import { DEFAULT_EMBEDDER_ID } from '../embedders/registry.js';
import { analyzeFrames, analyzeVideo, type AnalyzedVideo } from '../pipeline/pipeline.js';
import { resolveVideoSource } from '../pipeline/sources.js';
import { buildTags } from '../pipeline/tags.js';
import { loadTensorAudio, loadTensorFrames } from '../pipeline/tensors.js';
import { withTrack } from '../pipeline/tracks.js';
import { capabilityContext, frameAnalyzers, trackHearers } from '../capabilities/index.js';
import { pcmFromFloat } from '../speech/attach.js';
import type { Library, LibraryPorts } from './library.js';

export function toEncodeVideoResponse(analyzed: AnalyzedVideo, embedder: Embedder): EncodeVideoResponse {
  return {
    embeddings: analyzed.segments.map((s) => Array.from(s.vector)),
    segments: analyzed.segments.map((s) => ({ start: s.start, end: s.end })),
    model: embedder.id,
    dim: embedder.dim,
    video_embedding: Array.from(analyzed.videoVector),
    descriptions: analyzed.segments.map((s) => s.description),
  };
}

/** What a synchronous analysis answers: an embedding (`encode`) or tags (`tag`). */
export type AnalysisKind = 'encode' | 'tag';
export type AnswerOf<K extends AnalysisKind> = K extends 'encode' ? EncodeVideoResponse : TagVideoResponse;

/** One analysis of a video file on this machine. */
export interface AnalysisJob<K extends AnalysisKind = AnalysisKind> {
  kind: K;
  file: string;
  /** The registry's id of the embedder (the thread looks it up in its own registry). */
  embedderId: string;
  segmentSeconds: number;
  fps: number;
}

/** Runs analyses somewhere else than the event loop (src/runtime/analysis-thread.ts: a pool of worker threads). */
export interface AnalysisRunner {
  run<K extends AnalysisKind>(job: AnalysisJob<K>, signal?: AbortSignal): Promise<AnswerOf<K>>;
}

/** What a synchronous analysis answers, from its analysis: the embedding or the tags. */
export function answerOf<K extends AnalysisKind>(kind: K, analyzed: AnalyzedVideo, embedder: Embedder): AnswerOf<K> {
  return (kind === 'encode' ? toEncodeVideoResponse(analyzed, embedder) : { tags: buildTags(analyzed, embedder.id) }) as AnswerOf<K>;
}

/** What a one-off analysis runs: a collection's capabilities with this embedder and speech `auto`, both lanes at once. */
async function oneOffCapabilities(ports: Pick<LibraryPorts, 'capabilities'>, embedder: Embedder) {
  const ctx = capabilityContext(embedder);
  const plan = await ports.capabilities.plan(ctx);
  return { analyzers: (await frameAnalyzers(ports.capabilities, plan, ctx)).analyzers, hearers: await trackHearers(ports.capabilities, plan, ctx) };
}

/**
 * The analysis of a video file that is not stored, answered as `kind`: with the library's
 * capabilities and media (on this thread), or the defaults of a thread of src/runtime/analysis-thread.ts.
 * The pictures and the soundtrack are analysed at once and joined (no lanes: nothing is stored).
 */
export async function answerFile<K extends AnalysisKind>(
  kind: K,
  file: string,
  embedder: Embedder,
  opts: { segmentSeconds: number; fps: number; signal?: AbortSignal },
  ports: Pick<LibraryPorts, 'capabilities' | 'media'>,
): Promise<AnswerOf<K>> {
  const { analyzers, hearers } = await oneOffCapabilities(ports, embedder);
  const { media } = ports;
  const probed = await media.probe(file, { signal: opts.signal });
  const analyzed = await withTrack(
    (signal) => analyzeVideo(file, embedder, { ...opts, signal, analyzers, media, probe: probed }),
    probed.hasAudio ? (signal) => media.audio(file, { signal }) : undefined,
    hearers,
    opts.signal,
  );
  return answerOf(kind, analyzed, embedder);
}

/** How a synchronous analysis runs: `threads` (the server's pool) takes it off the event loop. */
export interface AnalyzeCallOptions {
  signal?: AbortSignal;
  threads?: AnalysisRunner;
}

export class AnalysisService {
  constructor(private readonly lib: Library) {}

  /** The segment length, frame rate and embedder a request asks for (its schema bounds them). */
  options(req: EncodeVideoRequest): { segmentSeconds: number; fps: number; embedder: Embedder } {
    return {
      segmentSeconds: req.segment_seconds ?? LIMITS.segmentSeconds.default,
      fps: req.fps ?? LIMITS.fps.default,
      embedder: this.lib.embedder(req.model ?? DEFAULT_EMBEDDER_ID, ['body', 'model']),
    };
  }

  async encodeVideo(req: EncodeVideoRequest, opts: AnalyzeCallOptions = {}): Promise<EncodeVideoResponse> {
    return this.answerSource('encode', req, opts);
  }

  /** Tags a video without storing it: the same analysis an upload gets, answered as SPEC §3 Tags. */
  async tagVideo(req: EncodeVideoRequest, opts: AnalyzeCallOptions = {}): Promise<TagVideoResponse> {
    return this.answerSource('tag', req, opts);
  }

  async encodeTensor(req: EncodeVideoRequest & { tensor: TensorRef }, signal: AbortSignal): Promise<EncodeVideoResponse> {
    const { analyzed, embedder } = await this.analyzeTensor(req, signal);
    return answerOf('encode', analyzed, embedder);
  }

  async tagTensor(req: EncodeVideoRequest & { tensor: TensorRef }, signal: AbortSignal): Promise<TagVideoResponse> {
    const { analyzed, embedder } = await this.analyzeTensor(req, signal);
    return answerOf('tag', analyzed, embedder);
  }

  /** Fetches or writes the source here, then analyses it here or on one of `threads`. */
  private async answerSource<K extends AnalysisKind>(kind: K, req: EncodeVideoRequest, { signal, threads }: AnalyzeCallOptions): Promise<AnswerOf<K>> {
    const { segmentSeconds, fps, embedder } = this.options(req);
    const { lib } = this;
    const source = await resolveVideoSource(req, { allowPath: true, fetchPolicy: lib.fetchPolicy, maxBytes: lib.maxUploadBytes });
    try {
      await lib.checkVideo(source.file, source.displayName);
      if (threads) return await threads.run({ kind, file: source.file, embedderId: embedder.id, segmentSeconds, fps }, signal);
      return await answerFile(kind, source.file, embedder, { segmentSeconds, fps, signal }, lib);
    } catch (err) {
      throw lib.redact(err, [[source.file, source.displayName]]);
    } finally {
      await source.cleanup();
    }
  }

  private async analyzeTensor(req: EncodeVideoRequest & { tensor: TensorRef }, signal: AbortSignal): Promise<{ analyzed: AnalyzedVideo; embedder: Embedder }> {
    const { segmentSeconds, fps, embedder } = this.options(req);
    const { lib } = this;
    const frames = await loadTensorFrames(lib.blobs, req.tensor.video_input_key!, req.tensor.video_kwargs_key);
    const audioKey = req.tensor.audio_input_key;
    const audio = audioKey ? await loadTensorAudio(lib.blobs, audioKey) : undefined;
    const { analyzers, hearers } = await oneOffCapabilities(lib, embedder);
    const analyzed = await withTrack(
      (both) => analyzeFrames(frames, embedder, { segmentSeconds, fps, signal: both, analyzers, media: lib.media }),
      audio?.length ? () => pcmFromFloat(audio) : undefined,
      hearers,
      signal,
    );
    if (audio?.length) analyzed.media.hasAudio = true;
    return { analyzed, embedder };
  }
}
