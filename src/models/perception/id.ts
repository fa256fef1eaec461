/** Id of the perception tier's embedder (kept apart so the registry can name it without loading it). */
export const PERCEPTION_EMBEDDER_ID = 'perception-use-v1';
