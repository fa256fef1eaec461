/**
 * The capability registry: every analysis the engine runs, declared once (types.ts), checked when
 * the engine starts — an input that names no capability, a lane nobody runs, a cycle: each fails
 * loudly then, naming it, never silently at run time. Adding a capability (a new audio model, a new
 * frame analyzer) is one `register` call; the pipeline, the lanes and the reindex planner follow.
 */
import { CapabilityError, type CapabilityContext, type CapabilityDecl, type LaneName, type PlannedCapability } from './types.js';

export class CapabilityRegistry {
  private readonly decls = new Map<string, CapabilityDecl>();

  constructor(decls: Iterable<CapabilityDecl> = []) {
    for (const d of decls) this.register(d);
  }

  /** Adds a capability; a name registered twice is an error. */
  register(decl: CapabilityDecl): this {
    if (!/^[a-z][a-z0-9_-]*$/.test(decl.name)) throw new CapabilityError(`capability name "${decl.name}" is not a lower-case word`);
    if (this.decls.has(decl.name)) throw new CapabilityError(`capability "${decl.name}" is registered twice`);
    this.decls.set(decl.name, decl);
    return this;
  }

  /** A copy without the named capabilities, with `extra` added (tests swap analyzers this way). */
  with(extra: CapabilityDecl[], without: (d: CapabilityDecl) => boolean = () => false): CapabilityRegistry {
    return new CapabilityRegistry([...[...this.decls.values()].filter((d) => !without(d)), ...extra]);
  }

  get(name: string): CapabilityDecl {
    const d = this.decls.get(name);
    if (!d) throw new CapabilityError(`no capability "${name}" is registered (known: ${this.names().join(', ')})`);
    return d;
  }

  has(name: string): boolean {
    return this.decls.has(name);
  }

  /** Names in registration order. */
  names(): string[] {
    return [...this.decls.keys()];
  }

  all(): CapabilityDecl[] {
    return [...this.decls.values()];
  }

  /** What `name` depends on for this collection: its inputs and what it reads. */
  private edges(d: CapabilityDecl, ctx: CapabilityContext): string[] {
    return [...d.inputs(ctx), ...(d.reads?.(ctx, this) ?? [])];
  }

  /**
   * Checks the declarations add up for a collection like `ctx` (the built-in embedders each give
   * one): every input and read names a registered capability, every lane is one of `lanes`, a
   * frame capability can give an analyzer and a track one a hearer, and nothing depends on itself
   * (a cycle). Throws a CapabilityError naming the first problem.
   */
  validate(lanes: readonly LaneName[], contexts: CapabilityContext[]): void {
    for (const d of this.decls.values()) {
      if (!lanes.includes(d.lane)) throw new CapabilityError(`capability "${d.name}" runs on lane "${d.lane}", which no job runs (lanes: ${lanes.join(', ')})`);
      // The capability that makes the segments is the decode's own (the pixel taggers); every other frame one is an analyzer.
      if (d.kind === 'frame' && !d.analyzer && !d.outputs.includes('segments')) throw new CapabilityError(`frame capability "${d.name}" gives no analyzer`);
      if (d.kind === 'track' && !d.hearer) throw new CapabilityError(`track capability "${d.name}" gives no hearer`);
    }
    for (const ctx of contexts) {
      for (const d of this.decls.values()) {
        for (const e of this.edges(d, ctx)) {
          if (!this.decls.has(e)) throw new CapabilityError(`capability "${d.name}" reads "${e}", which is not registered (for embedder ${ctx.embedder.id})`);
        }
      }
      this.order(ctx); // throws on a cycle
    }
  }

  /**
   * Every capability, each after the ones it depends on (registration order otherwise). Throws a
   * CapabilityError naming the cycle when there is one.
   */
  order(ctx: CapabilityContext): string[] {
    const out: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (name: string, path: string[]) => {
      const s = state.get(name);
      if (s === 'done') return;
      if (s === 'visiting') throw new CapabilityError(`capabilities depend on each other in a cycle: ${[...path.slice(path.indexOf(name)), name].join(' → ')}`);
      state.set(name, 'visiting');
      const d = this.decls.get(name);
      for (const e of d ? this.edges(d, ctx) : []) if (this.decls.has(e)) visit(e, [...path, name]);
      state.set(name, 'done');
      out.push(name);
    };
    for (const name of this.decls.keys()) visit(name, []);
    return out;
  }

  /**
   * The capabilities a collection runs, in dependency order: those wanted always, and what they
   * need (inputs, transitively). Each with its version now and whether it can run here.
   */
  async plan(ctx: CapabilityContext): Promise<PlannedCapability[]> {
    const wanted = new Set<string>();
    const pull = (name: string) => {
      if (wanted.has(name)) return;
      wanted.add(name);
      for (const i of this.get(name).inputs(ctx)) pull(i);
    };
    for (const d of this.decls.values()) if (d.wanted === 'always') pull(d.name);
    const out: PlannedCapability[] = [];
    const unavailable = new Map<string, string>();
    for (const name of this.order(ctx)) {
      if (!wanted.has(name)) continue;
      const d = this.get(name);
      let av = await d.availability(ctx);
      // A capability whose required input cannot run here cannot run either (a derived one still
      // runs without what is only read).
      const missing = d.kind !== 'derived' ? d.inputs(ctx).find((i) => unavailable.has(i)) : undefined;
      if (av.available && missing) av = { available: false, reason: `needs ${missing}: ${unavailable.get(missing)}` };
      if (!av.available) unavailable.set(name, av.reason);
      out.push({ name, kind: d.kind, lane: d.lane, version: await d.version(ctx), available: av.available, ...(av.available ? {} : { reason: av.reason }) });
    }
    return out;
  }

  /**
   * What re-runs when `changed` re-run: those and every capability that depends on one of them
   * (inputs or reads, transitively), in dependency order.
   */
  dependents(changed: Iterable<string>, ctx: CapabilityContext): string[] {
    const hit = new Set(changed);
    const order = this.order(ctx);
    for (const name of order) {
      if (hit.has(name)) continue;
      if (this.edges(this.get(name), ctx).some((e) => hit.has(e))) hit.add(name);
    }
    return order.filter((n) => hit.has(n));
  }
}
