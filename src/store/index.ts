import { openDatabase, type Db } from './db.js';
import { CollectionsRepo } from './collections.js';
import { VideosRepo } from './videos.js';
import { SegmentsRepo } from './segments.js';
import { JobQueue } from './jobs.js';
import { TasksRepo } from './tasks.js';
import { KeysRepo } from './keys.js';

/** The database and its repositories, opened once per process. */
export class Store {
  readonly collections: CollectionsRepo;
  readonly videos: VideosRepo;
  readonly segments: SegmentsRepo;
  readonly jobs: JobQueue;
  readonly tasks: TasksRepo;
  readonly keys: KeysRepo;

  constructor(readonly db: Db) {
    this.collections = new CollectionsRepo(db);
    this.videos = new VideosRepo(db);
    this.segments = new SegmentsRepo(db);
    this.jobs = new JobQueue(db);
    this.tasks = new TasksRepo(db);
    this.keys = new KeysRepo(db);
  }

  static open(file: string): Store {
    return new Store(openDatabase(file));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export type { Db };
