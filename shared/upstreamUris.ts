/**
 * How an upstream's resource URIs (and URI templates) appear behind the hub: `tuic://<upstream>/`
 * followed by the upstream's own URI, unchanged. Two upstreams may both serve `file:///README.md`;
 * behind one endpoint each needs a URI of its own, and a client must be able to read back exactly
 * what it listed. The prefix keeps the result a valid URI: upstream names are lowercase letters,
 * digits, `-` and `_` (a valid host), and whatever follows the first `/` is path, query and fragment
 * made of characters a URI may hold anyway (`:` and `//` are legal in a path). Reversing it is
 * cutting the prefix off, so a template's `{variables}` survive: a client expands
 * `tuic://x/test://item/{id}` to `tuic://x/test://item/7`, which reads `test://item/7` on `x`.
 */

export const UPSTREAM_URI_SCHEME = 'tuic';
const PREFIX = `${UPSTREAM_URI_SCHEME}://`;

/** `uri` of `upstream` as clients see it. */
export function namespacedUri(upstream: string, uri: string): string {
  return `${PREFIX}${upstream}/${uri}`;
}

/** The upstream and its own URI, or null when `uri` is not one of the hub's. */
export function splitNamespacedUri(uri: string): { upstream: string; uri: string } | null {
  if (!uri.startsWith(PREFIX)) return null;
  const slash = uri.indexOf('/', PREFIX.length);
  if (slash <= PREFIX.length || slash === uri.length - 1) return null;
  return { upstream: uri.slice(PREFIX.length, slash), uri: uri.slice(slash + 1) };
}
