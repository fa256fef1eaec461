/**
 * The reindex planner: which capabilities of a video must run again, from what the video records
 * it was made with (each capability's state and version) and what the registry would run now. A
 * capability runs again when its version changed, when it can run now and was skipped (a model was
 * pulled), when it can no longer run and had run (its output must go), when it failed, or when it
 * never ran; and with it every capability that reads its output — except a derived one whose every
 * changed input is on another lane: that lane joins its output and derives it anew itself (speech
 * lands in the keyword index through the speech lane, not by running the picture lane again).
 */
import type { CapabilityRegistry } from './registry.js';
import type { CapabilityContext, CapabilityState, PlannedCapability } from './types.js';

export interface Replan {
  /** Capabilities to run again, in dependency order. */
  rerun: string[];
  /** Why each of the directly changed ones runs again. */
  why: Map<string, string>;
}

/** Why `p` must run again given its stored state, or undefined when it stands. */
export function changeOf(p: PlannedCapability, s: CapabilityState | undefined): string | undefined {
  if (!s) return 'never ran';
  switch (s.status) {
    case 'failed':
      return `failed before${s.message ? `: ${s.message}` : ''}`;
    case 'pending':
    case 'running':
      return 'not finished';
    case 'skipped':
      return p.available ? 'can run now' : undefined;
    case 'done':
      if (!p.available) return `can no longer run: ${p.reason ?? ''}`.trim();
      return s.version !== p.version ? `version ${s.version ?? '?'} → ${p.version}` : undefined;
  }
}

/** What must run again for one video (`states`: what it records; none: a video from before capabilities were recorded — everything). */
export function replan(registry: CapabilityRegistry, ctx: CapabilityContext, plan: PlannedCapability[], states: CapabilityState[]): Replan {
  const byName = new Map(states.map((s) => [s.capability, s]));
  const why = new Map<string, string>();
  for (const p of plan) {
    const w = states.length ? changeOf(p, byName.get(p.name)) : 'recorded nothing';
    if (w) why.set(p.name, w);
  }
  if (!why.size) return { rerun: [], why };
  const planned = new Set(plan.map((p) => p.name));
  const laneOf = new Map(plan.map((p) => [p.name, p.lane]));
  const closure = registry.dependents(why.keys(), ctx).filter((n) => planned.has(n));
  const hit = new Set(why.keys());
  const rerun: string[] = [];
  for (const name of closure) {
    if (hit.has(name)) {
      rerun.push(name);
      continue;
    }
    const d = registry.get(name);
    const deps = [...d.inputs(ctx), ...(d.reads?.(ctx, registry) ?? [])].filter((e) => rerun.includes(e));
    // A derived capability only the other lane's change reaches: that lane derives it when it joins.
    if (d.kind === 'derived' && deps.every((e) => laneOf.get(e) !== d.lane)) continue;
    rerun.push(name);
  }
  return { rerun, why };
}
