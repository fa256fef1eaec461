/**
 * The API's defaults and bounds, stated once: the request schemas (src/api/schemas.ts) are built
 * from them, so the server's validation, the local facade's (the same schemas) and /openapi.json
 * agree; the engine and the CLI take their defaults from here too.
 */
export const LIMITS = {
  /** Results per search page. */
  topK: { min: 1, max: 100, default: 10 },
  /** How deep a search pages: offset + top_k. */
  maxSearchHits: 1000,
  /** Longest segment, seconds. */
  segmentSeconds: { min: 1, max: 60, default: 4 },
  /** Frames per second given to the embedder (exclusive minimum 0). */
  fps: { min: 0, max: 8, default: 1 },
  /** Page size of the list operations. */
  list: { min: 1, max: 1000, default: 100 },
  collectionName: { maxLength: 128 },
  collectionDescription: { maxLength: 4096 },
} as const;
