import { ValidationError } from './errors.js';

/**
 * Text that must say something: the schemas check it is a non-empty string (src/api/schemas.ts);
 * this refuses one of only spaces, which a schema cannot say with FastAPI's message.
 */
export function requireText(value: unknown, loc: (string | number)[]): string {
  if (typeof value !== 'string') throw new ValidationError([{ loc, msg: 'must be a string', type: 'type_error.str' }]);
  if (value.trim().length === 0) throw new ValidationError([{ loc, msg: 'must not be empty', type: 'value_error.empty' }]);
  return value;
}
