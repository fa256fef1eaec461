import { ValidationError } from '../api/errors.js';

/** Small validators that raise FastAPI-style 422 issues naming the field. */
export function requireText(value: unknown, loc: (string | number)[]): string {
  if (typeof value !== 'string') throw new ValidationError([{ loc, msg: 'must be a string', type: 'type_error.str' }]);
  if (value.trim().length === 0) throw new ValidationError([{ loc, msg: 'must not be empty', type: 'value_error.empty' }]);
  return value;
}

export function intInRange(value: unknown, loc: (string | number)[], min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new ValidationError([{ loc, msg: 'must be an integer', type: 'type_error.integer' }]);
  }
  if (value < min || value > max) {
    throw new ValidationError([{ loc, msg: `must be between ${min} and ${max}`, type: 'value_error.number.range' }]);
  }
  return value;
}

export function numberInRange(
  value: unknown,
  loc: (string | number)[],
  check: (n: number) => boolean,
  rule: string,
  fallback: number,
): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || !check(value)) {
    throw new ValidationError([{ loc, msg: `must be a number ${rule}`, type: 'value_error.number.range' }]);
  }
  return value;
}
