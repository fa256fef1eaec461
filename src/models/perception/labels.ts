/** COCO-80 classes in model output order, with the words a description should use for them. */

export interface CocoClass {
  /** COCO label. */
  label: string;
  /** Singular noun for descriptions. */
  noun: string;
  plural: string;
  /** Coarse group, used for setting cues and wording. */
  group: 'person' | 'vehicle' | 'outdoor' | 'animal' | 'accessory' | 'sports' | 'kitchen' | 'food' | 'furniture' | 'electronic' | 'indoor';
  /** Extra words (synonyms / hypernyms) that help text queries match. */
  synonyms?: string;
  /** Minimum detector score to mention it (some classes are frequent false positives). */
  minScore?: number;
}

const c = (
  label: string,
  group: CocoClass['group'],
  noun = label,
  plural = noun + 's',
  synonyms?: string,
  minScore?: number,
): CocoClass => ({ label, noun, plural, group, synonyms, minScore });

export const COCO: CocoClass[] = [
  c('person', 'person', 'person', 'people', undefined, 0.4),
  c('bicycle', 'vehicle', 'bicycle', 'bicycles', 'bike'),
  c('car', 'vehicle', 'car', 'cars', 'vehicle'),
  c('motorcycle', 'vehicle', 'motorcycle', 'motorcycles', 'motorbike'),
  c('airplane', 'vehicle', 'airplane', 'airplanes', 'aircraft, plane'),
  c('bus', 'vehicle', 'bus', 'buses'),
  c('train', 'vehicle', 'train', 'trains', 'railway'),
  c('truck', 'vehicle', 'truck', 'trucks', 'lorry'),
  c('boat', 'vehicle', 'boat', 'boats', 'ship'),
  c('traffic light', 'outdoor', 'traffic light', 'traffic lights', undefined, 0.45),
  c('fire hydrant', 'outdoor', 'fire hydrant', 'fire hydrants'),
  c('stop sign', 'outdoor', 'stop sign', 'stop signs', 'road sign'),
  c('parking meter', 'outdoor', 'parking meter', 'parking meters'),
  c('bench', 'outdoor', 'bench', 'benches'),
  c('bird', 'animal', 'bird', 'birds', undefined, 0.45),
  c('cat', 'animal', 'cat', 'cats', 'kitten'),
  c('dog', 'animal', 'dog', 'dogs', 'puppy'),
  c('horse', 'animal', 'horse', 'horses'),
  c('sheep', 'animal', 'sheep', 'sheep'),
  c('cow', 'animal', 'cow', 'cows', 'cattle'),
  c('elephant', 'animal', 'elephant', 'elephants'),
  c('bear', 'animal', 'bear', 'bears'),
  c('zebra', 'animal', 'zebra', 'zebras'),
  c('giraffe', 'animal', 'giraffe', 'giraffes'),
  c('backpack', 'accessory', 'backpack', 'backpacks', 'bag'),
  c('umbrella', 'accessory', 'umbrella', 'umbrellas'),
  c('handbag', 'accessory', 'handbag', 'handbags', 'bag'),
  c('tie', 'accessory', 'tie', 'ties', 'necktie', 0.45),
  c('suitcase', 'accessory', 'suitcase', 'suitcases', 'luggage'),
  c('frisbee', 'sports', 'frisbee', 'frisbees'),
  c('skis', 'sports', 'pair of skis', 'skis', 'skiing'),
  c('snowboard', 'sports', 'snowboard', 'snowboards'),
  c('sports ball', 'sports', 'ball', 'balls'),
  c('kite', 'sports', 'kite', 'kites'),
  c('baseball bat', 'sports', 'baseball bat', 'baseball bats'),
  c('baseball glove', 'sports', 'baseball glove', 'baseball gloves'),
  c('skateboard', 'sports', 'skateboard', 'skateboards'),
  c('surfboard', 'sports', 'surfboard', 'surfboards', 'surfing'),
  c('tennis racket', 'sports', 'tennis racket', 'tennis rackets'),
  c('bottle', 'kitchen', 'bottle', 'bottles'),
  c('wine glass', 'kitchen', 'wine glass', 'wine glasses', 'drink'),
  c('cup', 'kitchen', 'cup', 'cups', 'mug'),
  c('fork', 'kitchen', 'fork', 'forks', 'cutlery'),
  c('knife', 'kitchen', 'knife', 'knives', 'cutlery'),
  c('spoon', 'kitchen', 'spoon', 'spoons', 'cutlery'),
  c('bowl', 'kitchen', 'bowl', 'bowls', 'dish'),
  c('banana', 'food', 'banana', 'bananas', 'fruit'),
  c('apple', 'food', 'apple', 'apples', 'fruit'),
  c('sandwich', 'food', 'sandwich', 'sandwiches', 'food'),
  c('orange', 'food', 'orange', 'oranges', 'fruit'),
  c('broccoli', 'food', 'broccoli', 'broccoli', 'vegetables'),
  c('carrot', 'food', 'carrot', 'carrots', 'vegetables'),
  c('hot dog', 'food', 'hot dog', 'hot dogs', 'food'),
  c('pizza', 'food', 'pizza', 'pizzas', 'food'),
  c('donut', 'food', 'donut', 'donuts', 'food'),
  c('cake', 'food', 'cake', 'cakes', 'dessert'),
  c('chair', 'furniture', 'chair', 'chairs'),
  c('couch', 'furniture', 'couch', 'couches', 'sofa'),
  c('potted plant', 'furniture', 'potted plant', 'potted plants', 'houseplant'),
  c('bed', 'furniture', 'bed', 'beds', 'bedroom'),
  c('dining table', 'furniture', 'table', 'tables'),
  c('toilet', 'furniture', 'toilet', 'toilets', 'bathroom'),
  c('tv', 'electronic', 'television', 'televisions', 'screen, monitor'),
  c('laptop', 'electronic', 'laptop', 'laptops', 'computer'),
  c('mouse', 'electronic', 'computer mouse', 'computer mice'),
  c('remote', 'electronic', 'remote control', 'remote controls', undefined, 0.5),
  c('keyboard', 'electronic', 'keyboard', 'keyboards', 'computer'),
  c('cell phone', 'electronic', 'mobile phone', 'mobile phones', 'smartphone'),
  c('microwave', 'electronic', 'microwave', 'microwaves', 'kitchen'),
  c('oven', 'electronic', 'oven', 'ovens', 'kitchen'),
  c('toaster', 'electronic', 'toaster', 'toasters', 'kitchen'),
  c('sink', 'indoor', 'sink', 'sinks'),
  c('refrigerator', 'electronic', 'refrigerator', 'refrigerators', 'fridge'),
  c('book', 'indoor', 'book', 'books'),
  c('clock', 'indoor', 'clock', 'clocks', undefined, 0.45),
  c('vase', 'indoor', 'vase', 'vases', undefined, 0.5),
  c('scissors', 'indoor', 'pair of scissors', 'scissors'),
  c('teddy bear', 'indoor', 'teddy bear', 'teddy bears', 'toy'),
  c('hair drier', 'indoor', 'hair dryer', 'hair dryers'),
  c('toothbrush', 'indoor', 'toothbrush', 'toothbrushes'),
];

/** The COCO classes by label. */
export const COCO_BY_LABEL: ReadonlyMap<string, CocoClass> = new Map(COCO.map((k) => [k.label, k]));

/** The word people use for a whole group ("an animal", "a vehicle", "food"). */
const GROUP_WORDS: Partial<Record<CocoClass['group'], string>> = { animal: 'animal', vehicle: 'vehicle', food: 'food' };

/**
 * Other names of a COCO class for keyword search, as the ImageNet classes have theirs
 * (src/analysis/imagenet.ts): the description's noun where the label differs ("tv": television),
 * its synonyms ("dog": puppy; "car": vehicle) and its group's word ("dog": animal).
 */
export function cocoBroaderNames(label: string): string[] {
  const cls = COCO_BY_LABEL.get(label);
  if (!cls) return [];
  const names = [cls.noun, ...(cls.synonyms?.split(',').map((x) => x.trim()) ?? []), GROUP_WORDS[cls.group] ?? ''];
  return [...new Set(names.filter((n) => n && n !== label))];
}

/** Classes whose presence says the scene is outdoors / indoors. */
export const OUTDOOR_LABELS = new Set([
  'car', 'bus', 'train', 'truck', 'boat', 'airplane', 'motorcycle', 'bicycle', 'traffic light', 'fire hydrant',
  'stop sign', 'parking meter', 'bench', 'horse', 'sheep', 'cow', 'elephant', 'zebra', 'giraffe', 'kite',
  'skis', 'snowboard', 'surfboard',
]);
export const INDOOR_LABELS = new Set([
  'couch', 'bed', 'dining table', 'toilet', 'tv', 'laptop', 'mouse', 'remote', 'keyboard', 'microwave', 'oven',
  'toaster', 'sink', 'refrigerator', 'book', 'clock', 'vase', 'potted plant', 'chair', 'hair drier', 'toothbrush',
]);

const NUMBER_WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
export function numberWord(n: number): string {
  return NUMBER_WORDS[n] ?? String(n);
}

/** "a dog", "an apple", "two dogs", "many people" (>= 10), "a pair of skis". */
export function countPhrase(cls: CocoClass, n: number): string {
  if (n <= 1) return `${/^[aeiou]/.test(cls.noun) ? 'an' : 'a'} ${cls.noun}`;
  if (n >= 10) return `many ${cls.plural}`;
  return `${numberWord(n)} ${cls.plural}`;
}
