import os from 'node:os';
import path from 'node:path';
import type { Analyzer } from '../../src/analysis/types.js';
import { LocalEngine, type EngineOptions } from '../../src/runtime/engine.js';
import { MemoryBlobStore } from '../../src/store/memory/blobs.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { FakeAnalyzer } from './fake-analyzer.js';
import { FakeEmbedder } from './fake-embedder.js';

export interface MemoryEngine {
  engine: LocalEngine;
  catalog: MemoryCatalog;
  blobs: MemoryBlobStore;
  embedder: FakeEmbedder;
  analyzer: FakeAnalyzer;
}

/**
 * An engine for logic tests: the in-memory catalog and blob store (src/store/memory), the fake
 * embedder and the fake analyzer. No file is written (its home is never created), no process is
 * started, nothing is decoded: it runs in milliseconds. `opts` overrides any of it.
 */
export function memoryEngine(opts: EngineOptions & { analyzers?: Analyzer[] } = {}): MemoryEngine {
  const embedder = new FakeEmbedder();
  const analyzer = new FakeAnalyzer();
  const catalog = new MemoryCatalog();
  const blobs = new MemoryBlobStore();
  const { analyzers, ...rest } = opts;
  const engine = new LocalEngine({
    home: path.join(os.tmpdir(), 'vidembed-memory-engine', 'never-created'),
    catalog,
    blobs,
    embedderFor: () => embedder,
    analyzers: analyzers ?? [analyzer],
    ...rest,
  });
  return { engine, catalog, blobs, embedder, analyzer };
}
