/**
 * fast-check arbitraries made from JSON Schema 2020-12 (the subset /openapi.json uses): values the
 * schema is meant to accept, and near misses (one field of a valid object replaced by anything).
 * Keywords a generator cannot honour by construction (`if`/`then`, `not`, a `oneOf` whose
 * alternatives overlap) are left to the caller, which checks each value against the schema with
 * Ajv and knows which ones were valid.
 */
import fc from 'fast-check';

export type Schema = boolean | {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  contentEncoding?: string;
  minItems?: number;
  maxItems?: number;
  prefixItems?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  minProperties?: number;
  additionalProperties?: boolean | Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  format?: string;
};

/** Anything JSON can carry, kept small. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 20 }),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);

function stringArb(s: Exclude<Schema, boolean>): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Math.max(min, 40);
  if (s.format === 'binary') return fc.string({ maxLength: 40 });
  let arb: fc.Arbitrary<string>;
  if (s.contentEncoding === 'base64') {
    arb = fc.oneof({ weight: 4, arbitrary: fc.base64String({ minLength: 4, maxLength: 64 }) }, { weight: 1, arbitrary: fc.string({ maxLength: 16 }) });
  } else if (s.pattern) {
    const re = new RegExp(s.pattern, 'u');
    // fast-check reads the pattern itself (an unanchored one, "\S", gets text around a match); it
    // knows no lookahead: those are dropped for generating and checked after.
    const generating = s.pattern.replace(/\(\?[=!](?:[^()\\]|\\.)*\)/g, '');
    arb = fc.stringMatching(new RegExp(generating, 'u')).filter((v) => re.test(v));
  } else arb = fc.string({ minLength: min, maxLength: Math.min(max, 40) });
  return arb.filter((v) => v.length >= min && v.length <= max);
}

function numberArb(s: Exclude<Schema, boolean>, integer: boolean): fc.Arbitrary<number> {
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum : -1e6);
  const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum : 1e6);
  const inRange = (v: number) => v >= lo && v <= hi && (s.exclusiveMinimum === undefined || v > s.exclusiveMinimum) && (s.exclusiveMaximum === undefined || v < s.exclusiveMaximum);
  const edges = [lo, hi, Math.floor((lo + hi) / 2)].filter(inRange).filter((v) => !integer || Number.isInteger(v));
  const body = integer
    ? fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) })
    : fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true });
  return (edges.length ? fc.oneof(body, fc.constantFrom(...edges)) : body).filter(inRange);
}

const made = new WeakMap<object, fc.Arbitrary<unknown>>();

/** Values `schema` is meant to accept (see the file's comment for what is left to the caller); one arbitrary per schema object. */
export function valueOf(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (typeof schema !== 'object' || schema === null) return make(schema, depth);
  let arb = made.get(schema);
  if (!arb) made.set(schema, (arb = make(schema, depth)));
  return arb;
}

function make(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  if (schema === true || schema === undefined) return anyJson;
  if (schema === false) return fc.constant(undefined);
  const s = schema;
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum?.length) return fc.constantFrom(...s.enum);
  const alts = s.oneOf ?? s.anyOf;
  if (alts?.length) {
    // One alternative merged into the rest of the schema (its required fields, its properties); of
    // `oneOf` alternatives that only require fields (one source of several), the others' fields are left out.
    const { oneOf: _o, anyOf: _a, ...rest } = s;
    const requiredBy = (a: Schema) => (typeof a === 'object' ? (a.required ?? []) : []);
    return fc.oneof(
      ...alts.map((alt) => {
        if (typeof alt === 'boolean') return valueOf(rest, depth);
        const others = new Set(s.oneOf ? alts.filter((a) => a !== alt).flatMap(requiredBy) : []);
        requiredBy(alt).forEach((k) => others.delete(k));
        const properties = Object.fromEntries(Object.entries({ ...rest.properties, ...alt.properties }).filter(([k]) => !others.has(k)));
        return valueOf({ ...rest, ...alt, type: alt.type ?? rest.type, required: [...(rest.required ?? []), ...requiredBy(alt)], properties }, depth);
      }),
    );
  }
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : [];
  if (type.length > 1) return fc.oneof(...type.map((t) => valueOf({ ...s, type: t }, depth)));
  switch (type[0]) {
    case 'string':
      return stringArb(s);
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (depth > 4) return fc.constant([]);
      if (s.prefixItems) return fc.tuple(...s.prefixItems.map((p) => valueOf(p, depth + 1)));
      return fc.array(valueOf(s.items ?? true, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) });
    }
    case 'object': {
      if (depth > 4) return fc.constant({});
      const props = Object.entries(s.properties ?? {});
      const required = new Set(s.required ?? []);
      const record = fc.record(Object.fromEntries(props.map(([k, v]) => [k, valueOf(v, depth + 1)])), {
        requiredKeys: props.map(([k]) => k).filter((k) => required.has(k)),
      }) as fc.Arbitrary<Record<string, unknown>>;
      const extra = s.additionalProperties === false || !s.additionalProperties ? fc.constant({}) : fc.dictionary(fc.string({ maxLength: 8 }), valueOf(s.additionalProperties, depth + 1), { maxKeys: 2 });
      return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r })).filter((o) => Object.keys(o).length >= (s.minProperties ?? 0));
    }
    default:
      return anyJson;
  }
}

/** A valid-looking object with one field (or the whole value) replaced by anything: the near misses. */
export function nearMissOf(schema: Schema): fc.Arbitrary<unknown> {
  const props = typeof schema === 'object' ? Object.keys(schema.properties ?? {}) : [];
  if (!props.length) return anyJson;
  return fc.tuple(valueOf(schema), fc.constantFrom(...props), anyJson, fc.boolean()).map(([v, key, other, drop]) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return other;
    const out = { ...(v as Record<string, unknown>) };
    if (drop) delete out[key];
    else out[key] = other;
    return out;
  });
}
