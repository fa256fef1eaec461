import os from 'node:os';
import { PG_VECTOR_DEFAULTS, type PgVectorSettings } from '../../env.js';
import { inTransaction, isClient, type Queryable } from '../pg/migrate.js';
import { foldDeltas } from '../pg/deltas.js';
import { ensureHnswIndex, HNSW_MAX_DIM, hnswIndexName, indexKind, packVectors, readVectorStore, vectorAt, type VectorStoreRow } from '../pg/vector-store.js';
import { filterEntries, filterKey, labelsOf } from '../labels.js';
import { cosineTo, normOf } from '../vector-index.js';
import { loadIndex, PgSegmentsIndex } from './pg-index.js';
import { PgvectorSearch, type CollectionCounts } from './pg-vectors.js';
import type { NewSegment, SegmentKeyRow, SegmentRevision, SegmentRow, SegmentsCatalog, SignatureRow, SignaturesCatalog, TagFilter, TermList } from './types.js';
import { reviseSegments } from '../segments-revise.js';

export { PgSegmentsIndex };

/*
 * Segments and signatures on PostgreSQL (tables of PG_MIGRATIONS versions 3 and 4, src/store/pg/migrations.ts).
 *
 * Where vectors live and are searched depends on the library's vector store (src/store/pg/vector-store.ts):
 * in pgvector mode they are in `vec` and every vector call is SQL (./pg-vectors.ts, no copy here);
 * otherwise they are float32 little-endian bytea and nearest-neighbour search runs
 * in this process: PgSegmentsIndex (src/store/catalog/pg-index.ts) keeps the one in-memory index
 * (src/store/vector-index.ts) of each collection it was asked about and, before every search,
 * catches up with what any process or machine wrote since its last look, in one statement. The top
 * k are exact (margin 0); `also` segments are read off the int8 scan within their margin.
 * Tag labels are a jsonb object per segment (kind → label); a filter matches `labels @> filter`.
 *
 * Keywords are a tsvector of the 'english' configuration (Snowball stemmer with stop words), and a
 * term is matched as a phrase (phraseto_tsquery), ranked by ts_rank (normalised by length) then id.
 * SQLite's FTS5 uses the Porter stemmer without stop words: the two stem a few words differently,
 * and on PostgreSQL a stop word ("the", "with") matches nothing.
 */

const SEGMENT_COLS = `id::float8 AS id, video_id, collection_id, idx, start, "end", description, details_json, facts_json, tags_json,
  labels, phash`;

/** The deletion log keeps entries this long (by the database's clock)... */
const DELETION_LOG_KEEP_MS = 24 * 3600_000;

const LITTLE_ENDIAN = os.endianness() === 'LE';

/** Answers kept (keyword matches, term counts) per catalog; past this the cache starts over. */
const ANSWER_CACHE_SIZE = 4096;

function checkDim(dim: number): void {
  if (!Number.isInteger(dim) || dim <= 0 || dim > 8192) throw new Error(`bad vector dimension ${dim}`);
}

/** A vector as stored: float32, little endian. */
function toBytes(v: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  const out = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) out.writeFloatLE(v[i], i * 4);
  return out;
}

function fromBytes(b: Buffer): Float32Array {
  if (LITTLE_ENDIAN) return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const out = new Float32Array(b.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4);
  return out;
}

/** How long a pool's catalog trusts the vector-store phase it read (a migration's switch is seen within this). */
const PHASE_TTL_MS = 5000;

/** The library's vector-store phase as last read on a pool (shared by a catalog and its search views). */
export class PhaseCache {
  private row?: VectorStoreRow;
  private at = 0;
  private reading?: Promise<VectorStoreRow>;

  get(q: Queryable): Promise<VectorStoreRow> {
    if (this.row && Date.now() - this.at < PHASE_TTL_MS) return Promise.resolve(this.row);
    this.reading ??= readVectorStore(q)
      .then((row) => {
        this.row = row;
        this.at = Date.now();
        return row;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** After this process changed the phase itself. */
  forget(): void {
    this.row = undefined;
  }
}

/** What one search view keeps for the calls of its search. */
interface SearchPin {
  phase?: Promise<VectorStoreRow>;
  counts: Map<string, Promise<CollectionCounts>>;
  videoOf: Map<number, string>;
}

export interface PgSegmentsOptions {
  /** pgvector's index and search settings (default: PG_VECTOR_DEFAULTS; the process's come from src/env.ts). */
  settings?: PgVectorSettings;
}

/** Count deltas a lexeme may gather (one per write statement that held it) before a search folds them. */
const FOLD_TERM_AFTER = 64;

export class PgSegmentsCatalog implements SegmentsCatalog {
  private readonly phases = new PhaseCache();
  private readonly sql: PgvectorSearch;
  private readonly settings: PgVectorSettings;
  /** Dimensions whose HNSW index this process knows exists. */
  private readonly indexed = new Set<number>();
  private pin?: SearchPin;

  /**
   * `q`: a pool (with its own in-memory index, unless one is given) or a client inside a
   * transaction (searches then scan the collection as the transaction sees it, without an index).
   */
  constructor(
    private readonly q: Queryable,
    readonly index: PgSegmentsIndex | undefined = isClient(q) ? undefined : new PgSegmentsIndex(q),
    opts: PgSegmentsOptions = {},
  ) {
    this.settings = opts.settings ?? PG_VECTOR_DEFAULTS;
    this.sql = new PgvectorSearch(q, this.settings);
  }

  /**
   * For one search: the vector-store phase and each collection's count are read once; in memory
   * mode the in-memory index catches up once, at the first call that needs it (PgSegmentsIndex.pinned).
   */
  forSearch(): SegmentsCatalog {
    const view = Object.create(this) as PgSegmentsCatalog;
    Object.defineProperty(view, 'pin', { value: { counts: new Map(), videoOf: new Map() } satisfies SearchPin });
    if (this.index) Object.defineProperty(view, 'index', { value: this.index.pinned() });
    return view;
  }

  async reviseForVideo(videoId: string, collectionId: string, dim: number, revisions: SegmentRevision[]): Promise<void> {
    await reviseSegments(this, videoId, collectionId, dim, revisions);
  }

  /** The library's vector-store phase: inside a transaction as it sees it, on a pool as read at most 5 s ago. */
  private async store(): Promise<VectorStoreRow> {
    if (isClient(this.q)) return readVectorStore(this.q);
    if (this.pin) return (this.pin.phase ??= this.phases.get(this.q));
    return this.phases.get(this.q);
  }

  /** In pgvector mode: the store row (and this process's in-memory indexes, if it had any, are let go). */
  private async pgvector(): Promise<VectorStoreRow | undefined> {
    const row = await this.store();
    if (row.phase !== 'pgvector') return undefined;
    this.index?.drop();
    return row;
  }

  /** Where this catalog's searches run now (tests, doctor). */
  async searchMode(): Promise<'memory' | 'pgvector'> {
    return (await this.pgvector()) ? 'pgvector' : 'memory';
  }

  private countsOf(collectionId: string): Promise<CollectionCounts> {
    if (!this.pin) return this.sql.counts(collectionId);
    let got = this.pin.counts.get(collectionId);
    if (!got) this.pin.counts.set(collectionId, (got = this.sql.counts(collectionId)));
    return got;
  }

  /** The dimension's HNSW index, made when missing (a dimension's first segments in pgvector mode). */
  private async ensureIndex(on: Queryable, dim: number, row: VectorStoreRow): Promise<void> {
    const kind = indexKind(row);
    if (this.indexed.has(dim) || dim > HNSW_MAX_DIM[kind]) return;
    const { rows } = await on.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [hnswIndexName(dim)]);
    if (!rows[0].ok) {
      if (isClient(on)) {
        // Inside the writer's transaction: the DDL lock, then the (empty, or small) build.
        await on.query('SELECT pg_advisory_xact_lock($1)', [0x76656332]);
        await on.query(
          `CREATE INDEX IF NOT EXISTS ${hnswIndexName(dim)} ON segments USING hnsw ((l2_normalize(vec)::${kind}(${dim})) ${kind}_ip_ops)
           WITH (m = ${row.settings.m ?? this.settings.m}, ef_construction = ${row.settings.ef_construction ?? this.settings.efConstruction}) WHERE dim = ${dim}`,
        );
      } else {
        await ensureHnswIndex(on, dim, kind, { m: row.settings.m ?? this.settings.m, efConstruction: row.settings.ef_construction ?? this.settings.efConstruction, buildMemory: this.settings.buildMemory });
      }
    }
    this.indexed.add(dim);
  }

  async replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): Promise<void> {
    checkDim(dim);
    for (const s of segments) {
      if (s.vector.length !== dim) throw new Error(`segment vector has ${s.vector.length} dims, expected ${dim}`);
    }
    const json = (v: Record<string, unknown> | undefined) => (v ? JSON.stringify(v) : null);
    let built: VectorStoreRow | undefined;
    await inTransaction(this.q, async (c) => {
      // The phase FOR SHARE: a migration's switch waits for this write, and every later write sees it.
      const store = await readVectorStore(c, 'FOR SHARE');
      const bytea = store.phase !== 'pgvector';
      const vec = store.phase !== 'memory';
      if (store.phase === 'pgvector' && segments.length) {
        if (isClient(this.q)) await this.ensureIndex(c, dim, store);
        else built = store;
      }
      await this.deleteOn(c, videoId);
      if (segments.length === 0) return;
      // The vectors in binary (packVectors): no float printed or parsed.
      const packed = vec ? packVectors(segments.map((s) => s.vector)) : { data: null, offsets: segments.map(() => null) };
      await c.query(
        `INSERT INTO segments (video_id, collection_id, idx, start, "end", description, keywords, details_json, facts_json, tags_json,
           labels, phash, dim, embedding${vec ? ', vec' : ''})
         SELECT $1, $2, u.idx, u.start, u.stop, u.description, to_tsvector('english', u.keywords), u.details, u.facts, u.tags,
           u.labels::jsonb, u.phash, $3, u.embedding${vec ? `, ${vectorAt('$16', 'u.off', '$3')}` : ''}
         FROM unnest($4::int[], $5::float8[], $6::float8[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
           $12::text[], $13::text[], $14::bytea[], $15::int[])
           WITH ORDINALITY AS u(idx, start, stop, description, keywords, details, facts, tags, labels, phash, embedding, off, ord)
         ORDER BY u.ord`,
        [
          videoId,
          collectionId,
          dim,
          segments.map((s) => s.idx),
          segments.map((s) => s.start),
          segments.map((s) => s.end),
          segments.map((s) => s.description),
          segments.map((s) => s.keywords ?? s.description),
          segments.map((s) => json(s.details)),
          segments.map((s) => json(s.facts)),
          segments.map((s) => json(s.tags)),
          segments.map((s) => JSON.stringify(labelsOf(s.tags))),
          segments.map((s) => s.phash ?? null),
          segments.map((s) => (bytea ? toBytes(s.vector) : null)),
          packed.offsets,
          ...(vec ? [packed.data] : []),
        ],
      );
    });
    // On a pool: the dimension's index (once per process), after the rows are in.
    if (built) await this.ensureIndex(this.q, dim, built);
  }

  async deleteForVideo(videoId: string, dim: number): Promise<void> {
    checkDim(dim);
    await this.deleteOn(this.q, videoId);
  }

  /** Deletes the video's segments (the trigger logs them) and prunes the log of old entries. */
  private async deleteOn(q: Queryable, videoId: string): Promise<void> {
    const r = await q.query('DELETE FROM segments WHERE video_id = $1', [videoId]);
    if (r.rowCount) {
      await q.query(`DELETE FROM segment_deletions WHERE at < clock_timestamp() - make_interval(secs => $1::float8 / 1000)`, [DELETION_LOG_KEEP_MS]);
    }
  }

  async byIds(ids: number[]): Promise<Map<number, SegmentRow>> {
    const out = new Map<number, SegmentRow>();
    if (ids.length === 0) return out;
    const { rows } = await this.q.query<SegmentRow>(`SELECT ${SEGMENT_COLS} FROM segments WHERE id = ANY ($1::bigint[])`, [ids]);
    for (const r of rows) out.set(r.id, r);
    return out;
  }

  async listForVideo(videoId: string): Promise<SegmentRow[]> {
    return (await this.q.query<SegmentRow>(`SELECT ${SEGMENT_COLS} FROM segments WHERE video_id = $1 ORDER BY idx, id`, [videoId])).rows;
  }

  async countForCollection(collectionId: string): Promise<number> {
    if (await this.pgvector()) return (await this.countsOf(collectionId)).n;
    const kept = await this.index?.freshIfKept(collectionId);
    if (kept) return kept.live; // a collection's segments all have its dimension
    const { rows } = await this.q.query<{ n: number }>('SELECT count(*)::int AS n FROM segments WHERE collection_id = $1', [collectionId]);
    return rows[0].n;
  }

  async vectors(dim: number, ids: number[]): Promise<Map<number, Float32Array>> {
    checkDim(dim);
    const out = new Map<number, Float32Array>();
    if (ids.length === 0) return out;
    if (await this.pgvector()) return this.sql.vectors(dim, ids);
    const { rows } = await this.q.query<{ id: number; embedding: Buffer }>(
      'SELECT id::float8 AS id, embedding FROM segments WHERE id = ANY ($1::bigint[]) AND dim = $2 AND embedding IS NOT NULL',
      [ids, dim],
    );
    for (const r of rows) out.set(r.id, fromBytes(r.embedding));
    return out;
  }

  /**
   * The exact top k from the in-memory index (caught up first) on a pool; inside a transaction,
   * from an index of the collection as the transaction sees it. `also` segments outside the index
   * (another collection) are scored from their stored vectors.
   */
  async candidates(
    collectionId: string,
    dim: number,
    query: Float32Array,
    k: number,
    filter: TagFilter,
    also: number[],
    exclude: number[] = [],
    videos?: number,
  ): Promise<Map<number, { similarity: number; margin: number }>> {
    checkDim(dim);
    const left = new Set(exclude);
    if (left.size) also = also.filter((id) => !left.has(id));
    const store = await this.pgvector();
    if (store) {
      const out = new Map<number, { similarity: number; margin: number }>();
      const counts = await this.countsOf(collectionId);
      // The index scan and the exact scores of the others (keyword and spoken matches, with their
      // videos, so videosOf needs no query of its own) side by side, on two connections: both are
      // exact, so a segment in both gets the same similarity either way.
      const [nearest, others] = await Promise.all([this.sql.nearest(collectionId, dim, query, k, filter, counts.n, indexKind(store), exclude, videos), this.sql.scored(dim, also, query)]);
      for (const r of [...nearest, ...others]) {
        out.set(r.id, { similarity: r.similarity, margin: 0 });
        this.pin?.videoOf.set(r.id, r.video_id);
      }
      return out;
    }
    const index = this.index ? await this.index.fresh(collectionId, dim) : (await loadIndex(this.q, collectionId, dim)).index;
    const out = index.candidates(query, k, filter, also, { exactTop: true, stats: this.index?.stats, exclude });
    const rest = also.filter((id) => !out.has(id));
    if (rest.length) for (const [id, similarity] of await this.similarities(dim, rest, query)) out.set(id, { similarity, margin: 0 });
    return out;
  }

  /** Exact; from this process's indexes where they hold the segment (searched collections), else from the table. */
  async similarities(dim: number, ids: number[], query: Float32Array): Promise<Map<number, number>> {
    if (await this.pgvector()) return this.sql.similarities(dim, ids, query);
    const out = (await this.index?.exact(dim, ids, query)) ?? new Map<number, number>();
    const rest = ids.filter((id) => !out.has(id));
    if (rest.length === 0) return out;
    const qNorm = normOf(query);
    for (const [id, v] of await this.vectors(dim, rest)) out.set(id, cosineTo(v, 0, dim, query, qNorm));
    return out;
  }

  async videosOf(collectionId: string, ids: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    if (ids.length === 0) return out;
    // From this process's copy of the collection, caught up (in pgvector mode: what this search's
    // candidates brought along); only the others from the table.
    const kept = (await this.pgvector()) ? undefined : await this.index?.freshIfKept(collectionId);
    const pinned = this.pin?.videoOf;
    const rest: number[] = [];
    for (const id of ids) {
      const video = kept?.videoOf(id) ?? pinned?.get(id);
      if (video === undefined) rest.push(id);
      else out.set(id, video);
    }
    if (rest.length === 0) return out;
    const { rows } = await this.q.query<{ id: number; video_id: string }>('SELECT id::float8 AS id, video_id FROM segments WHERE id = ANY ($1::bigint[])', [rest]);
    for (const r of rows) out.set(r.id, r.video_id);
    return out;
  }

  /**
   * A word that is one lexeme is looked up in segment_term_counts (kept on write, migration 1300):
   * one index lookup per word, whatever the library's size, and exact — the number of segments
   * whose keywords hold the lexeme is what `keywords @@ phraseto_tsquery(word)` would count. Words
   * of several lexemes (a phrase, "can't") are counted as before: their matches, up to the limit,
   * with the answers kept while the library's largest segment id and last deletion stay the same.
   * The library's total is the sum of segment_counts, kept the same way (one cheap query per call; on a pool only).
   */
  async selectiveTerms(terms: string[], maxShare = 0.1, floor = 500): Promise<string[]> {
    if (terms.length === 0) return terms; // a search without words (a moment, a picture) asks nothing
    let total: number;
    let token = '';
    if (this.index) {
      const { rows } = await this.q.query<{ token: string }>(
        `SELECT coalesce((SELECT max(id) FROM segments), 0)::text || '/' || coalesce((SELECT max(seq) FROM segment_deletions), 0)::text AS token`,
      );
      token = `library|${rows[0].token}`;
    }
    const cachedTotal = this.answers.get(`${token}|total`) as number | undefined;
    if (token && cachedTotal !== undefined) total = cachedTotal;
    else {
      // Every collection's count deltas (migration 20, kept on write: a row per write statement,
      // folded by searches in pgvector mode): an index-only sum, where count(*) read the whole
      // primary key (130–155 ms at 1M segments).
      const { rows } = await this.q.query<{ n: number }>('SELECT coalesce(sum(n), 0)::float8 AS n FROM segment_counts');
      total = rows[0].n;
      if (token) this.remember(`${token}|total`, total);
    }
    const limit = Math.max(floor, total * maxShare);
    if (total <= limit || terms.length === 0) return terms;
    const df = new Map<string, number>();
    // Each word's lexemes, and for a one-lexeme word its count (the sum of its deltas).
    const { rows: kept } = await this.q.query<{ ord: string; lexemes: number; term: string | null; n: number; deltas: number }>(
      `SELECT t.ord::text AS ord, l.lexemes, l.term, coalesce(c.n, 0)::float8 AS n, coalesce(c.deltas, 0)::int AS deltas
       FROM unnest($1::text[]) WITH ORDINALITY AS t(word, ord)
       CROSS JOIN LATERAL (
         SELECT numnode(phraseto_tsquery('english', t.word)) AS lexemes,
                CASE WHEN numnode(phraseto_tsquery('english', t.word)) = 1
                      AND cardinality(tsvector_to_array(to_tsvector('english', t.word))) = 1
                     THEN (tsvector_to_array(to_tsvector('english', t.word)))[1] END AS term) l
       LEFT JOIN LATERAL (SELECT sum(k.n) AS n, count(*) AS deltas FROM segment_term_counts k WHERE k.term = l.term) c ON l.term IS NOT NULL`,
      [terms],
    );
    const counted: string[] = [];
    for (const r of kept) {
      const word = terms[Number(r.ord) - 1];
      if (r.lexemes === 0) df.set(word, 0); // only stopwords: matches nothing
      else if (r.term !== null) {
        df.set(word, r.n);
        if (r.deltas > FOLD_TERM_AFTER && !isClient(this.q)) foldDeltas(this.q, 'segment_term_counts', r.term);
      } else counted.push(word);
    }
    if (counted.length) {
      const cap = Math.ceil(limit) + 1;
      const key = (t: string) => `${token}|df|${cap}|${t}`;
      const missing = token ? counted.filter((t) => !this.answers.has(key(t))) : counted;
      for (const t of counted) if (!missing.includes(t)) df.set(t, this.answers.get(key(t)) as number);
      if (missing.length) {
        // On a pool, one statement per phrase side by side (counting a common phrase's matches reads
        // their heap pages); in a transaction, one statement for all.
        const count = async (words: string[]) =>
          (
            await this.q.query<{ ord: string; n: number }>(
              `SELECT t.ord::text AS ord, (SELECT count(*)::int FROM (
                 SELECT 1 FROM segment_keywords s WHERE s.keywords @@ phraseto_tsquery('english', t.term) LIMIT $2) x) AS n
               FROM unnest($1::text[]) WITH ORDINALITY AS t(term, ord)`,
              [words, cap],
            )
          ).rows.map((r) => [words[Number(r.ord) - 1], r.n] as const);
        const parts = isClient(this.q) || missing.length < 2 ? [await count(missing)] : await Promise.all(missing.map((t) => count([t])));
        for (const part of parts)
          for (const [t, n] of part) {
            df.set(t, n);
            if (token) this.remember(key(t), n);
          }
      }
    }
    return terms.filter((t) => (df.get(t) ?? 0) <= limit);
  }

  /** Answers that hold until the data under them changes (the key says which version). */
  private readonly answers = new Map<string, unknown>();

  private remember(key: string, value: unknown): void {
    if (this.answers.size >= ANSWER_CACHE_SIZE) this.answers.clear();
    this.answers.set(key, value);
  }

  /**
   * Kept per term while this process's copy of the collection has seen no change (its version, after
   * catching up): when the collection was searched here before, a repeated word costs no query.
   */
  async termMatches(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    for (const t of terms) out.set(t, []);
    if (terms.length === 0 || limit <= 0) return out;
    // The collection's version: its in-memory index's, or in pgvector mode its write counter's (on a pool).
    const kept =
      (await this.pgvector()) && !isClient(this.q) ? { version: `db${(await this.countsOf(collectionId)).version}` } : await this.index?.freshIfKept(collectionId);
    const fk = filterKey(filter);
    const key = (t: string) => `${collectionId}|v${kept!.version}|${fk}|${limit}|${t}`;
    const missing = kept ? terms.filter((t) => !this.answers.has(key(t))) : terms;
    if (kept) for (const t of terms) if (!missing.includes(t)) out.set(t, this.answers.get(key(t)) as number[]);
    if (missing.length === 0) return out;
    const found = await this.matchTerms(collectionId, missing, limit, filter);
    for (const [t, ids] of found) {
      out.set(t, ids);
      if (kept) this.remember(key(t), ids);
    }
    return out;
  }

  /**
   * Per word, its whole list when at most `limit` of the collection's segments hold it, else null:
   * one statement per word (side by side on a pool) that reads at most `limit` + 1 of its rows in
   * segment_keywords — a common word's first sight at 1M segments read all ~72,700 of its rows to
   * rank them (~100 ms a word); this stops at 2,001 (~9 ms). Kept like termMatches' answers.
   */
  async termLists(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Promise<Map<string, TermList | null>> {
    const out = new Map<string, TermList | null>();
    if (terms.length === 0) return out;
    const kept =
      (await this.pgvector()) && !isClient(this.q) ? { version: `db${(await this.countsOf(collectionId)).version}` } : await this.index?.freshIfKept(collectionId);
    const key = (t: string) => `${collectionId}|v${kept!.version}|${filterKey(filter)}|list${limit}|${t}`;
    const missing = kept ? terms.filter((t) => !this.answers.has(key(t))) : terms;
    const labels = JSON.stringify(Object.fromEntries(filterEntries(filter)));
    const one = async (t: string): Promise<TermList | null> => {
      const { rows } = await this.q.query<{ total: number; ids: number[] }>(
        `WITH q AS MATERIALIZED (SELECT phraseto_tsquery('english', $2) AS q),
         m AS MATERIALIZED (
           SELECT s.id, s.keywords, s.labels FROM q, segment_keywords s
           WHERE numnode(q.q) > 0 AND s.keywords @@ q.q AND s.collection_id = $1 LIMIT $3)
         SELECT (SELECT count(*) FROM m)::int AS total,
                coalesce((SELECT array_agg(x.id::float8 ORDER BY x.rank DESC, x.id)
                          FROM (SELECT m.id, ts_rank(m.keywords, q.q, 1) AS rank FROM m, q WHERE m.labels @> $4::jsonb) x), '{}') AS ids`,
        [collectionId, t, limit + 1, labels],
      );
      const r = rows[0];
      return r.total > limit ? null : { total: r.total, ids: r.ids.map(Number) };
    };
    // A transaction's client runs one statement at a time; a pool, each word on its own connection.
    const found: Array<TermList | null> = [];
    if (isClient(this.q)) for (const t of missing) found.push(await one(t));
    else found.push(...(await Promise.all(missing.map(one))));
    for (const t of terms) {
      const i = missing.indexOf(t);
      if (i >= 0 && kept) this.remember(key(t), found[i]);
      out.set(t, i >= 0 ? found[i] : (this.answers.get(key(t)) as TermList | null));
    }
    return out;
  }

  /** Per word, those of `ids` (in the collection, matching `filter`) whose keywords hold it: primary-key lookups in segment_keywords. */
  async termsAmong(collectionId: string, terms: string[], ids: number[], filter: TagFilter = {}): Promise<Map<string, number[]>> {
    const words = [...new Set(terms)];
    const out = new Map<string, number[]>(words.map((t) => [t, []]));
    if (words.length === 0 || ids.length === 0) return out;
    const { rows } = await this.q.query<{ ord: string; id: number }>(
      `SELECT t.ord::text AS ord, s.id::float8 AS id
       FROM unnest($2::text[]) WITH ORDINALITY AS t(term, ord)
       CROSS JOIN LATERAL phraseto_tsquery('english', t.term) AS q
       CROSS JOIN unnest($3::bigint[]) AS c(id)
       JOIN segment_keywords s ON s.id = c.id
       WHERE numnode(q) > 0 AND s.collection_id = $1 AND s.keywords @@ q AND s.labels @> $4::jsonb
       ORDER BY t.ord, s.id`,
      [collectionId, words, [...new Set(ids)], JSON.stringify(Object.fromEntries(filterEntries(filter)))],
    );
    for (const r of rows) out.get(words[Number(r.ord) - 1])!.push(r.id);
    return out;
  }

  /**
   * On a pool, one statement per word, side by side on their own connections: a word's first
   * ranking reads all its matches' rows in segment_keywords (PG migration 1400: the narrow copy of
   * keywords and labels; ~100 ms for 72,700 matches at 1M, where the wide segment rows took
   * 350–700 ms), and two cores rank two words in the time of one. In a transaction, one statement for all.
   */
  private async matchTerms(collectionId: string, terms: string[], limit: number, filter: TagFilter): Promise<Map<string, number[]>> {
    if (isClient(this.q) || terms.length < 2) return this.matchTermsAt(collectionId, terms, limit, filter);
    const parts = await Promise.all(terms.map((t) => this.matchTermsAt(collectionId, [t], limit, filter)));
    return new Map(parts.flatMap((m) => [...m]));
  }

  private async matchTermsAt(collectionId: string, terms: string[], limit: number, filter: TagFilter): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    const { rows } = await this.q.query<{ ord: string; id: number }>(
      `SELECT t.ord::text AS ord, m.id
       FROM unnest($2::text[]) WITH ORDINALITY AS t(term, ord)
       CROSS JOIN LATERAL (
         SELECT s.id::float8 AS id, ts_rank(s.keywords, q, 1) AS rank
         FROM phraseto_tsquery('english', t.term) AS q, segment_keywords s
         WHERE numnode(q) > 0 AND s.keywords @@ q AND s.collection_id = $1
           AND s.labels @> $4::jsonb
         ORDER BY rank DESC, s.id
         LIMIT $3) m
       ORDER BY t.ord, m.rank DESC, m.id`,
      [collectionId, terms, limit, JSON.stringify(Object.fromEntries(filterEntries(filter)))],
    );
    const byOrd = new Map<number, number[]>();
    for (const r of rows) {
      const o = Number(r.ord);
      let list = byOrd.get(o);
      if (!list) byOrd.set(o, (list = []));
      list.push(r.id);
    }
    terms.forEach((t, i) => out.set(t, byOrd.get(i + 1) ?? []));
    return out;
  }
}

/** Visual signatures of videos; deleted with their video (foreign key, cascade). */
export class PgSignaturesCatalog implements SignaturesCatalog {
  constructor(private readonly q: Queryable) {}

  async put(videoId: string, version: number, frames: number, data: Buffer): Promise<void> {
    await this.q.query(
      `INSERT INTO video_signatures (video_id, version, frames, data, updated_at) VALUES ($1, $2, $3, $4, clock_timestamp())
       ON CONFLICT (video_id) DO UPDATE SET version = excluded.version, frames = excluded.frames, data = excluded.data, updated_at = excluded.updated_at`,
      [videoId, version, frames, data],
    );
  }

  async delete(videoId: string): Promise<void> {
    await this.q.query('DELETE FROM video_signatures WHERE video_id = $1', [videoId]);
  }

  async forCollection(collectionId: string): Promise<SignatureRow[]> {
    const { rows } = await this.q.query<SignatureRow>(
      `SELECT s.video_id, s.version, s.frames, s.data FROM video_signatures s JOIN videos v ON v.id = s.video_id
       WHERE v.collection_id = $1 ORDER BY v.created_at, v.seq`,
      [collectionId],
    );
    return rows;
  }

  /** By video id in byte order (as SQLite's BINARY collation), then idx. */
  async segmentKeys(collectionId: string): Promise<SegmentKeyRow[]> {
    const { rows } = await this.q.query<SegmentKeyRow>(
      `SELECT video_id, idx, start, "end", phash FROM segments WHERE collection_id = $1 ORDER BY video_id COLLATE "C", idx`,
      [collectionId],
    );
    return rows;
  }
}
