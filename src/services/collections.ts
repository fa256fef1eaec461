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
import { DEFAULT_EMBEDDER_ID } from '../embedders/registry.js';
import { CollectionNameTakenError } from '../store/catalog/types.js';
import type { CollectionRow } from '../store/collections.js';
import { readUserConfig } from '../config.js';
import { LIMITS } from '../api/defaults.js';
import { requireText } from '../api/require-text.js';
import type { Library } from './library.js';
import { DEFAULT_SPEECH_LANGUAGE } from '../speech/engines.js';
import { capabilityContext, expectedRecipe, replan, type CapabilityContext } from '../capabilities/index.js';
import type { VideoCapabilityRow } from '../store/catalog/types.js';
import { VIDEO_ARTIFACTS } from './artifacts.js';
import { queueAnalysis } from './video-analysis.js';
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
   * Runs again, in the background, what changed for a collection's settled videos (src/capabilities
   * planner.ts: a model pulled, an analyzer's version, the speech setting) and what derives from
   * it — every capability with `all`. Each video keeps its old segments and vectors, and search
   * answers from them, until its new ones replace them in one transaction. A keyframe analyzer runs
   * on the stored keyframes, without a decode (`decodes` counts the videos decoded again).
   */
  async reindex(p: Principal, idOrName: string, opts: { all?: boolean } = {}): Promise<ReindexResponse> {
    const { lib } = this;
    const collection = await lib.collection(p, idOrName);
    const ids = await lib.catalog.videos.idsForCollection(collection.id, ['processed', 'failed']);
    const capCtx = lib.capabilityContext(collection);
    const plan = await lib.capabilities.plan(capCtx);
    const states = new Map<string, VideoCapabilityRow[]>();
    for (const r of await lib.catalog.analysis.forCollection(collection.id)) states.set(r.video_id, [...(states.get(r.video_id) ?? []), r]);
    const work: Array<{ id: string; rerun: string[] }> = [];
    for (const id of ids) {
      const rerun = opts.all ? plan.map((c) => c.name) : replan(lib.capabilities, capCtx, plan, states.get(id) ?? []).rerun;
      if (rerun.length) work.push({ id, rerun });
    }
    await checkJobLimit(p.limits, lib.catalog.queue, collection.owner, work.length);
    await lib.catalog.transaction(async (tx) => {
      for (const w of work) await queueAnalysis(tx, { id: w.id, owner: collection.owner }, plan, new Set(w.rerun));
    });
    if (work.length) await lib.onWorkQueued();
    const capabilities: Record<string, number> = {};
    for (const w of work) for (const c of w.rerun) capabilities[c] = (capabilities[c] ?? 0) + 1;
    let decodes = 0;
    for (const w of work) if (await this.decodes(collection.id, w, capCtx)) decodes++;
    return { collection_id: collection.id, queued: work.length, video_ids: work.map((w) => w.id), capabilities, decodes };
  }

  /** Whether the picture lane of a re-run decodes the video (a capability reads more than a stored keyframe, or none is stored). */
  private async decodes(_collectionId: string, w: { id: string; rerun: string[] }, ctx: CapabilityContext): Promise<boolean> {
    const pictures = w.rerun.filter((n) => this.lib.capabilities.get(n).lane === 'pictures');
    if (!pictures.length) return false;
    if (pictures.some((n) => this.lib.capabilities.get(n).media(ctx).some((m) => m !== 'keyframe'))) return true;
    return !(await this.lib.blobs.has(VIDEO_ARTIFACTS.keyframeIndex(w.id)));
  }

  /** Adds `needs_reindex` where the engine would now make the collection's vectors differently. */
  private async withRecipe(summary: CollectionSummary): Promise<CollectionSummary> {
    const { speech_setting: _setting, speech_language: _language, ...made } = summary.recipe ?? {};
    // Only a recipe with versions (a processed video) says how the vectors were made.
    if (!Object.keys(made).length) return summary;
    let expected: Record<string, string>;
    try {
      const ctx = capabilityContext(this.lib.embedderFor(summary.model), { setting: summary.speech ?? 'auto', language: summary.language });
      expected = await expectedRecipe(this.lib.capabilities, ctx);
    } catch {
      return summary; // an embedder this engine does not know: nothing to compare with
    }
    // Speech is compared where the recipe records it (collections made before speech have none).
    if (made.speech === undefined) delete expected.speech;
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
