import { subjectOwnerSql } from '../queue/types.js';

/**
 * PostgreSQL schema of vidembed, versioned like the SQLite one (src/store/migrations.ts):
 * append-only, never edit a released step. Version 1: the job queue and the worker registry;
 * version 2: the catalog (collections, videos, tasks, API keys: src/store/catalog/postgres.ts);
 * version 3: segments with their vectors and keyword index, and video signatures
 * (src/store/catalog/pg-segments.ts); version 4: generic tag labels per segment.
 */
export const PG_MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'job queue (leases with fencing tokens) and worker registry by heartbeat',
    sql: `
      CREATE TABLE jobs (
        id text PRIMARY KEY,
        -- FIFO order that does not depend on two clients' clocks or on equal timestamps
        seq bigint GENERATED ALWAYS AS IDENTITY,
        kind text NOT NULL,
        ref_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
        lease_owner text,
        lease_token bigint NOT NULL DEFAULT 0,
        lease_expires_at timestamptz,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      -- what a claim scans: the runnable jobs in order; settled ones drop out of the index
      CREATE INDEX jobs_runnable ON jobs (seq) WHERE status IN ('queued', 'running');
      CREATE INDEX jobs_ref ON jobs (ref_id);
      CREATE TABLE workers (
        id text PRIMARY KEY,
        info jsonb NOT NULL,
        heartbeat_at timestamptz NOT NULL
      );
      CREATE INDEX workers_heartbeat ON workers (heartbeat_at);
    `,
  },
  {
    // The catalog (src/store/catalog/postgres.ts): the SQLite tables as of its migration 12, less
    // what belongs to later slices (segments, vectors, signatures). Times are timestamptz from the
    // database's clock (read back as ISO strings); `seq` orders rows created in the same instant;
    // JSON columns are text so they read back as the exact strings written; integers that may pass
    // 2^31 (bytes, quota units) are bigint. `revision` is kept for the vector indexes to come.
    version: 2,
    name: 'catalog: collections, videos, tasks, api keys',
    sql: `
      CREATE TABLE collections (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        owner text NOT NULL DEFAULT 'default',
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        model text NOT NULL,
        dim integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        revision bigint NOT NULL DEFAULT 0,
        recipe_json text,
        CONSTRAINT collections_owner_name UNIQUE (owner, name)
      );
      CREATE INDEX collections_seq ON collections (seq);
      CREATE TABLE videos (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        collection_id text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
        filename text NOT NULL,
        path text NOT NULL DEFAULT '',
        blob_key text,
        size_bytes bigint NOT NULL,
        status text NOT NULL CHECK (status IN ('uploaded', 'processing', 'processed', 'failed')),
        progress double precision,
        error_message text,
        duration double precision,
        width integer,
        height integer,
        fps double precision,
        codec text,
        tags_json text,
        content_sha256 text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        -- stored by blob key or by path: exactly one
        CHECK ((coalesce(blob_key, '') = '') <> (path = ''))
      );
      CREATE INDEX videos_collection ON videos (collection_id, created_at, seq);
      CREATE INDEX videos_content ON videos (collection_id, content_sha256);
      CREATE INDEX videos_waiting ON videos (status) WHERE status IN ('uploaded', 'processing');
      CREATE TABLE tasks (
        id text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('embedding', 'tagging')),
        owner text NOT NULL DEFAULT 'default',
        status text NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
        request_json text NOT NULL,
        result_json text,
        error_message text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX tasks_waiting ON tasks (status) WHERE status IN ('pending', 'processing');
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        name text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        prefix text NOT NULL,
        qps double precision NOT NULL,
        quota bigint,
        used bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        revoked_at timestamptz,
        owner text NOT NULL,
        role text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin'))
      );
      CREATE INDEX api_keys_name ON api_keys (name);
    `,
  },
  {
    // Segments (src/store/catalog/pg-segments.ts): the rows, their float32 vectors (bytea, little
    // endian; no pgvector here: each process scans an in-memory copy fed from this table), and the
    // keyword index (a tsvector of the 'english' configuration with a GIN index). `txid` is the
    // writing transaction's id: a reader asks for the rows and deletions of transactions at or
    // after the oldest one still running at its previous read (pg_snapshot_xmin), so a row whose
    // transaction commits after a later-numbered one is not missed. Deleted segments (also by
    // cascade from their video or collection) are logged by a trigger; the log is pruned by age.
    version: 3,
    name: 'segments with vectors and keyword index, deletion log, video signatures',
    sql: `
      CREATE TABLE segments (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        video_id text NOT NULL REFERENCES videos (id) ON DELETE CASCADE,
        collection_id text NOT NULL,
        idx integer NOT NULL,
        start double precision NOT NULL,
        "end" double precision NOT NULL,
        description text NOT NULL,
        keywords tsvector NOT NULL,
        details_json text,
        facts_json text,
        tags_json text,
        shot_size text,
        camera_movement text,
        shooting_angle text,
        phash text,
        dim integer NOT NULL CHECK (dim > 0),
        embedding bytea NOT NULL CHECK (length(embedding) = 4 * dim),
        txid xid8 NOT NULL DEFAULT pg_current_xact_id()
      );
      CREATE INDEX segments_video ON segments (video_id, idx);
      CREATE INDEX segments_collection ON segments (collection_id, video_id, idx);
      CREATE INDEX segments_collection_txid ON segments (collection_id, txid);
      CREATE INDEX segments_keywords ON segments USING gin (keywords);
      CREATE TABLE segment_deletions (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        segment_id bigint NOT NULL,
        collection_id text NOT NULL,
        txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX segment_deletions_collection_txid ON segment_deletions (collection_id, txid);
      CREATE INDEX segment_deletions_at ON segment_deletions (at);
      CREATE FUNCTION log_segment_deletions() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO segment_deletions (segment_id, collection_id) SELECT id, collection_id FROM gone;
        RETURN NULL;
      END $$;
      CREATE TRIGGER segments_deleted AFTER DELETE ON segments
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION log_segment_deletions();
      CREATE TABLE video_signatures (
        video_id text PRIMARY KEY REFERENCES videos (id) ON DELETE CASCADE,
        version integer NOT NULL,
        frames integer NOT NULL,
        data bytea NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
    `,
  },
  {
    // Tags stored generically (issue 19, as SQLite migration 14): a segment's filterable tag labels
    // are one jsonb object, tag kind → label, so a new kind needs no column. Filters are applied to
    // the in-memory index's rows and, with a keyword match, to the matched rows (labels @> filter),
    // so no index on it. The three fixed columns move into it and go.
    version: 4,
    name: 'generic tag labels per segment instead of shot_size, camera_movement, shooting_angle columns',
    sql: `
      ALTER TABLE segments ADD COLUMN labels jsonb NOT NULL DEFAULT '{}';
      UPDATE segments SET labels = jsonb_strip_nulls(jsonb_build_object(
          'camera_movement', NULLIF(camera_movement, ''), 'shooting_angle', NULLIF(shooting_angle, ''), 'shot_size', NULLIF(shot_size, '')))
        WHERE COALESCE(camera_movement, shooting_angle, shot_size) IS NOT NULL;
      ALTER TABLE segments DROP COLUMN shot_size, DROP COLUMN camera_movement, DROP COLUMN shooting_angle;
    `,
  },
  {
    // Fair queues (issue 21, as SQLite migration 16): a job names its owner and the claim counter
    // value it was last claimed at; keys may carry limits (JSON text, src/api/limits.ts).
    version: 6,
    name: 'jobs carry their owner and last claim; keys carry limits',
    sql: `
      ALTER TABLE jobs ADD COLUMN owner text NOT NULL DEFAULT 'default';
      ALTER TABLE jobs ADD COLUMN claim_seq bigint;
      CREATE SEQUENCE jobs_claim_seq;
      UPDATE jobs SET owner = ${subjectOwnerSql('jobs.ref_id')} WHERE status IN ('queued', 'running');
      CREATE INDEX jobs_owner_claim ON jobs (owner, claim_seq);
      CREATE INDEX jobs_owner_running ON jobs (owner) WHERE status = 'running';
      ALTER TABLE api_keys ADD COLUMN limits_json text;
    `,
  },
  {
    // Footage indexed in place (issue 22, as SQLite migration 17): the user's file at path, its
    // content fingerprint and modification time; the folders each collection indexes in place.
    version: 7,
    name: 'videos indexed in place: fingerprint, file mtime; folders indexed in place',
    sql: `
      ALTER TABLE videos ADD COLUMN fingerprint text, ADD COLUMN file_mtime timestamptz;
      CREATE INDEX videos_fingerprint ON videos (collection_id, fingerprint) WHERE fingerprint IS NOT NULL;
      CREATE TABLE library_folders (
        collection_id text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
        path text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        PRIMARY KEY (collection_id, path)
      );
    `,
  },
  {
    // As SQLite migration 18: 'original', 'proxy' (blob playback/<id>.mp4) or 'none'; NULL until processed.
    version: 8,
    name: 'how a browser plays each video (original file or playback proxy)',
    sql: `ALTER TABLE videos ADD COLUMN playback text;`,
  },
  {
    // As SQLite migration 20: each capability's state per video (issue 31).
    version: 10,
    name: 'the state of each capability per video',
    sql: `
      CREATE TABLE video_capabilities (
        video_id text NOT NULL REFERENCES videos(id) ON DELETE CASCADE,
        capability text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'running', 'done', 'skipped', 'failed')),
        version text,
        message text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (video_id, capability)
      );
    `,
  },
  {
    // Vector search inside PostgreSQL (issue 32, src/store/pg/vector-store.ts). The library's vector
    // store: 'memory' (each process keeps an in-memory index fed from the bytea vectors, as before),
    // 'migrating' (`vidembed db migrate` is filling the pgvector column: writers fill both) or
    // 'pgvector' (vectors in the `vec` column with HNSW indexes, searched in SQL; `embedding` is
    // NULL). The `vec` column itself needs the extension, so it is added when the store moves, not
    // here; `embedding` may be NULL from now on (its length check still holds when it is not).
    version: 20,
    name: 'vector store state (in-memory index or pgvector); bytea embedding nullable',
    sql: `
      CREATE TABLE vidembed_vector_store (
        id integer PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        phase text NOT NULL DEFAULT 'memory' CHECK (phase IN ('memory', 'migrating', 'pgvector')),
        settings jsonb NOT NULL DEFAULT '{}',
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      INSERT INTO vidembed_vector_store (id) VALUES (1);
      ALTER TABLE segments ALTER COLUMN embedding DROP NOT NULL;
      -- Each collection's segment count, as deltas appended by statement triggers (appends never
      -- wait for one another: writers of one collection stay as concurrent as before); a search
      -- in the database sums them in one lookup (the count weighs keyword matches; the last seq
      -- and the number of deltas key the answers a process may keep). Readers fold a
      -- collection's deltas into one row now and then (src/store/catalog/pg-vectors.ts).
      CREATE TABLE segment_counts (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        collection_id text NOT NULL,
        n bigint NOT NULL
      );
      CREATE INDEX segment_counts_collection ON segment_counts (collection_id) INCLUDE (n);
      INSERT INTO segment_counts (collection_id, n) SELECT collection_id, count(*) FROM segments GROUP BY collection_id;
      CREATE FUNCTION count_segments_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO segment_counts (collection_id, n) SELECT collection_id, count(*) FROM added GROUP BY collection_id;
        RETURN NULL;
      END $$;
      CREATE FUNCTION count_segments_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO segment_counts (collection_id, n) SELECT collection_id, -count(*) FROM gone GROUP BY collection_id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER segments_counted_in AFTER INSERT ON segments
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_segments_added();
      CREATE TRIGGER segments_counted_out AFTER DELETE ON segments
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION count_segments_removed();
    `,
  },
  {
    // Webhooks (issue 34, as SQLite migration 30; src/store/webhooks/postgres.ts): endpoints, the
    // delivery outbox drained under leases with fencing tokens, and each attempt's answer.
    version: 30,
    name: 'webhook endpoints, the delivery outbox and its attempt log',
    sql: `
      CREATE TABLE webhook_endpoints (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        owner text NOT NULL,
        url text NOT NULL,
        secret text NOT NULL,
        events_json text NOT NULL,
        collection_id text,
        description text NOT NULL DEFAULT '',
        allow_private boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner);
      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        event_id text NOT NULL,
        endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        owner text NOT NULL,
        event_type text NOT NULL,
        payload text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        lease_owner text,
        lease_token bigint NOT NULL DEFAULT 0,
        lease_expires_at timestamptz,
        last_status_code integer,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, seq) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at);
      CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (updated_at) WHERE status IN ('delivered', 'failed');
      CREATE INDEX webhook_deliveries_lease ON webhook_deliveries (lease_owner) WHERE lease_owner IS NOT NULL;
      CREATE TABLE webhook_attempts (
        delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        at timestamptz NOT NULL DEFAULT clock_timestamp(),
        status_code integer,
        error text,
        duration_ms integer NOT NULL,
        PRIMARY KEY (delivery_id, attempt)
      );
    `,
  },
  {
    // As SQLite migration 50: a video looked up by its file name (VideosCatalog.byFilename).
    version: 50,
    name: 'videos looked up by file name',
    sql: `CREATE INDEX videos_filename ON videos (collection_id, filename);`,
  },
  {
    // As SQLite migration 80: files deleted from a collection in place, left out by \`rescan\`.
    version: 80,
    name: 'files deleted from a collection in place, by fingerprint (rescan leaves them out)',
    sql: `
      CREATE TABLE excluded_files (
        collection_id text NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
        fingerprint text NOT NULL,
        path text NOT NULL,
        excluded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (collection_id, fingerprint)
      );
    `,
  },
  {
    // A segment row with its float32 vector inline (storage MAIN, ~2 KB) is always past TOAST's
    // 2 KB threshold, so PostgreSQL moved every other compressible column out of line — keywords
    // and labels too. Ranking a word's matches (ts_rank) and a tag filter then read each row's
    // keywords/labels from the TOAST table: measured at 100k, ~65,000 buffer reads for one word's
    // 7,300 matches (~9 per row), 60–100 ms. MAIN keeps them in the row (a MAIN column goes out of
    // line only when the row passes ~8 KB): ~6,800 reads, 20–30 ms, the same scores. Applies to
    // rows written from now on; older rows keep their layout until rewritten (docs/scale.md).
    version: 1200,
    name: 'segments keep keywords and labels in the row (no TOAST reads to rank or filter)',
    sql: `ALTER TABLE segments ALTER COLUMN keywords SET STORAGE MAIN, ALTER COLUMN labels SET STORAGE MAIN;`,
  },
  {
    // How many segments of the whole library hold each keyword lexeme, kept as the segments are
    // written (issue 32). A search asks which of its words are too common to count
    // (selectiveTerms); counting a word's matches at search time read its ~70,000 heap pages at
    // 1M segments (0.3–1.6 s the first time a word was seen, and again after every write). Deltas
    // appended by statement triggers, as segment_counts (migration 20): appends never wait for one
    // another, so concurrent writers stay concurrent; readers sum a word's deltas in one index
    // lookup and fold them into one row now and then (src/store/catalog/pg-segments.ts). A lexeme
    // is what `keywords @@ phraseto_tsquery('english', word)` matches when the word is one lexeme:
    // the count is exactly the one the search would make.
    version: 1300,
    name: 'per-lexeme segment counts kept on write (searches no longer count matches per word)',
    sql: `
      CREATE TABLE segment_term_counts (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        term text NOT NULL,
        n bigint NOT NULL
      );
      CREATE INDEX segment_term_counts_term ON segment_term_counts (term) INCLUDE (n);
      INSERT INTO segment_term_counts (term, n)
        SELECT u.lexeme, count(*) FROM segments s, unnest(s.keywords) AS u GROUP BY u.lexeme;
      CREATE FUNCTION count_terms_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO segment_term_counts (term, n) SELECT u.lexeme, count(*) FROM added, unnest(added.keywords) AS u GROUP BY u.lexeme;
        RETURN NULL;
      END $$;
      CREATE FUNCTION count_terms_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO segment_term_counts (term, n) SELECT u.lexeme, -count(*) FROM gone, unnest(gone.keywords) AS u GROUP BY u.lexeme;
        RETURN NULL;
      END $$;
      CREATE TRIGGER segments_terms_in AFTER INSERT ON segments
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_terms_added();
      CREATE TRIGGER segments_terms_out AFTER DELETE ON segments
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION count_terms_removed();
      -- An update that changes a row's keywords moves its lexemes' counts. A row trigger limited to
      -- statements that set keywords, and to rows whose keywords differ: the vectors \`db migrate\`
      -- writes, and every other update, pay nothing.
      CREATE FUNCTION count_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO segment_term_counts (term, n)
          SELECT lexeme, sum(d)::bigint FROM (
            SELECT u.lexeme, -1 AS d FROM unnest(OLD.keywords) AS u
            UNION ALL
            SELECT u.lexeme, 1 AS d FROM unnest(NEW.keywords) AS u
          ) x GROUP BY lexeme HAVING sum(d) <> 0;
        RETURN NULL;
      END $$;
      CREATE TRIGGER segments_terms_changed AFTER UPDATE OF keywords ON segments
        FOR EACH ROW WHEN (OLD.keywords IS DISTINCT FROM NEW.keywords) EXECUTE FUNCTION count_terms_changed();
      -- Emptying segments (TRUNCATE: no row triggers fire) empties the counts kept from them, the
      -- per-collection ones of migration 20 too.
      CREATE FUNCTION count_segments_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM segment_term_counts;
        DELETE FROM segment_counts;
        RETURN NULL;
      END $$;
      CREATE TRIGGER segments_truncated AFTER TRUNCATE ON segments FOR EACH STATEMENT EXECUTE FUNCTION count_segments_truncated();
    `,
  },
  {
    // The keyword side reads a narrow copy of each segment's keywords and labels (issue 32). Ranking
    // a word's matches (ts_rank) reads every matching row; in `segments` a row is ~2.6 KB (the
    // vector is in it), three to a page, so a word in 7 % of 1M segments (72,700 matches) touched
    // ~67,600 buffers over ~28,700 heap pages, half of them lossy in the bitmap (other rows
    // re-checked), and — once an HNSW build or the vector scans had pushed them out of shared
    // buffers — read them from the OS: 350–700 ms per word the first time it was seen, seconds in
    // the bench. Here a row is ~115 bytes (114 MB at 1M): the same word touches ~14,600 buffers
    // over 7,070 pages, none lossy, ~100 ms (docs/scale.md).
    // Kept by statement triggers in the writing transaction (a search sees exactly what it would
    // in `segments`); the GIN index moves here (nothing else searches `segments.keywords`).
    version: 1400,
    name: 'keywords and labels in a narrow table for the keyword side (ranking a common word reads a fifth of the buffers)',
    sql: `
      CREATE TABLE segment_keywords (
        id bigint PRIMARY KEY,
        collection_id text NOT NULL,
        keywords tsvector NOT NULL,
        labels jsonb NOT NULL
      );
      ALTER TABLE segment_keywords ALTER COLUMN keywords SET STORAGE MAIN, ALTER COLUMN labels SET STORAGE MAIN;
      INSERT INTO segment_keywords (id, collection_id, keywords, labels) SELECT id, collection_id, keywords, labels FROM segments;
      CREATE INDEX segment_keywords_terms ON segment_keywords USING gin (keywords);
      DROP INDEX segments_keywords;
      CREATE FUNCTION keywords_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO segment_keywords (id, collection_id, keywords, labels) SELECT id, collection_id, keywords, labels FROM added;
        RETURN NULL;
      END $$;
      CREATE FUNCTION keywords_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM segment_keywords k USING gone WHERE k.id = gone.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER segments_keywords_in AFTER INSERT ON segments
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION keywords_added();
      CREATE TRIGGER segments_keywords_out AFTER DELETE ON segments
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION keywords_removed();
      -- An update of what the copy holds (no app path makes one; \`db migrate\`'s vector writes and
      -- every other update pay nothing).
      CREATE FUNCTION keywords_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE segment_keywords SET id = NEW.id, collection_id = NEW.collection_id, keywords = NEW.keywords, labels = NEW.labels
          WHERE id = OLD.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER segments_keywords_changed AFTER UPDATE OF id, collection_id, keywords, labels ON segments
        FOR EACH ROW WHEN ((OLD.id, OLD.collection_id, OLD.keywords, OLD.labels) IS DISTINCT FROM (NEW.id, NEW.collection_id, NEW.keywords, NEW.labels))
        EXECUTE FUNCTION keywords_changed();
      CREATE OR REPLACE FUNCTION count_segments_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM segment_term_counts;
        DELETE FROM segment_counts;
        DELETE FROM segment_keywords;
        RETURN NULL;
      END $$;
    `,
  },
  {
    // Every collection row carries its video count, and every search reads its collection (a
    // search by a moment twice): counting the rows of a 40,000-video collection took 9-11 ms a
    // lookup under 32 clients, a quarter of the database's time for those searches. Kept as deltas
    // by statement triggers, as segment_counts (migration 20); writers fold them now and then
    // (src/store/catalog/postgres.ts).
    version: 1500,
    name: 'video counts per collection kept on write',
    sql: `
      LOCK TABLE videos IN SHARE ROW EXCLUSIVE MODE;
      CREATE TABLE video_counts (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        collection_id text NOT NULL,
        n bigint NOT NULL
      );
      CREATE INDEX video_counts_collection ON video_counts (collection_id) INCLUDE (n);
      INSERT INTO video_counts (collection_id, n) SELECT collection_id, count(*) FROM videos GROUP BY collection_id;
      CREATE FUNCTION count_videos_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO video_counts (collection_id, n) SELECT collection_id, count(*) FROM added GROUP BY collection_id;
        RETURN NULL;
      END $$;
      CREATE FUNCTION count_videos_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO video_counts (collection_id, n) SELECT collection_id, -count(*) FROM gone GROUP BY collection_id;
        RETURN NULL;
      END $$;
      CREATE FUNCTION count_videos_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO video_counts (collection_id, n) VALUES (OLD.collection_id, -1), (NEW.collection_id, 1);
        RETURN NULL;
      END $$;
      CREATE FUNCTION count_videos_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM video_counts;
        RETURN NULL;
      END $$;
      CREATE TRIGGER videos_counted_in AFTER INSERT ON videos
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_videos_added();
      CREATE TRIGGER videos_counted_out AFTER DELETE ON videos
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION count_videos_removed();
      CREATE TRIGGER videos_counted_moved AFTER UPDATE OF collection_id ON videos
        FOR EACH ROW WHEN (OLD.collection_id IS DISTINCT FROM NEW.collection_id) EXECUTE FUNCTION count_videos_moved();
      CREATE TRIGGER videos_truncated AFTER TRUNCATE ON videos FOR EACH STATEMENT EXECUTE FUNCTION count_videos_truncated();
    `,
  },
];
