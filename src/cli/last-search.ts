import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BadRequestError } from '../api/errors.js';
import type { SearchResponse } from '../api/types.js';
import type { Paths } from '../config.js';

/** The moments of the last search, so `vidembed open 2` opens its second result. */
export interface LastSearch {
  collection_id: string;
  query: string;
  /** Rank of the first result minus one (pages after the first). */
  offset: number;
  results: { video_id: string; filename: string; start: number; end: number }[];
}

const FILE = 'last-search.json';

export function saveLastSearch(paths: Paths, collectionId: string, query: string, res: SearchResponse, offset = 0): void {
  const out: LastSearch = {
    collection_id: collectionId,
    query,
    offset,
    results: res.results.map((r) => ({ video_id: r.video_id, filename: r.filename, start: r.start, end: r.end })),
  };
  try {
    writeFileSync(path.join(paths.home, FILE), JSON.stringify(out), { mode: 0o600 });
  } catch {
    // Remembering is a convenience: a read-only home does not fail the search.
  }
}

/**
 * What `open` was given: a rank of the last search (`3`), or `VIDEO_ID[@SECONDS]`
 * (`vid_abc@12.5`; without a time, the start of the video).
 */
export function resolveMoment(paths: Paths, ref: string): { video_id: string; start: number; end?: number } {
  if (/^\d+$/.test(ref)) {
    let last: LastSearch;
    try {
      last = JSON.parse(readFileSync(path.join(paths.home, FILE), 'utf8')) as LastSearch;
    } catch {
      throw new BadRequestError(`no search to take result ${ref} from: run \`vidembed search TEXT\` first, or pass VIDEO_ID[@SECONDS]`);
    }
    // Ranks continue across pages: `open 12` after `search --offset 10` is that page's second row.
    const r = last.results[Number(ref) - 1 - (last.offset ?? 0)];
    if (!r) {
      const first = (last.offset ?? 0) + 1;
      throw new BadRequestError(`the last search ("${last.query}") showed results ${first}–${first + last.results.length - 1}, not ${ref}`);
    }
    return { video_id: r.video_id, start: r.start, end: r.end };
  }
  const m = /^([A-Za-z0-9_-]+)(?:@(\d+(?:\.\d+)?))?$/.exec(ref);
  if (!m) throw new BadRequestError(`not a result: ${ref} (pass a rank of the last search, or VIDEO_ID[@SECONDS])`);
  return { video_id: m[1], start: m[2] ? Number(m[2]) : 0 };
}
