// The search results' rules, kept apart from the DOM (they run in Node for the unit tests):
// which results are weak matches, and the one status line a search ends with.

/** A weak match: the engine's confidence label says `low` (docs/engine.md says how it is reached). */
export const isWeak = (r) => r.confidence_label === 'low';

/**
 * The status line of a search: how many results for what (`label`), how many are likely and how
 * many weaker, and — in the same line — that nothing is likely when every result is weak.
 */
export function searchSummary({ likely, weak, label, warnings = [] }) {
  const n = likely + weak;
  let line = `${n} result${n === 1 ? '' : 's'} for ${label}.`;
  if (n && !likely) line += ' Nothing likely: only weaker matches.';
  else if (weak) line += ` ${likely} likely, ${weak} weaker.`;
  return warnings.length ? `${line} ${warnings.join(' ')}` : line;
}
