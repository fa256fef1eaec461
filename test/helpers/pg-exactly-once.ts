import type pg from 'pg';

/**
 * Segment deletions a correct run makes: a video's speech lane that settles after its picture lane
 * revises the segments the picture lane wrote, and a revision replaces them (delete + insert, so
 * the in-memory indexes see it: src/store/segments-revise.ts) — one deletion per segment. Any other
 * deletion (a picture lane, or a speech lane, whose results were written twice) is a job done more
 * than once. Settles of one video are serialised (its analysis lock), so the order of their jobs'
 * `updated_at` (set by the settling transaction) is the order they landed in.
 */
export async function expectedSegmentDeletions(pool: pg.Pool): Promise<{ expected: number; actual: number; revisedAfterPictures: string[] }> {
  const { rows } = await pool.query<{ video_id: string; n: number }>(
    `SELECT s.video_id, count(*)::int AS n
       FROM segments s
       JOIN jobs p ON p.ref_id = s.video_id AND p.kind = 'video.pictures' AND p.status = 'done'
       JOIN jobs sp ON sp.ref_id = s.video_id AND sp.kind = 'video.speech' AND sp.status = 'done'
      WHERE sp.updated_at > p.updated_at
      GROUP BY s.video_id`,
  );
  const actual = Number((await pool.query('SELECT count(*) AS n FROM segment_deletions')).rows[0].n);
  return { expected: rows.reduce((a, r) => a + r.n, 0), actual, revisedAfterPictures: rows.map((r) => r.video_id) };
}
