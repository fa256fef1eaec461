import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPgPool } from '../../src/store/pg/migrate.js';
import { nameStatements } from '../../src/store/pg/prepared.js';
import { pgTestAvailable, usePgTestDatabase } from '../helpers/postgres.js';

/*
 * Reads as named statements (src/store/pg/prepared.ts) on a real PostgreSQL: each connection
 * prepares a parameterised read once (pg_prepared_statements shows it), the same answers come
 * back, a schema change under a prepared statement is survived, the names are bounded, and
 * VIDEMBED_PG_PREPARED=0 (prepared: false) leaves every statement unnamed.
 */

const ok = pgTestAvailable();

/** The statements this pool's one connection has prepared (its own session's view). */
async function preparedOf(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name');
  return rows.map((r) => `${r.name}: ${r.statement}`);
}

describe.skipIf(!ok)('PostgreSQL reads as named statements', () => {
  const db = usePgTestDatabase(['collections']);

  it('a parameterised read is prepared once per connection and answers as unnamed', async () => {
    const named = openPgPool(db.url, 1);
    const plain = openPgPool(db.url, 1, { prepared: false });
    try {
      await named.query(`INSERT INTO collections (id, name, description, model, dim) VALUES ('c1', 'one', '', 'm', 4), ('c2', 'two', '', 'm', 4)`);
      const text = 'SELECT id, name FROM collections WHERE id = $1';
      for (const id of ['c1', 'c2', 'c1', 'none']) {
        expect((await named.query(text, [id])).rows).toEqual((await plain.query(text, [id])).rows);
      }
      // The callback form (pg-pool's own) is named too, and a checked-out client's promise form.
      const viaCallback = await new Promise<unknown[]>((resolve, reject) => named.query(text, ['c2'], (err, res) => (err ? reject(err) : resolve(res.rows))));
      expect(viaCallback).toEqual([{ id: 'c2', name: 'two' }]);
      const client = await named.connect();
      try {
        expect((await client.query('WITH x AS (SELECT $1::int AS n) SELECT n + 1 AS m FROM x', [41])).rows).toEqual([{ m: 42 }]);
      } finally {
        client.release();
      }
      // Two texts named (the read, the WITH); statements without parameters, and writes, unnamed.
      expect(await preparedOf(named)).toEqual([`vidembed_0: ${text}`, 'vidembed_1: WITH x AS (SELECT $1::int AS n) SELECT n + 1 AS m FROM x']);
      expect(await preparedOf(plain)).toEqual([]);
    } finally {
      await named.end();
      await plain.end();
    }
  });

  it('a prepared read whose result type the schema changed under it is prepared again and answers', async () => {
    const pool = openPgPool(db.url, 1);
    const other = openPgPool(db.url, 1, { prepared: false });
    try {
      await other.query('DROP TABLE IF EXISTS prepared_t; CREATE TABLE prepared_t (id int PRIMARY KEY, a int); INSERT INTO prepared_t VALUES (1, 7)');
      const text = 'SELECT a FROM prepared_t WHERE id = $1';
      expect((await pool.query(text, [1])).rows).toEqual([{ a: 7 }]);
      // Another process migrates: the column's type changes under the prepared statement.
      await other.query('ALTER TABLE prepared_t ALTER COLUMN a TYPE text');
      expect((await pool.query(text, [1])).rows).toEqual([{ a: '7' }]);
      expect((await pool.query(text, [1])).rows).toEqual([{ a: '7' }]);
    } finally {
      await other.query('DROP TABLE IF EXISTS prepared_t').catch(() => {});
      await pool.end();
      await other.end();
    }
  });

  it('names at most `max` texts per connection; the rest run unnamed and still answer', async () => {
    const pool = openPgPool(db.url, 1, { prepared: false });
    const client = await pool.connect();
    try {
      nameStatements(client, 2);
      for (let i = 0; i < 5; i++) expect((await client.query(`SELECT $1::int + ${i} AS n`, [1])).rows).toEqual([{ n: 1 + i }]);
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements');
      expect(rows[0].n).toBe(2);
    } finally {
      client.release();
      await pool.end();
    }
  });
});
