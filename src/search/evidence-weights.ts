/**
 * Every number of the evidence model (src/search/evidence.ts), with where it came from. Fitted on
 * the TUNING half of the mixed eval library (picture items and recorded speech under footage in one
 * collection, both analyzer sets) by `node dist/eval/fit-evidence.js HOME`, with whole sources (the
 * catalog's package of each item) held out in cross-validation; the check half never chose any of
 * them (docs/eval.md, "Seen, said, written").
 */
export const EVIDENCE_WEIGHTS = {
  /** Seen (text query): logistic curve of similarity, sure picture words, ImageNet present. */
  seen: { similarity: 1.63, sureWords: 12.33, classified: 0.94, intercept: -2.43 },
  /** A picture or a moment as the query: logistic curve of the picture's similarity. */
  example: { similarity: 20, intercept: -17 },
  /** Written: logistic curve of the sure share of the query's words read on screen. */
  written: { sureWords: 12.33, intercept: -2.43 },
  /** Said: logistic curve of the stretched alignment score, exact share, content words (≤ 4) and rarity. */
  said: { score: 4, exact: 2, content: 0.8, rarity: 0.8, intercept: -9 },
  /** The sound-alike rule of plain searches (docs/speech.md). */
  saidRule: { minScore: 0.6, longQuery: 3, longMinScore: 0.8, shortMinScore: 0.9, shortMinRarity: 4.5 },
  /** The hit's confidence: weights of each present kind's log-odds, and an intercept. */
  combine: { seen: 1, said: 1, written: 1, intercept: 0 },
  /** Air around spoken words in a hit's window, seconds (never across a cut). */
  window: { pad: 0.3 },
};
