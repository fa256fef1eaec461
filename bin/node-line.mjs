// Which Node lines vidembed runs on (issue 33; docs/install.md): 22 and 24 are supported and
// tested; 20 (out of support since April 2026) still works, measured, and gets one line of warning
// on a terminal; anything older is refused with one line, before anything else is loaded.
// Plain JavaScript that any Node parses: bin/vidembed asks it first.

/** Supported lines: package.json engines says the same (test/unit/node-engines.test.ts). */
export const SUPPORTED = [22, 24];

/**
 * What to say for a Node version ("22.13.0"): nothing, a warning (run anyway) or a refusal (exit 1).
 * @param {string} version
 * @returns {{ warn?: string, refuse?: string }}
 */
export function nodeLine(version) {
  const [major, minor] = version.split('.').map(Number);
  if (major > 24 || major === 24 || (major === 22 && minor >= 13) || major === 23) return {};
  if (major === 22) return { refuse: `vidembed: Node ${version} is too old: it needs Node 22.13 or later (or 24)` };
  if (major === 20 && minor >= 19) {
    return { warn: `vidembed: warning: Node ${version} is out of support; vidembed is tested on Node 22 and 24 and works on 20 for now` };
  }
  return { refuse: `vidembed: Node ${version} is too old: it needs Node 22.13 or later, or 24 (20.19 and later still work, out of support)` };
}
