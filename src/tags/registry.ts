/**
 * Every tag kind, declared once: its name (the key in a segment's tags, the search filter field,
 * the OpenAPI property), its labels, the words a description uses for them, how a whole video's
 * value is made, whether search can filter on it, and what produces it. Search filters (engine),
 * the web page's filter menus, the CLI's `search` options and the OpenAPI enums all come from here,
 * so a new kind is one entry (and its producer).
 *
 * Tags come from analyzers (src/analysis) and the pixel taggers (src/tagging), never from embedders.
 */
import { aggregateOverTime, type TagValue } from './aggregate.js';

export interface TagKind {
  /** Its key in tags, the search body field and the OpenAPI property. */
  readonly name: string;
  /** Heading of its menu on the web page. */
  readonly title: string;
  readonly labels: readonly string[];
  /** How a description says a label (the label with spaces when absent). */
  readonly words?: Readonly<Record<string, string>>;
  /**
   * A whole video's value: `segments` = the one aggregation rule over its segments' tags
   * (duration-weighted, src/tags/aggregate.ts); `producer` = its producer measures the whole video
   * itself (the pixel taggers' lighting histogram over every frame, horizon over every estimate).
   */
  readonly whole: 'segments' | 'producer';
  /** Listed in each entry of `Tags.segments` (the SPEC §3 per-segment tags). */
  readonly perSegment: boolean;
  /** Search can keep to segments with one of its labels (`search` body field, CLI option, web menu). */
  readonly filterable: boolean;
  /** The CLI `search` option (`--shot close_up`) and the short name `video show` prints. */
  readonly option?: string;
  /** What measures it: an analyzer's name (src/analysis) or `pixels` (the pixel taggers). */
  readonly producer: string;
}

export const TAG_KINDS = [
  {
    name: 'shot_size',
    title: 'Shot size',
    labels: ['extreme_close_up', 'close_up', 'medium_close_up', 'medium', 'medium_wide', 'wide', 'extreme_wide'],
    words: {
      extreme_close_up: 'extreme close-up shot',
      close_up: 'close-up shot',
      medium_close_up: 'medium close-up shot',
      medium: 'medium shot',
      medium_wide: 'medium wide shot',
      wide: 'wide shot',
      extreme_wide: 'extreme wide shot',
    },
    whole: 'segments',
    perSegment: true,
    filterable: true,
    option: 'shot',
    producer: 'perception',
  },
  {
    name: 'camera_movement',
    title: 'Movement',
    labels: ['static', 'pan_left', 'pan_right', 'tilt_up', 'tilt_down', 'zoom_in', 'zoom_out', 'roll', 'handheld'],
    words: {
      static: 'static camera',
      pan_left: 'camera panning left',
      pan_right: 'camera panning right',
      tilt_up: 'camera tilting up',
      tilt_down: 'camera tilting down',
      zoom_in: 'camera zooming in',
      zoom_out: 'camera zooming out',
      handheld: 'shaky handheld camera',
    },
    // The pixel tagger aggregates with the same rule and adds the mean rates (tagging/index.ts).
    whole: 'producer',
    perSegment: true,
    filterable: true,
    option: 'movement',
    producer: 'pixels',
  },
  {
    name: 'shooting_angle',
    title: 'Angle',
    labels: ['eye_level', 'high_angle', 'low_angle', 'overhead', 'dutch'],
    words: {
      eye_level: 'eye-level camera angle',
      high_angle: 'high-angle shot looking down',
      low_angle: 'low-angle shot looking up',
      overhead: "overhead shot, bird's-eye view",
      dutch: 'tilted dutch angle',
    },
    whole: 'segments',
    perSegment: true,
    filterable: true,
    option: 'angle',
    producer: 'perception',
  },
  { name: 'lighting', title: 'Lighting', labels: ['low_key', 'normal', 'bright'], whole: 'producer', perSegment: true, filterable: false, producer: 'pixels' },
  { name: 'horizon', title: 'Horizon', labels: ['level', 'tilted'], whole: 'producer', perSegment: false, filterable: false, producer: 'pixels' },
  { name: 'audio', title: 'Audio', labels: ['speech', 'music', 'silence', 'other'], whole: 'segments', perSegment: true, filterable: true, option: 'audio', producer: 'speech' },
] as const satisfies readonly TagKind[];

export type TagKindName = (typeof TAG_KINDS)[number]['name'];
type Kind<N extends TagKindName> = Extract<(typeof TAG_KINDS)[number], { name: N }>;
/** The labels of one kind, as a literal tuple (`TagLabels<'shot_size'>[number]` is its label type). */
export type TagLabels<N extends TagKindName> = Kind<N>['labels'];

export function tagKind<N extends TagKindName>(name: N): Kind<N> {
  return TAG_KINDS.find((k) => k.name === name) as Kind<N>;
}

export function labelsOf<N extends TagKindName>(name: N): TagLabels<N> {
  return tagKind(name).labels as TagLabels<N>;
}

/** The kinds search can filter on, in menu order. */
export type FilterableKind = Extract<(typeof TAG_KINDS)[number], { filterable: true }>;
export type FilterName = FilterableKind['name'];
export const FILTERABLE_KINDS: readonly FilterableKind[] = TAG_KINDS.filter((k): k is FilterableKind => k.filterable);
export const FILTER_NAMES: readonly FilterName[] = FILTERABLE_KINDS.map((k) => k.name);

/** A search filter: kind → the label a segment must carry (only filterable kinds, only given ones). */
export type TagFilterValues = Partial<Record<FilterName, string>>;

/** `{kind: [labels]}` of the filterable kinds (the web page's menus). */
export function filterVocabulary(): Record<FilterName, string[]> {
  return Object.fromEntries(FILTERABLE_KINDS.map((k) => [k.name, [...k.labels]])) as Record<FilterName, string[]>;
}

/** The given filters of a request-like object as a generic kind → label record (what the store takes). */
export function tagFilterOf(req: object): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of FILTER_NAMES) {
    const v = (req as Record<string, unknown>)[k];
    if (typeof v === 'string' && v !== '') out[k] = v;
  }
  return out;
}

/** The label's words in a description: the kind's own, else the label with spaces. */
export function labelWords(kind: string, label: string): string {
  const words = (TAG_KINDS.find((k) => k.name === kind) as TagKind | undefined)?.words;
  return words?.[label] ?? label.replace(/_/g, ' ');
}

/** Kinds whose labels have words of their own (the description says them first, in this order). */
export const WORDED_KINDS: readonly string[] = TAG_KINDS.filter((k) => 'words' in k).map((k) => k.name);

/**
 * A video's whole-video tags from its segments' tags and its producers' whole-video values: each
 * kind in registry order, by its `whole` rule. Kinds nobody measured are left out.
 */
export function wholeVideoTags(segments: Array<{ start: number; end: number; tags: Record<string, TagValue | undefined> }>, produced: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of TAG_KINDS) {
    const v = k.whole === 'producer' ? produced[k.name] : aggregateOverTime(segments.map((s) => ({ start: s.start, end: s.end, tag: s.tags[k.name] })));
    if (v) out[k.name] = v;
  }
  return out;
}

/** The per-segment entry of `Tags.segments`: the kinds listed per segment that the segment has. */
export function segmentTagEntry(tags: Record<string, TagValue | undefined>): Record<string, TagValue> {
  const out: Record<string, TagValue> = {};
  for (const k of TAG_KINDS) if (k.perSegment && tags[k.name]) out[k.name] = tags[k.name]!;
  return out;
}
