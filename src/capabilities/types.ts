/**
 * What a capability is: one analysis the engine can run on a video, declared once in the
 * capability registry (registry.ts) with what it reads, what it writes, its version and whether it
 * can run here. The pipeline, the lanes and the reindex planner work from these declarations; none
 * of them names a capability.
 */
import type { CapabilityStatus, SpeechSetting } from '../api/defaults.js';
import type { Analyzer, AnalyzerOutput } from '../analysis/types.js';
import type { Embedder } from '../embedders/types.js';
import type { PartsOptions, PcmChunks } from '../speech/types.js';

/**
 * - `frame`: looks at a segment's pictures (perception, ImageNet, on-screen text, the pixel taggers);
 * - `track`: listens to the whole soundtrack, then says what each segment holds (speech, levels);
 * - `derived`: made from other capabilities' output (the vector, the keyword index, the signature).
 */
export type CapabilityKind = 'frame' | 'track' | 'derived';

/**
 * The media a capability reads: `frames` (every sampled frame of a segment: a decode of the
 * video), `keyframe` (the segment's keyframe only, which the engine keeps: no decode when stored),
 * `audio` (the soundtrack as 16 kHz PCM).
 */
export type MediaInput = 'frames' | 'keyframe' | 'audio';

/** What a capability writes. */
export type CapabilityOutput = 'segments' | 'facts' | 'tags' | 'description' | 'terms' | 'vector' | 'keywords' | 'transcript' | 'signature';

/** The lanes (lanes.ts): each runs its capabilities as a job of its own kind, with its own priority (pictures first, speech after). */
export type LaneName = 'pictures' | 'speech';

/** What a collection's capabilities depend on: its embedder and its speech setting. */
export interface CapabilityContext {
  embedder: Pick<Embedder, 'id' | 'consumes'>;
  speech: { setting: SpeechSetting; language: string };
  env: NodeJS.ProcessEnv;
}

export type Availability = { available: true } | { available: false; reason: string };

/** What a track capability heard in a whole soundtrack: JSON, kept with the video until its segments are known. */
export type Heard = Record<string, unknown>;

/** What a hearer is told: the lane's signal and niceness, and how it may hear in parts (src/speech/parts.ts). */
export interface HearOptions {
  signal?: AbortSignal;
  nice?: number;
  parts?: PartsOptions;
}

/**
 * A track capability at work: it hears the soundtrack once (`hear`, given the PCM of the one
 * decode its lane shares between its capabilities), then says what each segment holds (`segment`,
 * from what it and the capabilities it reads heard, by name).
 */
export interface Hearer {
  hear(pcm: PcmChunks | undefined, opts: HearOptions): Promise<Heard>;
  segment(heard: Record<string, Heard>, start: number, end: number): AnalyzerOutput;
}

export interface CapabilityDecl {
  readonly name: string;
  readonly kind: CapabilityKind;
  /** The lane that runs it (its job kind and priority: lanes.ts). */
  readonly lane: LaneName;
  /** What it writes into a segment (or the video). */
  readonly outputs: readonly CapabilityOutput[];
  /**
   * `always`: every collection runs it; `when-read`: only when a capability the collection runs
   * reads it (ImageNet runs for the embedders that pool its facts).
   */
  readonly wanted: 'always' | 'when-read';
  /** The media it reads for this collection. */
  media(ctx: CapabilityContext): readonly MediaInput[];
  /**
   * Capabilities whose output it needs (run before it, pulled into the plan, and a change in one
   * re-runs it). Per collection: the embedding reads what its embedder consumes.
   */
  inputs(ctx: CapabilityContext): readonly string[];
  /**
   * Capabilities whose output it uses when they ran, without pulling them in (the keyword index
   * holds every fact there is). A change in one re-runs it too.
   */
  reads?(ctx: CapabilityContext, registry: { all(): readonly CapabilityDecl[] }): readonly string[];
  /** Its version now, known without loading a model: part of what a video records it was made with. */
  version(ctx: CapabilityContext): Promise<string> | string;
  /** Whether it can run here (a model installed, a program present, a setting on), and why not. */
  availability(ctx: CapabilityContext): Promise<Availability> | Availability;
  /** Frame capabilities: the analyzer, loaded (asked only when available). */
  analyzer?(ctx: CapabilityContext): Promise<Analyzer | null>;
  /** Track capabilities: what hears the soundtrack (asked only when available). */
  hearer?(ctx: CapabilityContext): Promise<Hearer> | Hearer;
}

/** One capability as a collection would run it now. */
export interface PlannedCapability {
  name: string;
  kind: CapabilityKind;
  lane: LaneName;
  version: string;
  available: boolean;
  /** Why it is skipped, when it is not available. */
  reason?: string;
}

/** A capability's state for one video, as the catalog keeps it (src/store/catalog/types.ts AnalysisCatalog). */
export type { CapabilityStatus };

export interface CapabilityState {
  capability: string;
  status: CapabilityStatus;
  /** The version that made its output (done), or that will (pending, running). */
  version: string | null;
  /** Why it was skipped, or how it failed. */
  message: string | null;
}

/** A registry that does not add up: thrown at start-up, naming what is wrong. */
export class CapabilityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CapabilityError';
  }
}
