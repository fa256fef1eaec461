/**
 * The order test files start in: longest first, over all projects at once (longest-processing-time
 * scheduling on vitest's 2 workers), so a long file never starts last and leaves one core idle while
 * it runs. How long a file takes comes from vitest's cache of the last run on this machine, else from
 * TYPICAL_SECONDS (measured in a clean clone's CI run, 2026-11-27; a clean clone has no cache), else a
 * small default (unit files are quick; an unknown end-to-end file counts as 10 s).
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds each long file took in a clean clone's `CI=true bash .ci/run` (vitest's results cache). */
export const TYPICAL_SECONDS: Record<string, number> = {
  'test/e2e/search-quality.test.ts': 365,
  'test/e2e/pg-cluster.test.ts': 95,
  'test/e2e/search-by-example.test.ts': 85,
  'test/e2e/server.test.ts': 80,
  'test/e2e/web-playback.test.ts': 74,
  'test/e2e/engine.test.ts': 65,
  'test/e2e/models-perception.test.ts': 56,
  'test/e2e/reindex.test.ts': 47,
  'test/e2e/pg-outage.test.ts': 46,
  'test/e2e/tagging.test.ts': 41,
  'test/e2e/cli-basics.test.ts': 36,
  'test/e2e/tagging-framing.test.ts': 30,
  'test/e2e/lanes.test.ts': 28,
  'test/e2e/whisper.test.ts': 26,
  'test/e2e/in-place.test.ts': 25,
  'test/e2e/clip.test.ts': 24,
};

export default class LongestFirst extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = (f: TestSpecification): number => {
      const rel = path.relative(root, f.moduleId).split(path.sep).join('/');
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${rel}`);
      if (cached && !cached.failed && cached.duration > 0) return cached.duration / 1000;
      return TYPICAL_SECONDS[rel] ?? (f.project.name === 'unit' ? 1 : 10);
    };
    const group = (f: TestSpecification) => f.project.config.sequence.groupOrder ?? 0;
    return [...(await super.sort(files))].sort((a, b) => group(a) - group(b) || seconds(b) - seconds(a));
  }
}
