import { openDatabase, type Db } from './db.js';
import { CollectionsRepo } from './collections.js';
import { VideosRepo } from './videos.js';
import { SegmentsRepo } from './segments.js';
import { JobQueue } from './jobs.js';
import { TasksRepo } from './tasks.js';
import { KeysRepo } from './keys.js';
import { SignaturesRepo } from './signatures.js';
import { SqliteJobQueue, SqliteWorkerRegistry } from './queue/sqlite.js';
import type { JobQueue as LeasedJobQueue } from './queue/types.js';

/** The database and its repositories, opened once per process. */
export class Store {
  readonly collections: CollectionsRepo;
  readonly videos: VideosRepo;
  readonly segments: SegmentsRepo;
  readonly jobs: JobQueue;
  readonly tasks: TasksRepo;
  readonly keys: KeysRepo;
  readonly signatures: SignaturesRepo;
  /** The job queue as workers use it (leases, fencing tokens); the same rows as `jobs`. */
  readonly queue: LeasedJobQueue;
  /** Workers by heartbeat. */
  readonly registry: SqliteWorkerRegistry;

  constructor(
    readonly db: Db,
    opts: { memoryIndex?: boolean } = {},
  ) {
    this.collections = new CollectionsRepo(db);
    this.videos = new VideosRepo(db);
    this.segments = new SegmentsRepo(db, opts);
    this.jobs = new JobQueue(db);
    this.tasks = new TasksRepo(db);
    this.keys = new KeysRepo(db);
    this.signatures = new SignaturesRepo(db);
    this.queue = new SqliteJobQueue(db);
    this.registry = new SqliteWorkerRegistry(db);
  }

  static open(file: string, opts: { memoryIndex?: boolean } = {}): Store {
    return new Store(openDatabase(file), opts);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export type { Db };
