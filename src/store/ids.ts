import { randomBytes } from 'node:crypto';

/** Prefixed random ids: the prefix tells a person what kind of thing an id names. */
export function newId(prefix: 'col' | 'vid' | 'req' | 'job' | 'wrk' | 'key' | 'whk' | 'dlv' | 'msg'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
