/**
 * Request validation by the operations' schemas (src/api/schemas.ts), for callers that do not come
 * through the HTTP server (the local CLI's facade): the same schemas, compiled by Ajv with the
 * server's options, and the same 422 issues. The server validates with them as route schemas.
 */
import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ValidationError, type ValidationIssue } from './errors.js';
import { schemas } from './schemas.js';

export interface AjvError {
  instancePath?: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
  parentSchema?: Record<string, unknown>;
}

/** Ajv's wording replaced by the engine's, so a message reads the same from either face. */
function message(e: AjvError): string {
  const ps = e.parentSchema ?? {};
  switch (e.keyword) {
    case 'required':
      return 'field required';
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
      if (typeof ps.minimum === 'number' && typeof ps.maximum === 'number') return `must be between ${ps.minimum} and ${ps.maximum}`;
      return e.message ?? 'out of range';
    case 'type': {
      const t = String(e.params?.type ?? '');
      return t === 'integer' ? 'must be an integer' : t === 'object' || t === 'array' ? `must be an ${t}` : `must be a ${t}`;
    }
    case 'minLength':
      return e.params?.limit === 1 ? 'must not be empty' : (e.message ?? 'too short');
    case 'maxLength':
      return `must be at most ${e.params?.limit} characters`;
    case 'oneOf':
      return 'give exactly one of the sources (video_url, video_base64, or tensor for a task)';
    case 'pattern':
      return ps.pattern === '\\S' ? 'must not be empty' : `must match ${String(ps.pattern)}`;
    case 'not': {
      // Fields that do not go together (present() in src/api/schema-parts.ts).
      const not = (ps.not ?? {}) as { required?: string[]; anyOf?: { required?: string[] }[] };
      if (not.required && not.required.length > 1) return `give only one of ${not.required.join(', ')}`;
      if (not.required) return `not together with ${not.required[0]}`;
      if (not.anyOf) return `not together with ${not.anyOf.flatMap((a) => a.required ?? []).join(', ')}`;
      return e.message ?? 'invalid';
    }
    case 'const':
      return `must be ${JSON.stringify(e.params?.allowedValue)}`;
    case 'enum':
      return `must be one of ${((e.params?.allowedValues as unknown[]) ?? []).join(', ')}`;
    default:
      return e.message ?? 'invalid';
  }
}

/** Ajv's report in FastAPI's shape, so existing clients of the hosted API parse it. */
export function ajvToIssues(errors: AjvError[], context: string): ValidationIssue[] {
  const where = context === 'querystring' ? 'query' : context === 'params' ? 'path' : context;
  return errors.map((e) => {
    const loc: (string | number)[] = [where, ...(e.instancePath ?? '').split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p))];
    if (e.keyword === 'required' && e.params?.missingProperty) loc.push(String(e.params.missingProperty));
    return { loc, msg: message(e), type: e.keyword === 'required' ? 'value_error.missing' : `value_error.${e.keyword}` };
  });
}

type Part = 'body' | 'querystring' | 'params';
type Operation = { [K in keyof typeof schemas]: (typeof schemas)[K] extends { [P in Part]?: unknown } ? K : never }[keyof typeof schemas];

/**
 * Local callers may also name files on this machine (`image_path`, `video_path`), which the server
 * strips: a picture by path is a query of its own, so search also accepts `image_path` alone.
 */
function localSchema(op: string, part: Part, schema: Record<string, unknown>): Record<string, unknown> {
  if (op === 'search' && part === 'body') {
    const s = schema as { anyOf: unknown[]; properties: Record<string, unknown> };
    return { ...s, anyOf: [...s.anyOf, { required: ['image_path'] }], properties: { ...s.properties, image_path: { type: 'string', minLength: 1 } } };
  }
  // A video by path is one more source of which exactly one is given.
  if ((op === 'encodeVideo' || op === 'tagVideo' || op === 'asyncSubmit') && part === 'body') {
    const s = schema as { oneOf: unknown[]; properties: Record<string, unknown> };
    return { ...s, oneOf: [...s.oneOf, { required: ['video_path'] }], properties: { ...s.properties, video_path: { type: 'string', minLength: 1 } } };
  }
  return schema;
}

// Bodies are JSON: no coercion (a number where a string belongs is a 422); query strings are text, coerced.
const strict = new Ajv2020({ allErrors: true, coerceTypes: false, useDefaults: true, verbose: true });
const lenient = new Ajv2020({ allErrors: true, coerceTypes: 'array', useDefaults: true, verbose: true });
const compiled = new Map<string, ValidateFunction>();

/**
 * `value` checked against operation `op`'s `part` schema: a copy with the schema's defaults filled
 * in (top-level undefined fields dropped, as JSON would), or a ValidationError with the server's issues.
 */
export function validateRequest<T>(op: Operation, part: Part, value: T): T {
  const schema = (schemas[op] as Partial<Record<Part, Record<string, unknown>>>)[part];
  if (!schema) throw new Error(`operation ${op} has no ${part} schema`);
  return validateWith(`${op}.${part}`, () => localSchema(op, part, schema), part, value);
}

/**
 * `value` checked against a schema that is not an API operation's (the MCP server's own tools,
 * src/cli/mcp): compiled once under `key`, with the same options, defaults and 422 issues as
 * validateRequest. Bodies are JSON (no coercion); query strings and path parameters are text.
 */
export function validateWith<T>(key: string, schema: () => Record<string, unknown>, part: Part, value: T): T {
  let validate = compiled.get(key);
  if (!validate) {
    validate = (part === 'body' ? strict : lenient).compile(schema());
    compiled.set(key, validate);
  }
  const data = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) : value;
  if (!validate(data)) throw new ValidationError(ajvToIssues(validate.errors as AjvError[], part));
  return data as T;
}
