/**
 * Turns what perception measured in a segment into plain English that a sentence encoder (USE)
 * can match against short queries ("a dog on the grass", "a close-up of a face", "night city
 * lights"). The text is split into weighted parts: the segment vector is the weighted mean of the
 * parts' embeddings, so the subject of the shot outweighs colour and camera words.
 */
import { DESCRIBED_FACE, faceCounts, personBoxes } from '../../tagging/face-rule.js';
import type { Box } from './image.js';
import type { FaceAttributes } from './face-attributes.js';
import { iou, round } from './image.js';
import { COCO_BY_LABEL, countPhrase, INDOOR_LABELS, numberWord, OUTDOOR_LABELS, type CocoClass } from './labels.js';
import type { ColourName, ColourStats, RegionStats } from './colour.js';
import type { Keypoint, KeypointName } from './pose.js';
import type { FramingPixelCues, FramingTags } from '../../tagging/framing.js';
import type { HorizonEstimate } from '../../tagging/pixels.js';
import { PERCEPTION_WEIGHTS } from './weights.js';
import { COLOURFUL } from './scene-words.js';
import { labelWords, WORDED_KINDS } from '../../tags/registry.js';

/** One detected object instance, as seen on a keyframe. */
export interface ObjectSighting {
  label: string;
  score: number;
  box: Box;
  colour?: ColourName;
}

export interface FaceSighting {
  score: number;
  box: Box;
  /** BlazeFace keypoints, normalised [x, y]: right eye, left eye, nose, mouth, right ear, left ear. */
  keypoints?: Array<[number, number]>;
  /** Gender and expression, read on faces that count as people (face-attributes.ts). */
  attributes?: FaceAttributes;
}

/** What the models saw on one analysed keyframe. */
export interface KeyframeObservation {
  t: number;
  objects: ObjectSighting[];
  faces: FaceSighting[];
  /** Body parts visible on the main person (pose), when one was analysed. */
  poseParts?: KeypointName[];
  /** Box of the person the pose belongs to. */
  poseBox?: Box;
  /** All 17 MoveNet keypoints of the main person (normalised frame coordinates) and their mean score. */
  poseKeypoints?: Keypoint[];
  poseScore?: number;
  /** Keyframe size in pixels (aspect ratio for the face and pose geometry). */
  width?: number;
  height?: number;
  /** Line-orientation estimate of the keyframe (Dutch angle), with its line families. */
  horizon?: HorizonEstimate;
  /** Pixel cues for shot size and angle ({@link FramingPixelCues}: focus, sky, converging verticals). */
  cues?: FramingPixelCues;
}

export interface SegmentObservation {
  start: number;
  end: number;
  frameCount: number;
  /** Colour statistics averaged over all frames. */
  colour: ColourStats;
  keyframes: KeyframeObservation[];
  /** Mean thumbnail difference between consecutive frames in [0,1]. */
  change: number;
  /** Tags measured elsewhere (the pixel tagger: camera movement, lighting, horizon). */
  tags?: Record<string, { label: string; confidence: number }>;
  /** Shot size and shooting angle measured on the keyframes (`tagFraming`); they win over `tags`. */
  framing?: FramingTags;
}

export type PartKind = 'subject' | 'maybe' | 'people' | 'who' | 'setting' | 'colour' | 'camera';

export interface DescriptionPart {
  kind: PartKind;
  text: string;
  weight: number;
}

/** Aggregated evidence, JSON-able (stored as the segment's details). */
export interface SceneFacts {
  objects: Array<{ label: string; count: number; score: number; area: number; colour?: ColourName }>;
  people: number;
  faces: Array<{ score: number; box: Box }>;
  /** Who the counted faces are, grouped: "woman" ×2 (how sure, on average), how many of them smile. */
  who: WhoGroup[];
  largestFaceHeight: number;
  bodyVisible?: 'full_body' | 'upper_body' | 'head_and_shoulders' | 'face' | 'partial';
  setting: {
    indoor: boolean;
    outdoor: boolean;
    lighting: 'night' | 'dark' | 'dim' | 'normal' | 'bright';
    daylight: boolean;
    grayscale: boolean;
    cues: string[];
  };
  colours: ColourName[];
  brightness: number;
  contrast: number;
  saturation: number;
  colourfulness: number;
}

/** A detection below its class's mention threshold: soft evidence, said with "probably". */
export interface UncertainObject {
  label: string;
  noun: string;
  score: number;
  area: number;
  alternatives: string[];
}

export interface Description {
  text: string;
  parts: DescriptionPart[];
  facts: SceneFacts;
  uncertain: UncertainObject[];
}

/** Part weights for the segment vector: tuned on the tuning half only, see weights.ts. */
const PART_WEIGHTS: Record<PartKind, number> = PERCEPTION_WEIGHTS;

const DEFAULT_MIN_SCORE = 0.4;
/** Below a class's mention threshold but at least this: kept as soft evidence ("probably a dog"). */
export const SOFT_MIN_SCORE = 0.15;

function minScore(label: string): number {
  return COCO_BY_LABEL.get(label)?.minScore ?? DEFAULT_MIN_SCORE;
}

function area(b: Box): number {
  return b.w * b.h;
}

function cap(s: string): string {
  return s.length ? s[0].toUpperCase() + s.slice(1) : s;
}

function joinAnd(items: string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function joinOr(items: string[]): string {
  return items.length <= 2 ? items.join(' or ') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function frac(r: RegionStats, ...names: ColourName[]): number {
  return names.reduce((s, n) => s + r.colours[n], 0);
}

interface Setting {
  indoor: boolean;
  outdoor: boolean;
  lighting: SceneFacts['setting']['lighting'];
  daylight: boolean;
  grayscale: boolean;
  cues: string[];
}

/** Setting cues from colour layout + which objects are present. */
function analyseSetting(c: ColourStats, labels: Set<string>): Setting {
  const cues: string[] = [];
  const grayscale = c.saturation < 0.05;
  const top = c.top;
  const bottom = c.bottom;
  const indoorObj = [...labels].some((l) => INDOOR_LABELS.has(l));
  const outdoorObj = [...labels].some((l) => OUTDOOR_LABELS.has(l));

  let lighting: Setting['lighting'] = 'normal';
  if (c.brightness < 0.2 && c.highlights > 0.004) lighting = 'night';
  else if (c.brightness < 0.2) lighting = 'dark';
  else if (c.brightness < 0.3) lighting = 'dim';
  else if (c.brightness > 0.68) lighting = 'bright';

  let sky = false;
  let vegetation = false;
  if (!grayscale) {
    const topBlue = frac(top, 'blue', 'teal');
    const bottomBlue = frac(bottom, 'blue', 'teal');
    const allBlue = topBlue >= 0.6 && bottomBlue >= 0.6;
    if (allBlue) {
      cues.push('mostly blue, like open sky or water');
      sky = true;
    } else if (topBlue >= 0.4 && top.brightness >= 0.3 && top.texture < 0.05) {
      cues.push('blue sky at the top');
      sky = true;
    } else if (topBlue >= 0.4 && top.brightness < 0.3 && top.texture < 0.03) {
      cues.push('a dark blue sky at dusk');
      sky = true;
    }
    const topWhite = frac(top, 'white', 'grey');
    if (!sky && topWhite >= 0.5 && top.brightness >= 0.55 && top.texture < 0.035 && !indoorObj &&
        (topBlue >= 0.15 || frac(bottom, 'green') >= 0.3 || outdoorObj)) {
      cues.push('a cloudy white sky at the top');
      sky = true;
    }
    const topWarm = frac(top, 'orange', 'yellow', 'pink', 'red');
    if (topWarm >= 0.35 && top.texture < 0.035 && bottom.brightness < 0.3 && top.brightness > bottom.brightness + 0.15) {
      cues.push('a warm orange sunset or sunrise sky');
      sky = true;
    }
    const bottomGreen = frac(bottom, 'green');
    if (bottomGreen >= 0.3) {
      cues.push(labels.has('sports ball') ? 'green grass field at the bottom' : 'green grass or plants at the bottom');
      vegetation = true;
    }
    if (c.colours.green >= 0.25 && c.texture >= 0.05 && top.brightness < 0.5 && !sky) {
      cues.push('dense green trees, like a forest');
      vegetation = true;
    } else if (frac(top, 'green') >= 0.4 && top.texture >= 0.05) {
      cues.push('green trees and leaves');
      vegetation = true;
    } else if (c.colours.green >= 0.4 && !vegetation) {
      cues.push('lots of green plants and foliage');
      vegetation = true;
    }
    if (!allBlue && bottomBlue >= 0.4 && ((sky && top.brightness >= 0.35) || labels.has('boat'))) cues.push('blue water below');
    if (sky && frac(bottom, 'orange', 'yellow', 'brown') >= 0.4 && bottom.brightness >= 0.4) {
      cues.push('sand-coloured ground below the sky, like a beach or dunes');
    }
    if (frac(bottom, 'white') >= 0.4 && bottom.brightness >= 0.65 && (sky || outdoorObj)) cues.push('white snow on the ground');
  }

  const outdoor = sky || vegetation || outdoorObj;
  const indoor = !outdoor && indoorObj;
  const daylight = outdoor && c.brightness >= 0.35 && lighting !== 'night' && lighting !== 'dark';
  return { indoor, outdoor, lighting, daylight, grayscale, cues };
}

interface ObjectSummary {
  cls: CocoClass;
  count: number;
  score: number;
  area: number;
  colour?: ColourName;
  salience: number;
  /** Other classes the detector gave nearly the same box (e.g. dog vs sheep): ambiguity. */
  alternatives: Set<string>;
}

/**
 * The detector often scores one animal (or vehicle...) under several related classes with the
 * same box. The best class keeps the sighting; a same-group class on a near-identical box with a
 * comparable score becomes an alternative name instead of a separate object.
 */
function resolveAmbiguity(objects: ObjectSighting[]): Array<{ o: ObjectSighting; alternatives: string[] }> {
  const sorted = [...objects].sort((a, b) => b.score - a.score);
  const kept: Array<{ o: ObjectSighting; alternatives: string[] }> = [];
  for (const o of sorted) {
    const group = COCO_BY_LABEL.get(o.label)?.group;
    const owner = kept.find(
      (k) =>
        k.o.label !== o.label &&
        COCO_BY_LABEL.get(k.o.label)?.group === group &&
        group !== 'person' &&
        iou(k.o.box, o.box) >= 0.6 &&
        o.score >= 0.6 * k.o.score,
    );
    if (owner) {
      if (o.score >= 0.25 && !owner.alternatives.includes(o.label)) owner.alternatives.push(o.label);
      continue;
    }
    kept.push({ o, alternatives: [] });
  }
  return kept;
}

/** Detections too weak to state but strong enough to count: the best score per class, largest box. */
function uncertainObjects(keyframes: KeyframeObservation[], stated: Set<string>): UncertainObject[] {
  const map = new Map<string, UncertainObject>();
  for (const kf of keyframes) {
    for (const { o, alternatives } of resolveAmbiguity(kf.objects)) {
      if (stated.has(o.label) || o.score >= minScore(o.label) || o.score < SOFT_MIN_SCORE) continue;
      const cls = COCO_BY_LABEL.get(o.label);
      if (!cls || cls.label === 'person') continue; // people have their own, stronger evidence (faces, pose)
      const u = map.get(o.label) ?? { label: o.label, noun: cls.noun, score: 0, area: 0, alternatives: [] };
      u.score = Math.max(u.score, o.score);
      u.area = Math.max(u.area, area(o.box));
      for (const a of alternatives) if (!u.alternatives.includes(a) && a !== o.label) u.alternatives.push(a);
      map.set(o.label, u);
    }
  }
  return [...map.values()].sort((a, b) => b.score * Math.sqrt(b.area) - a.score * Math.sqrt(a.area));
}

function summariseObjects(keyframes: KeyframeObservation[]): ObjectSummary[] {
  const map = new Map<string, ObjectSummary>();
  for (const kf of keyframes) {
    const counts = new Map<string, number>();
    for (const { o, alternatives } of resolveAmbiguity(kf.objects)) {
      if (o.score < minScore(o.label)) continue;
      const cls = COCO_BY_LABEL.get(o.label);
      if (!cls) continue;
      counts.set(o.label, (counts.get(o.label) ?? 0) + 1);
      const a = area(o.box);
      const s = map.get(o.label) ?? { cls, count: 0, score: 0, area: 0, salience: 0, alternatives: new Set<string>() };
      for (const alt of alternatives) s.alternatives.add(alt);
      s.score = Math.max(s.score, o.score);
      if (a > s.area) {
        s.area = a;
        s.colour = o.colour;
      }
      s.salience = Math.max(s.salience, o.score * Math.sqrt(a));
      map.set(o.label, s);
    }
    for (const [label, n] of counts) {
      const s = map.get(label)!;
      s.count = Math.max(s.count, n);
    }
  }
  return [...map.values()].sort((a, b) => b.salience - a.salience);
}

function objectPhrase(o: ObjectSummary): string {
  const colour = o.count === 1 && o.area >= 0.02 && o.colour && o.colour !== 'grey' ? o.colour : '';
  if (o.cls.label === 'person') {
    if (o.count >= 6) return 'a crowd of people';
    const base = countPhrase(o.cls, o.count);
    return colour ? `${base} wearing ${colour}` : base;
  }
  const adjs: string[] = [];
  if (o.count === 1 && o.area >= 0.15 && o.area < 0.4) adjs.push('large');
  if (colour) adjs.push(colour);
  let phrase: string;
  if (o.count <= 1) {
    const words = [...adjs, o.cls.noun].join(' ');
    phrase = `${/^[aeiou]/.test(words) ? 'an' : 'a'} ${words}`;
  } else {
    phrase = o.count >= 10 ? `many ${o.cls.plural}` : `${numberWord(o.count)} ${o.cls.plural}`;
  }
  const alts = [...o.alternatives].filter((l) => l !== o.cls.label).slice(0, 2).map((l) => COCO_BY_LABEL.get(l)!);
  if (alts.length) phrase += ` or ${joinOr(alts.map((c) => (o.count <= 1 ? countPhrase(c, 1) : c.plural)))}`;
  if (o.count === 1 && o.area >= 0.4) phrase += ', filling the frame, seen close up';
  else if (o.area < 0.01) phrase += ' in the distance';
  return phrase;
}

/** Scene-level guesses from object combinations + colour cues. */
function sceneGuesses(labels: Set<string>, people: number, setting: Setting): string[] {
  const out: string[] = [];
  const has = (...ls: string[]) => ls.some((l) => labels.has(l));
  if (has('car', 'bus', 'truck', 'traffic light', 'motorcycle', 'bicycle', 'stop sign') && !setting.indoor) out.push('a street with traffic');
  if (has('boat') && setting.cues.some((c) => c.includes('water'))) out.push('boats on the water');
  if (has('airplane')) out.push('aircraft, like at an airport');
  if (has('sports ball', 'tennis racket', 'baseball bat', 'skateboard', 'surfboard', 'skis', 'snowboard', 'frisbee')) {
    out.push(people > 0 ? 'people playing a sport' : 'sports equipment');
  }
  if (has('couch', 'tv', 'bed')) out.push('a living room or bedroom');
  if (has('dining table', 'cup', 'bowl', 'wine glass', 'fork', 'knife', 'spoon', 'pizza', 'cake', 'sandwich')) out.push('food or drink on a table');
  if (people > 0 && setting.cues.some((c) => c.includes('beach'))) out.push('people at the beach');
  if (people >= 6) out.push('a crowd of people');
  return out;
}

/** The segment's tags in words: the kinds with words of their own first (registry order), then the rest. */
function tagWords(obs: SegmentObservation): string[] {
  const tags: NonNullable<SegmentObservation['tags']> = { ...(obs.tags ?? {}), ...(obs.framing ?? {}) };
  const out: string[] = [];
  for (const key of [...WORDED_KINDS, ...Object.keys(tags).filter((k) => !WORDED_KINDS.includes(k))]) {
    const t = tags[key];
    if (t && t.confidence >= 0.3 && typeof t.label === 'string' && t.label) out.push(labelWords(key, t.label));
  }
  return out;
}

export interface WhoGroup {
  /** "woman", "man" or "person" (gender unclear). */
  label: 'woman' | 'man' | 'person';
  count: number;
  /** Mean certainty of the gender, in [0, 1] (0 for "person"). */
  confidence: number;
  /** How many of them smile, and the mean probability of those smiles. */
  smiling: number;
  smilingConfidence: number;
}

/** Below this certainty (|2·P(female) − 1|) a face is "a person", not a woman or a man. */
const GENDER_MIN = 0.3;
/** An expression is said when its probability is at least this. */
const EXPRESSION_MIN = 0.5;

/** Counted faces with attributes, grouped by gender (largest group first). */
export function whoGroups(faces: FaceSighting[]): WhoGroup[] {
  const groups = new Map<WhoGroup['label'], { n: number; conf: number; smiling: number; smileP: number }>();
  for (const f of faces) {
    const a = f.attributes;
    if (!a) continue;
    const certainty = Math.abs(2 * a.female - 1);
    const label = certainty < GENDER_MIN ? 'person' : a.female > 0.5 ? 'woman' : 'man';
    const g = groups.get(label) ?? { n: 0, conf: 0, smiling: 0, smileP: 0 };
    g.n++;
    g.conf += label === 'person' ? 0 : certainty;
    if (a.expression === 'smiling' && a.expressionP >= EXPRESSION_MIN) {
      g.smiling++;
      g.smileP += a.expressionP;
    }
    groups.set(label, g);
  }
  return [...groups.entries()]
    .map(([label, g]) => ({ label, count: g.n, confidence: round(g.conf / g.n), smiling: g.smiling, smilingConfidence: g.smiling ? round(g.smileP / g.smiling) : 0 }))
    .sort((a, b) => b.count - a.count);
}

const PLURAL: Record<WhoGroup['label'], string> = { woman: 'women', man: 'men', person: 'people' };

/** "a smiling woman", "two men and a woman", "three smiling women". */
export function whoPhrase(groups: WhoGroup[]): string {
  return joinAnd(
    groups.map((g) => {
      const smile = g.smiling * 2 >= g.count ? 'smiling ' : '';
      if (g.count === 1) return `${smile ? 'a smiling' : /^[aeiou]/.test(g.label) ? 'an' : 'a'} ${g.label}`;
      return `${numberWord(Math.min(g.count, 10))} ${smile}${PLURAL[g.label]}`;
    }),
  );
}

export function describeSegment(obs: SegmentObservation): Description {
  const objects = summariseObjects(obs.keyframes);
  const labels = new Set(objects.map((o) => o.cls.label));
  const personObj = objects.find((o) => o.cls.label === 'person');
  const setting = analyseSetting(obs.colour, labels);

  // Faces: confident ones, or weaker ones that sit inside a detected person.
  const persons = obs.keyframes.flatMap((k) => personBoxes(k.objects, DESCRIBED_FACE.personMin));
  let faces: FaceSighting[] = [];
  for (const kf of obs.keyframes) {
    const ok = kf.faces.filter((f) => faceCounts(f, persons, DESCRIBED_FACE));
    if (ok.length > faces.length) faces = ok;
  }
  const largestFaceHeight = faces.reduce((m, f) => Math.max(m, f.box.h), 0);
  const people = Math.max(personObj?.count ?? 0, faces.length);
  if (personObj && faces.length > personObj.count) personObj.count = faces.length;

  // Body visibility of the main person (pose).
  const kfPose = obs.keyframes.find((k) => k.poseParts);
  let bodyVisible: SceneFacts['bodyVisible'];
  if (kfPose?.poseParts) {
    const p = new Set(kfPose.poseParts);
    const any = (...ks: KeypointName[]) => ks.some((k) => p.has(k));
    const head = any('nose', 'left_eye', 'right_eye');
    if (head && any('left_ankle', 'right_ankle') && any('left_knee', 'right_knee')) bodyVisible = 'full_body';
    else if (any('left_hip', 'right_hip') && any('left_shoulder', 'right_shoulder')) bodyVisible = 'upper_body';
    else if (head && any('left_shoulder', 'right_shoulder')) bodyVisible = 'head_and_shoulders';
    else if (head) bodyVisible = 'face';
    else bodyVisible = 'partial';
  }

  const parts: DescriptionPart[] = [];
  const add = (kind: PartKind, text: string) => {
    if (text) parts.push({ kind, text: cap(text.trim()) + '.', weight: PART_WEIGHTS[kind] });
  };

  // Subject: the objects (people first only when they dominate), or the landscape.
  const shown = objects.slice(0, 5);
  const guesses = sceneGuesses(labels, people, setting);
  if (shown.length > 0) {
    add('subject', joinAnd(shown.map(objectPhrase)) + (guesses.length ? `; ${guesses.join(', ')}` : ''));
  } else if (setting.outdoor) {
    const cue = (re: RegExp) => setting.cues.some((c) => re.test(c));
    let scene: string;
    if (cue(/forest/)) scene = 'a forest with dense trees';
    else if (cue(/sunset/)) scene = 'a landscape at sunset';
    else if (cue(/sky/) && cue(/green/)) scene = 'a green landscape under the sky';
    else if (cue(/sky or water/)) scene = 'open sky or water';
    else if (cue(/sky/)) scene = 'a landscape under the sky';
    else if (cue(/green/)) scene = 'green plants and leaves, nature';
    else scene = 'an outdoor scene';
    add('subject', scene);
  } else if (people === 0) {
    add('subject', 'a scene');
  }

  // People and faces.
  const peopleBits: string[] = [];
  if (faces.length > 0) {
    const n = faces.length;
    const fh = largestFaceHeight;
    if (n === 1) {
      if (fh >= 0.45) peopleBits.push("a close-up of a person's face filling the frame");
      else if (fh >= 0.25) peopleBits.push('one face, close to the camera');
      else if (fh >= 0.1) peopleBits.push('one face visible');
      else peopleBits.push('a small face in the distance');
    } else {
      const where = fh >= 0.25 ? ', close to the camera' : fh < 0.1 ? ', small in the distance' : '';
      peopleBits.push(`${numberWord(Math.min(n, 10))} faces${where}`);
    }
  }
  if (bodyVisible === 'full_body') peopleBits.push('a person seen full body, from head to feet');
  else if (bodyVisible === 'upper_body') peopleBits.push('upper body of a person');
  else if (bodyVisible === 'head_and_shoulders') peopleBits.push('head and shoulders portrait');
  if (peopleBits.length) add('people', peopleBits.join(', '));
  const who = whoGroups(faces);
  if (who.some((g) => g.label !== 'person' || g.smiling > 0)) add('who', whoPhrase(who));

  // Soft evidence: each weak detection is its own part, weighted by how sure the detector was.
  const uncertain = uncertainObjects(obs.keyframes, labels).slice(0, 4);
  for (const u of uncertain) {
    const names = [u.noun, ...u.alternatives.map((a) => COCO_BY_LABEL.get(a)?.noun ?? a)].slice(0, 3);
    const article = (w: string) => `${/^[aeiou]/.test(w) ? 'an' : 'a'} ${w}`;
    parts.push({ kind: 'maybe', text: `Probably ${joinOr(names.map(article))}.`, weight: PART_WEIGHTS.maybe * u.score });
  }

  // Setting: indoor/outdoor, light, layout cues.
  const settingBits: string[] = [];
  const where = setting.outdoor ? 'outdoor' : setting.indoor ? 'indoor' : '';
  const when =
    setting.lighting === 'night'
      ? setting.indoor
        ? 'dark'
        : 'night'
      : setting.daylight
        ? 'daylight'
        : setting.lighting === 'dark'
          ? 'dark, low-light'
          : setting.lighting === 'dim'
            ? 'dimly lit'
            : setting.lighting === 'bright'
              ? 'bright'
              : '';
  if (where || when) settingBits.push(`${[where, when].filter(Boolean).join(' ')} scene`);
  if (setting.lighting === 'night') settingBits.push(setting.indoor ? 'bright lamps in a dark room' : 'bright lights in the darkness');
  if (setting.grayscale) settingBits.push('black-and-white footage');
  settingBits.push(...setting.cues);
  if (settingBits.length) add('setting', settingBits.join(', '));

  // Colours.
  const colourNames = (Object.entries(obs.colour.colours) as Array<[ColourName, number]>)
    .filter(([name, f]) => (['black', 'grey', 'white'].includes(name) ? f >= 0.35 : f >= 0.1))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([n]) => n);
  const colourBits: string[] = [];
  if (!setting.grayscale && colourNames.length) colourBits.push(`mostly ${joinAnd(colourNames)} colours`);
  if (obs.colour.colourfulness >= COLOURFUL) colourBits.push('vivid and colourful');
  else if (!setting.grayscale && obs.colour.colourfulness < 0.15) colourBits.push('muted colours');
  if (obs.colour.contrast >= 0.3) colourBits.push('high contrast');
  if (colourBits.length) add('colour', colourBits.join(', '));

  // Camera: tags from the tagger, plus how much the picture changes.
  const cam = tagWords(obs);
  if (obs.frameCount > 1) {
    if (obs.change >= 0.12) cam.push('fast motion, the picture changes a lot');
    else if (obs.change < 0.01 && !cam.some((w) => w.includes('camera'))) cam.push('still picture');
  }
  if (cam.length) add('camera', cam.join(', '));

  const facts: SceneFacts = {
    objects: objects.map((o) => ({ label: o.cls.label, count: o.count, score: round(o.score), area: round(o.area), colour: o.colour })),
    people,
    faces: faces.map((f) => ({ score: f.score, box: f.box })),
    who,
    largestFaceHeight: round(largestFaceHeight),
    bodyVisible,
    setting: { ...setting },
    colours: colourNames,
    brightness: round(obs.colour.brightness),
    contrast: round(obs.colour.contrast),
    saturation: round(obs.colour.saturation),
    colourfulness: round(obs.colour.colourfulness),
  };
  return { text: parts.map((p) => p.text).join(' '), parts, facts, uncertain };
}
