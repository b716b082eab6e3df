/**
 * JSON nesting depth, counted without parsing. JSON.parse takes any depth, but code that walks the
 * result recursively (merge, redaction, validation) overflows the stack on a 10,000-deep value: a
 * body nested deeper than any real one is refused before it is parsed.
 */

/** True when `text` opens more than `max` arrays/objects inside each other (strings are skipped). */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Deeper than any request tuicd serves needs (config, upstreams, tool arguments). */
export const MAX_JSON_DEPTH = 64;
