/** Collections: create, list, see, rename, delete, reindex. */
import { ConflictError, ValidationError } from '../api/errors.js';
import type { Principal } from '../api/principal.js';
import { checkJobLimit } from '../api/limits.js';
import type {
  CollectionDetails,
  CollectionSummary,
  CreateCollectionRequest,
  CreateCollectionResponse,
  DeleteResponse,
  ListCollectionsRequest,
  ReindexResponse,
  UpdateCollectionRequest,
} from '../api/types.js';
import { DEFAULT_EMBEDDER_ID } from '../models/registry.js';
import { CollectionNameTakenError } from '../store/catalog/types.js';
import type { CollectionRow } from '../store/collections.js';
import { readUserConfig } from '../config.js';
import { LIMITS } from '../api/defaults.js';
import { requireText } from '../api/require-text.js';
import type { Library } from './library.js';
import { DEFAULT_SPEECH_LANGUAGE, expectedSpeechVersion } from '../speech/engines.js';
import { speechLanguageOf, speechSettingOf } from '../speech/store.js';

export class CollectionsService {
  constructor(private readonly lib: Library) {}

  async create(p: Principal, req: CreateCollectionRequest): Promise<CreateCollectionResponse> {
    const name = requireText(req.name, ['body', 'name']).trim();
    const modelId = req.model ?? readUserConfig(this.lib.paths).default_model ?? DEFAULT_EMBEDDER_ID;
    const embedder = this.lib.embedder(modelId, ['body', 'model']);
    const owner = p.owner;
    const speech = req.speech ?? 'auto';
    const language = req.language ?? DEFAULT_SPEECH_LANGUAGE;
    if ((await this.lib.catalog.collections.byName(name, owner)).length) throw new ConflictError(`a collection named "${name}" already exists`);
    let row: CollectionRow;
    try {
      row = await this.lib.catalog.transaction(async (tx) => {
        const r = await tx.collections.insert({ name, description: req.description ?? '', model: embedder.id, dim: embedder.dim, owner });
        // The recipe records the setting from the start (its versions come with the first video).
        const recipe = { ...(speech !== 'auto' ? { speech_setting: speech } : {}), ...(language !== DEFAULT_SPEECH_LANGUAGE ? { speech_language: language } : {}) };
        if (Object.keys(recipe).length) await tx.collections.setRecipe(r.id, recipe);
        return r;
      });
    } catch (err) {
      if (err instanceof CollectionNameTakenError) throw new ConflictError(`a collection named "${name}" already exists`);
      throw err;
    }
    return { collection_id: row.id, name: row.name, description: row.description, created_at: row.created_at, model: row.model, dim: row.dim, speech, language };
  }

  async list(p: Principal, req: ListCollectionsRequest = {}): Promise<CollectionSummary[]> {
    const rows = await this.lib.catalog.collections.list(req.limit ?? LIMITS.list.default, req.offset ?? 0, p.admin ? null : p.owner);
    return Promise.all(rows.map((r) => this.withRecipe(toSummary(r))));
  }

  async get(p: Principal, idOrName: string): Promise<CollectionSummary> {
    return this.withRecipe(toSummary(await this.lib.collection(p, idOrName)));
  }

  async details(p: Principal, idOrName: string): Promise<CollectionDetails> {
    const row = await this.lib.collection(p, idOrName);
    return { ...(await this.withRecipe(toSummary(row))), counts: await this.lib.catalog.videos.countsByStatus(row.id) };
  }

  /** Renames a collection and/or changes its description (names stay unique per owner). */
  async update(p: Principal, idOrName: string, patch: UpdateCollectionRequest): Promise<CollectionSummary> {
    const row = await this.lib.collection(p, idOrName);
    const name = patch.name === undefined ? undefined : requireText(patch.name, ['body', 'name']).trim();
    const description = patch.description;
    if (name !== undefined && name !== row.name && (await this.lib.catalog.collections.byName(name, row.owner)).length) {
      throw new ConflictError(`a collection named "${name}" already exists`);
    }
    try {
      await this.lib.catalog.collections.update(row.id, { name, description });
    } catch (err) {
      if (err instanceof CollectionNameTakenError) throw new ConflictError(`a collection named "${name}" already exists`);
      throw err;
    }
    return this.get(p, row.id);
  }

  /** Removes a collection with every video in it (files, segments, vectors, keywords, pending jobs). */
  async delete(p: Principal, idOrName: string): Promise<DeleteResponse> {
    const row = await this.lib.collection(p, idOrName);
    const videos = await this.lib.catalog.videos.listByCollection(row.id);
    await this.lib.catalog.transaction(async (tx) => {
      for (const v of videos) {
        await tx.queue.cancelFor(v.id);
        await tx.segments.deleteForVideo(v.id, row.dim);
        await tx.videos.delete(v.id);
      }
      await tx.collections.delete(row.id);
    });
    await Promise.all(videos.map((v) => this.lib.removeVideoFiles(v)));
    return { id: row.id, deleted: true, videos: videos.length };
  }

  /**
   * Processes every video of a collection again in the background (after an analyzer changed or
   * was installed). Each video keeps its old segments and vectors, and search answers from them,
   * until its new ones replace them in one transaction.
   */
  async reindex(p: Principal, idOrName: string): Promise<ReindexResponse> {
    const collection = await this.lib.collection(p, idOrName);
    const ids = await this.lib.catalog.videos.idsForCollection(collection.id, ['processed', 'failed']);
    await checkJobLimit(p.limits, this.lib.catalog.queue, collection.owner, ids.length);
    await this.lib.catalog.transaction(async (tx) => {
      for (const id of ids) await tx.queue.enqueue('video.process', id, undefined, collection.owner);
    });
    if (ids.length) await this.lib.onWorkQueued();
    return { collection_id: collection.id, queued: ids.length };
  }

  /** Adds `needs_reindex` where the engine would now make the collection's vectors differently. */
  private async withRecipe(summary: CollectionSummary): Promise<CollectionSummary> {
    const { speech_setting: _setting, speech_language: _language, ...made } = summary.recipe ?? {};
    // Only a recipe with versions (a processed video) says how the vectors were made.
    if (!Object.keys(made).length) return summary;
    let expected: Record<string, string>;
    try {
      const { expectedRecipe } = await import('../analysis/versions.js');
      expected = await expectedRecipe(this.lib.embedderFor(summary.model));
    } catch {
      return summary; // an embedder this engine does not know: nothing to compare with
    }
    // Speech is compared where the recipe records it (collections made before speech have none).
    if (made.speech !== undefined) expected.speech = expectedSpeechVersion(summary.speech ?? 'auto', process.env, summary.language);
    const keys = new Set([...Object.keys(expected), ...Object.keys(made)]);
    summary.needs_reindex = [...keys].some((k) => expected[k] !== made[k]);
    return summary;
  }
}


export function toSummary(row: CollectionRow): CollectionSummary {
  return {
    id: row.id,
    owner: row.owner,
    name: row.name,
    description: row.description,
    video_count: row.video_count,
    created_at: row.created_at,
    model: row.model,
    dim: row.dim,
    ...(row.recipe_json ? { recipe: JSON.parse(row.recipe_json) as Record<string, string> } : {}),
    speech: speechSettingOf(row.recipe_json),
    language: speechLanguageOf(row.recipe_json),
  };
}
