import { openDatabase, type Db } from './db.js';
import { CollectionsRepo } from './collections.js';
import { VideosRepo } from './videos.js';
import { SegmentsRepo } from './segments.js';
import { TasksRepo } from './tasks.js';
import { KeysRepo } from './keys.js';
import { SignaturesRepo } from './signatures.js';
import { SqliteJobQueue, SqliteWorkerRegistry } from './queue/sqlite.js';
import { SqliteWebhooks } from './webhooks/sqlite.js';

/** The database and its repositories, opened once per process. */
export class Store {
  readonly collections: CollectionsRepo;
  readonly videos: VideosRepo;
  readonly segments: SegmentsRepo;
  readonly tasks: TasksRepo;
  readonly keys: KeysRepo;
  readonly signatures: SignaturesRepo;
  /** The job queue (leases, fencing tokens): the async JobQueue workers use, plus sync calls for transactions. */
  readonly queue: SqliteJobQueue;
  /** Workers by heartbeat. */
  readonly registry: SqliteWorkerRegistry;
  /** Webhook endpoints and the delivery outbox. */
  readonly webhooks: SqliteWebhooks;

  constructor(
    readonly db: Db,
    opts: { memoryIndex?: boolean } = {},
  ) {
    this.collections = new CollectionsRepo(db);
    this.videos = new VideosRepo(db);
    this.segments = new SegmentsRepo(db, opts);
    this.tasks = new TasksRepo(db);
    this.keys = new KeysRepo(db);
    this.signatures = new SignaturesRepo(db);
    this.queue = new SqliteJobQueue(db);
    this.registry = new SqliteWorkerRegistry(db);
    this.webhooks = new SqliteWebhooks(db);
  }

  static open(file: string, opts: { memoryIndex?: boolean } = {}): Store {
    return new Store(openDatabase(file), opts);
  }

  /** Runs `fn` in one transaction: every write in it lands, or none does. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  get isOpen(): boolean {
    return this.db.open;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export type { Db };
