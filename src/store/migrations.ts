import type { Database } from 'better-sqlite3';
import { SchemaTooNewError } from '../api/errors.js';
import { subjectOwnerSql } from './queue/types.js';

/**
 * Versioned, append-only migrations. Never edit a released step; add a new one. Vector tables are
 * created per dimension on demand (src/store/vectors.ts), not here, since the dimension belongs to
 * the embedder a collection chose.
 */
const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'collections, videos, segments, jobs, tasks',
    sql: `
      CREATE TABLE collections (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        description TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        seq INTEGER NOT NULL
      );
      CREATE TABLE videos (
        id TEXT PRIMARY KEY,
        collection_id TEXT NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        filename TEXT NOT NULL,
        path TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('uploaded','processing','processed','failed')),
        progress REAL,
        error_message TEXT,
        duration REAL,
        width INTEGER,
        height INTEGER,
        fps REAL,
        tags_json TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX videos_collection ON videos(collection_id);
      CREATE TABLE segments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,
        collection_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        start REAL NOT NULL,
        end REAL NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        details_json TEXT,
        tags_json TEXT,
        shot_size TEXT,
        camera_movement TEXT,
        shooting_angle TEXT,
        UNIQUE (video_id, idx)
      );
      CREATE INDEX segments_collection ON segments(collection_id);
      CREATE VIRTUAL TABLE segments_fts USING fts5(description, tokenize = 'porter unicode61');
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        ref_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued','running','done','failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        max_attempts INTEGER NOT NULL DEFAULT 3,
        lease_owner TEXT,
        lease_expires_at INTEGER,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX jobs_claim ON jobs(status, created_at);
      CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('embedding','tagging')),
        status TEXT NOT NULL CHECK (status IN ('pending','processing','completed','failed')),
        request_json TEXT NOT NULL,
        result_json TEXT,
        error_message TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE workers (
        id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'api keys',
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        qps REAL NOT NULL,
        quota INTEGER,
        used INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
    `,
  },
  {
    version: 3,
    name: 'collection revision (invalidates in-memory vector indexes)',
    sql: `ALTER TABLE collections ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    version: 4,
    name: 'owners: collections, tasks and keys belong to an owner; collection names unique per owner; admin keys',
    // SQLite cannot change a UNIQUE constraint in place: the collections table is rebuilt (the
    // documented 12-step procedure; foreign keys are off while migrations run, see migrate()).
    // Everything created before owners existed belongs to the owner "default".
    sql: `
      CREATE TABLE collections_v4 (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL DEFAULT 'default',
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        seq INTEGER NOT NULL,
        revision INTEGER NOT NULL DEFAULT 0,
        UNIQUE (owner, name)
      );
      INSERT INTO collections_v4 (id, owner, name, description, model, dim, created_at, seq, revision)
        SELECT id, 'default', name, description, model, dim, created_at, seq, revision FROM collections;
      DROP TABLE collections;
      ALTER TABLE collections_v4 RENAME TO collections;
      ALTER TABLE tasks ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';
      ALTER TABLE api_keys ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';
      ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin'));
    `,
  },
  {
    version: 5,
    name: 'analysis facts per segment; the recipe (analyzer versions) of a collection\'s vectors',
    sql: `
      ALTER TABLE segments ADD COLUMN facts_json TEXT;
      ALTER TABLE collections ADD COLUMN recipe_json TEXT;
    `,
  },
  {
    version: 6,
    name: 'content hash of uploaded videos (duplicates in a collection are skipped)',
    sql: `
      ALTER TABLE videos ADD COLUMN content_sha256 TEXT;
      CREATE INDEX videos_content ON videos(collection_id, content_sha256);
    `,
  },
  {
    version: 7,
    name: 'visual signatures for near-duplicates: pHash of each segment keyframe; per video, pHashes of frames every 1/4 s',
    sql: `
      ALTER TABLE segments ADD COLUMN phash TEXT;
      CREATE TABLE video_signatures (
        video_id TEXT PRIMARY KEY REFERENCES videos(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        frames INTEGER NOT NULL,
        data BLOB NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    // 8, not 7: version 7 is taken by the near-duplicate signatures landing beside it.
    version: 8,
    name: 'video codec; width and height are the displayed size (after rotation)',
    sql: `
      ALTER TABLE videos ADD COLUMN codec TEXT;
    `,
  },
  {
    // The in-memory index (src/store/memory-index.ts) re-ranks its int8 candidates with the exact
    // float32 vectors: a point lookup here costs microseconds where sqlite-vec's costs ~0.3 ms. It
    // follows other processes' writes without reloading: appends past the largest segment id it
    // has, deletions from this log (filled by the trigger, so cascades count too). Rows written
    // before this version get their vectors copied from sqlite-vec on a collection's first load.
    version: 9,
    name: 'float32 segment vectors by segment id; a log of deleted segments (incremental in-memory index)',
    sql: `
      CREATE TABLE segment_vectors (
        segment_id INTEGER PRIMARY KEY REFERENCES segments(id) ON DELETE CASCADE,
        embedding BLOB NOT NULL
      );
      CREATE TABLE segment_deletions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        collection_id TEXT NOT NULL,
        segment_id INTEGER NOT NULL
      );
      CREATE TRIGGER segments_log_delete AFTER DELETE ON segments BEGIN
        INSERT INTO segment_deletions (collection_id, segment_id) VALUES (OLD.collection_id, OLD.id);
      END;
    `,
  },
  {
    // 10, not 9: version 9 is taken by the float32 segment vectors landing beside it.
    // The async job queue (src/store/queue/sqlite.ts; the same one on PostgreSQL) fences a job's
    // calls with a token that every claim increments, not with the worker's id: a worker that
    // claims the same job again after its own lease ran out must not complete it with the old one.
    // Workers carry their info (host, pid, kinds) for the heartbeat registry.
    version: 10,
    name: 'fencing token of job leases; worker info for the heartbeat registry',
    sql: `
      ALTER TABLE jobs ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE workers ADD COLUMN info_json TEXT;
    `,
  },
  {
    // Videos kept by key in the blob store (VIDEMBED_STORAGE_URL), not by this machine's path: a
    // worker on another machine that mounts the same storage finds the file. Rows made before keep
    // their absolute path (blob_key NULL) and are read from it.
    version: 11,
    name: 'videos by blob key',
    sql: `ALTER TABLE videos ADD COLUMN blob_key TEXT;`,
  },
  {
    // Jobs by subject, videos and tasks by status: cancelling a video's jobs, and finding the
    // subjects left without one (the stranded sweep), without scanning the tables. PostgreSQL's
    // jobs have had it from its first migration.
    version: 12,
    name: 'jobs by subject; videos and tasks by status',
    sql: `
      CREATE INDEX IF NOT EXISTS jobs_ref ON jobs(ref_id);
      CREATE INDEX IF NOT EXISTS videos_status ON videos(status);
      CREATE INDEX IF NOT EXISTS tasks_status ON tasks(status);
    `,
  },
  {
    // A segment deleted any way (its video or collection deleted, by cascade) leaves nothing in the
    // keyword index. The vector tables (one per dimension, made on demand) get the same trigger
    // when they are made or opened (src/store/segments.ts).
    version: 13,
    name: 'keyword index rows go with their segment',
    sql: `
      DELETE FROM segments_fts WHERE rowid NOT IN (SELECT id FROM segments);
      CREATE TRIGGER IF NOT EXISTS segments_fts_gc AFTER DELETE ON segments BEGIN
        DELETE FROM segments_fts WHERE rowid = OLD.id;
      END;
    `,
  },
  {
    // Tags stored generically (issue 19): a segment's filterable tag labels are one JSON object,
    // tag kind → label (src/store/segments.ts labelsJson), so a new kind (audio, speech) needs no
    // column. The three fixed columns move into it ('' meant "not tagged" and is left out) and go.
    // The vector tables made before this keep their own tag columns (vec0 cannot drop a column);
    // nothing reads them any more and new rows write '' there.
    version: 14,
    name: 'generic tag labels per segment instead of shot_size, camera_movement, shooting_angle columns',
    sql: `
      ALTER TABLE segments ADD COLUMN labels_json TEXT;
      UPDATE segments SET labels_json = '{' || rtrim(
          COALESCE(CASE WHEN camera_movement <> '' THEN '"camera_movement":' || json_quote(camera_movement) || ',' END, '')
          || COALESCE(CASE WHEN shooting_angle <> '' THEN '"shooting_angle":' || json_quote(shooting_angle) || ',' END, '')
          || COALESCE(CASE WHEN shot_size <> '' THEN '"shot_size":' || json_quote(shot_size) || ',' END, ''), ',') || '}'
        WHERE camera_movement <> '' OR shooting_angle <> '' OR shot_size <> '';
      ALTER TABLE segments DROP COLUMN shot_size;
      ALTER TABLE segments DROP COLUMN camera_movement;
      ALTER TABLE segments DROP COLUMN shooting_angle;
    `,
  },
  {
    // Fair queues (issue 21): a job names its owner (claims take owners in turn) and the claim
    // counter value it was last claimed at (who was served least recently); open jobs made before
    // this get their subject's owner. A key may carry limits (JSON, src/api/limits.ts).
    version: 16,
    name: 'jobs carry their owner and last claim; keys carry limits',
    sql: `
      ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';
      ALTER TABLE jobs ADD COLUMN claim_seq INTEGER;
      UPDATE jobs SET owner = ${subjectOwnerSql('jobs.ref_id')} WHERE status IN ('queued', 'running');
      CREATE INDEX jobs_owner_claim ON jobs (owner, claim_seq);
      CREATE INDEX jobs_owner_status ON jobs (owner, status);
      ALTER TABLE api_keys ADD COLUMN limits_json TEXT;
    `,
  },
  {
    // Footage indexed in place (issue 22): the video is the user's file at \`path\` (never deleted
    // by vidembed), known by its content fingerprint (src/services/in-place.ts) and modification
    // time, so \`rescan\` sees it changed, moved or gone. The folders indexed in place, per
    // collection, are what \`rescan\` walks again for new files.
    version: 17,
    name: 'videos indexed in place: fingerprint, file mtime; folders indexed in place',
    sql: `
      ALTER TABLE videos ADD COLUMN fingerprint TEXT;
      ALTER TABLE videos ADD COLUMN file_mtime TEXT;
      CREATE INDEX videos_fingerprint ON videos(collection_id, fingerprint) WHERE fingerprint IS NOT NULL;
      CREATE TABLE library_folders (
        collection_id TEXT NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (collection_id, path)
      );
    `,
  },
  {
    // How a browser plays a video (issue 22): 'original' (its own file plays), 'proxy' (an H.264
    // copy was made at ingest: blob playback/<id>.mp4), 'none' (neither); NULL until processed.
    version: 18,
    name: 'how a browser plays each video (original file or playback proxy)',
    sql: `ALTER TABLE videos ADD COLUMN playback TEXT;`,
  },
  {
    // Capabilities with lanes (issue 31): each capability's state per video — what ran, with which
    // version, how it ended — from which a reindex plans what must run again.
    version: 20,
    name: 'the state of each capability per video',
    sql: `
      CREATE TABLE video_capabilities (
        video_id TEXT NOT NULL REFERENCES videos(id) ON DELETE CASCADE,
        capability TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'skipped', 'failed')),
        version TEXT,
        message TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (video_id, capability)
      );
    `,
  },
  {
    // Webhooks (issue 34; src/store/webhooks): endpoints an owner registered, and the outbox — one
    // delivery per (event, endpoint), written in the transaction that settles a video or a task —
    // drained by workers under leases with fencing tokens; each attempt's answer in the log. No
    // foreign key to collections: an endpoint of a deleted collection just gets nothing more.
    version: 30,
    name: 'webhook endpoints, the delivery outbox and its attempt log',
    sql: `
      CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        url TEXT NOT NULL,
        secret TEXT NOT NULL,
        events_json TEXT NOT NULL,
        collection_id TEXT,
        description TEXT NOT NULL DEFAULT '',
        allow_private INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner);
      CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        event_id TEXT NOT NULL,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        owner TEXT NOT NULL,
        event_type TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER,
        lease_owner TEXT,
        lease_token INTEGER NOT NULL DEFAULT 0,
        lease_expires_at INTEGER,
        last_status_code INTEGER,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at);
      CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (updated_at) WHERE status IN ('delivered', 'failed');
      CREATE INDEX webhook_deliveries_lease ON webhook_deliveries (lease_owner) WHERE lease_owner IS NOT NULL;
      CREATE TABLE webhook_attempts (
        delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        attempt INTEGER NOT NULL,
        at INTEGER NOT NULL,
        status_code INTEGER,
        error TEXT,
        duration_ms INTEGER NOT NULL,
        PRIMARY KEY (delivery_id, attempt)
      );
    `,
  },
  {
    // Videos found by name (issue 33): \`video show C0001.MP4\` looks a name up in the caller's
    // collections (VideosCatalog.byFilename) without reading every row.
    version: 50,
    name: 'videos looked up by file name',
    sql: `CREATE INDEX videos_filename ON videos(collection_id, filename);`,
  },
  {
    // Files the user deleted from a collection indexed in place (issue 30): \`rescan\` leaves a
    // file with this fingerprint out until it is added again (\`upload --in-place\`, \`rescan
    // --include-deleted\`).
    version: 80,
    name: 'files deleted from a collection in place, by fingerprint (rescan leaves them out)',
    sql: `
      CREATE TABLE excluded_files (
        collection_id TEXT NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        fingerprint TEXT NOT NULL,
        path TEXT NOT NULL,
        excluded_at TEXT NOT NULL,
        PRIMARY KEY (collection_id, fingerprint)
      );
    `,
  },
];

/** The migrations up to a version (tests build a database as an earlier release left it). */
export function migrationsUpTo(version: number): { version: number; name: string; sql: string }[] {
  return MIGRATIONS.filter((m) => m.version <= version);
}

export function migrate(db: Database, upTo = Number.POSITIVE_INFINITY): void {
  // Table rebuilds (see version 4) must not cascade deletes or fail half-way on references:
  // foreign keys are off while steps run and checked once they are done.
  const fk = db.pragma('foreign_keys', { simple: true });
  db.pragma('foreign_keys = OFF');
  try {
    runMigrations(db, upTo);
    const broken = db.pragma('foreign_key_check') as unknown[];
    if (broken.length) throw new Error(`migration left ${broken.length} broken references`);
  } finally {
    db.pragma(`foreign_keys = ${fk ? 'ON' : 'OFF'}`);
  }
}

function runMigrations(db: Database, upTo: number): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  refuseNewer('SQLite', applied, MIGRATIONS);
  for (const m of MIGRATIONS) {
    if (applied.has(m.version) || m.version > upTo) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    }).immediate();
  }
}

/**
 * A database some newer vidembed migrated (a step this build does not have, past its last) is not
 * opened: this build would write rows the newer schema does not expect. Checked before any step runs.
 */
export function refuseNewer(database: 'SQLite' | 'PostgreSQL', applied: Iterable<number>, steps: readonly { version: number }[]): void {
  const known = Math.max(0, ...steps.map((m) => m.version));
  const found = Math.max(0, ...applied);
  if (found > known) throw new SchemaTooNewError(database, found, known);
}

export function schemaVersion(db: Database): number {
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}
