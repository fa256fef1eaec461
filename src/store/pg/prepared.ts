import type pg from 'pg';

/*
 * Named statements (docs/scale.md "Connections"). node-postgres sends every query as an unnamed
 * statement: PostgreSQL parses and plans it each time. A search is about ten short reads, and at
 * 1M segments on 2 cores their parsing and planning were ~0.1–0.4 ms each (pg_stat_statements:
 * plan time per call) beside a vector search that is the real work. Here each connection gives a
 * read its own name the first time it sees its text: PostgreSQL then parses it once per
 * connection, and plans it from its plan cache (after five runs a generic plan, when that costs
 * no more than the custom ones; a statement whose best plan depends on its values, like the HNSW
 * scan, keeps being planned for its values).
 *
 * Bounded: at most MAX_NAMED texts per connection (SQL built with values inside it would otherwise
 * grow without end); the rest stay unnamed. Only reads (SELECT / WITH) with parameters: a write's
 * plan is cheap beside its work, and DDL is never named. A statement whose result type the schema
 * changed under it (another process migrated: "cached plan must not change result type") is
 * prepared again under a new name and run once more.
 */

/** Texts a connection names at most. */
export const MAX_NAMED = 256;

const READ = /^\s*(SELECT|WITH)\b/i;

type QueryFn = (...args: unknown[]) => unknown;

/** Makes `client` run its parameterised reads as named statements (once per client). */
export function nameStatements(client: pg.ClientBase, max = MAX_NAMED): void {
  const query = client.query.bind(client) as QueryFn;
  const names = new Map<string, string>();
  let made = 0;
  const fresh = (text: string) => {
    const name = `vidembed_${made++}`;
    names.set(text, name);
    return name;
  };
  const run = async (text: string, values: unknown[]): Promise<unknown> => {
    const name = names.get(text) ?? (names.size < max ? fresh(text) : undefined);
    if (name === undefined) return query(text, values);
    try {
      return await query({ name, text, values });
    } catch (err) {
      if (!resultTypeChanged(err)) throw err;
      return query({ name: fresh(text), text, values });
    }
  };
  (client as unknown as { query: QueryFn }).query = (config: unknown, values?: unknown, cb?: unknown) => {
    if (typeof config !== 'string' || !Array.isArray(values) || !READ.test(config)) return query(config, values, cb);
    const done = run(config, values);
    if (typeof cb !== 'function') return done;
    // The callback form (pg-pool's pool.query uses it).
    done.then(
      (res) => (cb as (e: unknown, r?: unknown) => void)(null, res),
      (err) => (cb as (e: unknown) => void)(err),
    );
    return undefined;
  };
}

/** PostgreSQL's refusal to run a prepared statement whose result columns changed type since it was prepared. */
function resultTypeChanged(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}
