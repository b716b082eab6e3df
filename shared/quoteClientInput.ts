/**
 * Error messages quote client input (a method name, a header value, a session id), never all of it:
 * a 1 MB name must not come back in the answer. At most MAX_QUOTED_CHARS characters, then an
 * ellipsis and how many characters were left out. REST routes, the request guard and /mcp share it.
 */

/** Characters of client input an error message may quote. */
export const MAX_QUOTED_CHARS = 200;

/** `value` as JSON text (quotes and escapes), cut to `max` characters with the number left out. */
export function quoteClientInput(value: unknown, max = MAX_QUOTED_CHARS): string {
  const text = typeof value === 'string' ? value : safeJson(value);
  const cut = cutAt(text, max);
  return cut === text.length ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, cut))}… (${text.length - cut} more characters)`;
}

/**
 * `text` bare, cut the same way, for messages whose fixed wording has no quotes
 * (`Method not found: <method>`); the JSON body escapes whatever it holds.
 */
export function clipClientInput(text: string, max = MAX_QUOTED_CHARS): string {
  const cut = cutAt(text, max);
  return cut === text.length ? text : `${text.slice(0, cut)}… (${text.length - cut} more characters)`;
}

/** Where to cut `text` to at most `max` characters without splitting a surrogate pair. */
function cutAt(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
