// The part of pg-cursor (node-postgres's own cursor, MIT) vidembed uses: it ships no types.
declare module 'pg-cursor' {
  import type { Connection, QueryResultRow } from 'pg';
  export default class Cursor<R extends QueryResultRow = QueryResultRow> {
    constructor(text: string, values?: unknown[]);
    /** The next `rows` rows (fewer: the result is done). */
    read(rows: number): Promise<R[]>;
    close(): Promise<void>;
    /** node-postgres's Submittable: `client.query(cursor)` hands it the connection. */
    submit(connection: Connection): void;
  }
}
