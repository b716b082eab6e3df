// Partial-save semantics (as TUICommander's merge_partial_app_config / json_merge_delta have them):
// saving one field must never reset the others to their defaults. Pure functions on JSON values.

export type JsonObject = { [key: string]: unknown };

export function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The object at `path` under `root`; with `create`, missing or non-object steps become `{}` on the way. */
export function objectAt(root: unknown, path: readonly string[], create = false): JsonObject | undefined {
  let node = root;
  for (const key of path) {
    if (!isPlainObject(node)) return undefined;
    if (create && !isPlainObject(node[key])) node[key] = {};
    node = node[key];
  }
  return isPlainObject(node) ? node : undefined;
}

/**
 * Deep-merges `partial` onto `base` and returns a new value; neither input is mutated.
 * Objects merge key by key, arrays and scalars replace wholesale, and `null` deletes the key, so
 * the schema default (or null, for a nullable field) fills it again during normalization.
 */
export function deepMerge(base: unknown, partial: unknown): unknown {
  if (!isPlainObject(partial)) return structuredClone(partial);
  const out: JsonObject = isPlainObject(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(partial)) {
    if (value === null) delete out[key];
    else if (value !== undefined) out[key] = deepMerge(out[key], value);
  }
  return out;
}

/**
 * The delta that turns `base` into `desired` (the `{base, config}` save envelope): a key present in
 * base but absent from desired becomes null (an intentional clear), unchanged keys are omitted,
 * changed objects recurse and arrays travel whole. Returns undefined when nothing changed.
 */
export function jsonMergeDelta(base: unknown, desired: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(desired)) {
    return jsonEqual(base, desired) ? undefined : structuredClone(desired);
  }
  const delta: JsonObject = {};
  for (const key of Object.keys(base)) {
    if (!(key in desired)) delta[key] = null;
  }
  for (const [key, value] of Object.entries(desired)) {
    const sub = key in base ? jsonMergeDelta(base[key], value) : structuredClone(value);
    if (sub !== undefined) delta[key] = sub;
  }
  return Object.keys(delta).length === 0 ? undefined : delta;
}

/** Structural equality for JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => key in b && jsonEqual(a[key], b[key]));
  }
  return false;
}

/** Dotted paths of the leaves (scalars, arrays, added or removed keys) that differ. */
export function changedPaths(before: unknown, after: unknown, prefix = ''): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    const paths: string[] = [];
    for (const key of keys) {
      paths.push(...changedPaths(before[key], after[key], prefix === '' ? key : `${prefix}.${key}`));
    }
    return paths;
  }
  return jsonEqual(before, after) ? [] : [prefix === '' ? '(root)' : prefix];
}

/** True when `path` is `watched` or lies below or above it (a replaced parent counts as a change). */
export function pathTouches(path: string, watched: string): boolean {
  return path === watched || path.startsWith(`${watched}.`) || watched.startsWith(`${path}.`);
}
