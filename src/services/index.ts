/**
 * The services of a library, one per resource, and the job handlers: what the CLI's facade
 * (src/runtime/engine.ts), the HTTP server (src/server) and the workers call. Each takes the
 * caller's principal as an argument.
 */
import { AnalysisService } from './analysis.js';
import { CollectionsService } from './collections.js';
import { Jobs } from './jobs.js';
import type { Library } from './library.js';
import { QueueService } from './queue.js';
import { SearchService, type SearchPort } from './search.js';
import { TasksService } from './tasks.js';
import { VideosService } from './videos.js';
import { InPlaceService } from './in-place.js';
import { WebhooksService } from './webhooks.js';

export interface Services {
  readonly library: Library;
  readonly collections: CollectionsService;
  readonly videos: VideosService;
  /** Footage indexed where it lies (`upload --in-place`, `rescan`, a server's library scan). */
  readonly inPlace: InPlaceService;
  /** Search and text embeddings (a server may run searches on threads: src/runtime/search-threads.ts). */
  readonly search: SearchPort;
  /** Embedding and tagging of videos that are not stored. */
  readonly analysis: AnalysisService;
  readonly tasks: TasksService;
  readonly jobs: Jobs;
  /** The queue as the API shows it: list and cancel jobs. */
  readonly queue: QueueService;
  /** Webhook endpoints, and the delivery of their events (run by workers). */
  readonly webhooks: WebhooksService;
}

export function createServices(library: Library): Services {
  const analysis = new AnalysisService(library);
  const jobs = new Jobs(library, analysis);
  return {
    library,
    collections: new CollectionsService(library),
    videos: new VideosService(library),
    inPlace: new InPlaceService(library),
    search: new SearchService(library),
    analysis,
    tasks: new TasksService(library, analysis),
    jobs,
    queue: new QueueService(library, jobs),
    webhooks: new WebhooksService(library),
  };
}

export { Library, type LibraryPorts, type VideoFile, type WebhookSettings } from './library.js';
export { openLibrary, type EngineOptions } from './open.js';
export type { JobContext, JobOutcome } from './jobs.js';
