import type { Queryable } from './migrate.js';

/**
 * Counts kept as deltas appended by statement triggers (appends never wait for one another, so
 * concurrent writers stay concurrent): segment_counts per collection (PG migration 20),
 * segment_term_counts per lexeme (migration 1300), video_counts per collection (migration 1500). A
 * reader sums a key's rows; once a key has gathered many, a reader (video_counts: a writer, now and
 * then) folds them into one row.
 */
const KEY_OF = { segment_counts: 'collection_id', segment_term_counts: 'term', video_counts: 'collection_id' } as const;

/**
 * Folds one key's deltas into one row, in the background (one statement: a concurrent fold or write
 * loses nothing). Callers need not wait; the promise (never rejected) says when it is done.
 */
export function foldDeltas(q: Queryable, table: keyof typeof KEY_OF, key: string): Promise<void> {
  const col = KEY_OF[table];
  return q.query(
    `WITH gone AS (DELETE FROM ${table} WHERE ${col} = $1 RETURNING n)
     INSERT INTO ${table} (${col}, n) SELECT $1, sum(n) FROM gone HAVING count(*) > 0`,
    [key],
  ).then(
    () => {},
    () => {}, // another try at the next search
  );
}
