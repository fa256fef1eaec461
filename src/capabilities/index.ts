/**
 * Capabilities (registry.ts, builtin.ts), their lanes (lanes.ts) and the reindex planner
 * (planner.ts): what the engine runs on a video, on which lane, and what must run again when
 * something changed. docs/architecture.md says how to add one.
 */
import type { Analyzer } from '../analysis/types.js';
import type { Embedder } from '../embedders/types.js';
import { builtinCapabilities, capabilityContext } from './builtin.js';
import { LANE_NAMES } from './lanes.js';
import type { CapabilityRegistry } from './registry.js';
import type { CapabilityContext, Hearer, LaneName, PlannedCapability } from './types.js';

export { CapabilityRegistry } from './registry.js';
export { analyzerCapability, builtinCapabilities, capabilityContext, heardSoundtrack, KEYWORDS_VERSION, type BuiltinOptions } from './builtin.js';
export { LANES, LANE_NAMES, laneOf, laneOfJob, type LaneDecl } from './lanes.js';
export { changeOf, replan, type Replan } from './planner.js';
export * from './types.js';

let shared: CapabilityRegistry | undefined;

/** The engine's own registry (built-in capabilities), checked once per process. */
export function defaultCapabilities(): CapabilityRegistry {
  if (!shared) {
    const r = builtinCapabilities();
    r.validate(LANE_NAMES, [capabilityContext({ id: 'pixels-only', consumes: [] }), capabilityContext({ id: 'facts', consumes: ['perception', 'imagenet', 'ocr'] })]);
    shared = r;
  }
  return shared;
}

/**
 * The frame analyzers a plan runs (planned, available, of the `pictures` lane; `only`: just
 * those), loaded, in the plan's order. An analyzer that cannot load after all is left out and
 * its name returned in `missing` with why.
 */
export async function frameAnalyzers(
  registry: CapabilityRegistry,
  plan: PlannedCapability[],
  ctx: CapabilityContext,
  only?: ReadonlySet<string>,
): Promise<{ analyzers: Analyzer[]; missing: Map<string, string> }> {
  const analyzers: Analyzer[] = [];
  const missing = new Map<string, string>();
  for (const p of plan) {
    if (p.kind !== 'frame' || !p.available || (only && !only.has(p.name))) continue;
    const d = registry.get(p.name);
    if (!d.analyzer) continue; // the decode's own (pixels)
    try {
      const a = await d.analyzer(ctx);
      if (a) analyzers.push(a);
      else missing.set(p.name, 'could not be loaded');
    } catch (err) {
      missing.set(p.name, (err as Error).message);
    }
  }
  return { analyzers, missing };
}

/** The track capabilities a plan runs (planned, available; `only`: just those), each with what hears for it. */
export async function trackHearers(
  registry: CapabilityRegistry,
  plan: PlannedCapability[],
  ctx: CapabilityContext,
  only?: ReadonlySet<string>,
): Promise<Array<{ name: string; hearer: Hearer }>> {
  const out: Array<{ name: string; hearer: Hearer }> = [];
  for (const p of plan) {
    if (p.kind !== 'track' || !p.available || (only && !only.has(p.name))) continue;
    const d = registry.get(p.name);
    if (d.hearer) out.push({ name: p.name, hearer: await d.hearer(ctx) });
  }
  return out;
}

/** The frame analyzers a collection with `embedder` runs (speech `auto`), loaded: for one-off analyses and tools. */
export async function analyzersFor(embedder: Embedder, registry: CapabilityRegistry = defaultCapabilities()): Promise<Analyzer[]> {
  const ctx = capabilityContext(embedder);
  return (await frameAnalyzers(registry, await registry.plan(ctx), ctx)).analyzers;
}

/**
 * The recipe of a collection's vectors: the versions of the capabilities its embedder pools that
 * ran (a collection whose recipe differs from the engine's `needs_reindex`), and of speech.
 */
export function recipeOf(embedder: Pick<Embedder, 'consumes'>, plan: PlannedCapability[]): Record<string, string> {
  const wants = new Set(embedder.consumes ?? []);
  return Object.fromEntries(plan.filter((p) => wants.has(p.name) && p.available).map((p) => [p.name, p.version]));
}

/** The recipe a collection would get now: `recipeOf` of its plan, with speech's version. */
export async function expectedRecipe(registry: CapabilityRegistry, ctx: CapabilityContext): Promise<Record<string, string>> {
  const plan = await registry.plan(ctx);
  const speech = plan.find((p) => p.name === 'speech');
  return { ...recipeOf(ctx.embedder, plan), ...(speech ? { speech: speech.version } : {}) };
}

/** The lanes a plan's capabilities run on, in lane order. */
export function lanesOf(plan: Pick<PlannedCapability, 'lane'>[]): LaneName[] {
  return LANE_NAMES.filter((l) => plan.some((p) => p.lane === l));
}
