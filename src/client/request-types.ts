/**
 * The request and response types of each operation of the generated table (./operations.ts), from
 * the same JSON Schemas the server validates with (src/api/schemas.ts): what `VidembedClient.request`
 * takes and answers.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Named } from '../api/types.js';
import type { OPERATIONS, OperationId } from './operations.js';

/** A schema as types see it: the run-time-only combinators (exactly one source, at least one query part) left out. */
type Plain<S> = S extends object ? Omit<S, 'oneOf' | 'anyOf' | 'if' | 'then' | 'not'> : S;

type SchemaOf<K extends OperationId> = (typeof OPERATIONS)[K] extends { schema: infer S } ? S : object;

type Part<K extends OperationId, P extends 'params' | 'querystring' | 'body'> = SchemaOf<K> extends { [Q in P]: infer S }
  ? Plain<S> extends infer X extends JSONSchema
    ? Named<FromSchema<X, { keepDefaultedPropertiesOptional: true }>>
    : never
  : undefined;

/** The path parameters of an operation (`{collection_id}` …), or undefined when it has none. */
export type OperationParams<K extends OperationId> = Part<K, 'params'>;
/** Its query parameters, or undefined. */
export type OperationQuery<K extends OperationId> = Part<K, 'querystring'>;
/** Its JSON body, or undefined. */
export type OperationBody<K extends OperationId> = Part<K, 'body'>;
/** What it answers on success (its response schema's type; unknown for a file). */
export type OperationResponse<K extends OperationId> = SchemaOf<K> extends { response: infer S extends JSONSchema } ? Named<FromSchema<S>> : unknown;

/** The parts of one request: path parameters and a body where the operation has them, a query, or a multipart form (uploads). */
export type OperationRequest<K extends OperationId> = (OperationParams<K> extends undefined ? { params?: undefined } : { params: OperationParams<K> }) &
  (OperationQuery<K> extends undefined ? { query?: undefined } : { query?: OperationQuery<K> }) &
  (OperationBody<K> extends undefined ? { body?: undefined } : { body: OperationBody<K> }) & { form?: import('undici').FormData };

/**
 * Each operation's request and response, looked up one operation at a time: `request(op, …)` reads
 * `OperationTypes[K]` for the one K of the call, so a consumer's compiler never expands the types of
 * every operation at once (OperationRequest<K> over the union of all ids is too deep: TS2589).
 */
export type OperationTypes = { [K in OperationId]: { request: OperationRequest<K>; response: OperationResponse<K> } };

/** An answer as it came: status, headers, body (parsed JSON, else text; a file's bytes for file operations). */
export interface RawResponse {
  /** What was asked: the method and the path with its query. */
  method: string;
  path: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}
