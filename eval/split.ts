/**
 * The held-out discipline: the shared eval set is split deterministically, by a hash of each
 * file's name, into a tuning half (weights and thresholds may be chosen on it) and a check half
 * (tests and targets assert on it; nothing is ever tuned on it). Adding files to the set never
 * moves an existing file to the other half.
 */
import { createHash } from 'node:crypto';

export type Half = 'tuning' | 'check';
export const HALVES: Half[] = ['tuning', 'check'];

const SALT = 'vidembed-eval-split-v1';

export function halfOf(fileName: string): Half {
  const base = fileName.replace(/^.*[\\/]/, '');
  return (createHash('sha256').update(`${SALT}:${base}`).digest()[0] & 1) === 0 ? 'tuning' : 'check';
}

export function inHalf<T extends { name: string }>(rows: T[], half: Half): T[] {
  return rows.filter((r) => halfOf(r.name) === half);
}
