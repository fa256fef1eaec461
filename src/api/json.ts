import { BadRequestError } from './errors.js';

/** Deepest nesting of objects and arrays a JSON body may have (the API's own bodies need 4). */
export const MAX_JSON_DEPTH = 32;

/**
 * Refuses JSON nested deeper than `max` before it is parsed: one pass that jumps over strings,
 * so a 400 MB tensor body costs a few scans of memory, not a parse. Malformed text is left for
 * the parser to report.
 */
export function checkJsonDepth(text: string, max: number): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) return;
        let k = j - 1;
        while (text.charCodeAt(k) === 92 /* \ */) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      i = j;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) throw new BadRequestError(`JSON nested deeper than ${max} levels`);
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    }
  }
}
