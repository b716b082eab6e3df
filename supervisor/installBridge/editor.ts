/**
 * What every config-format editor provides, and the check every edit passes before it is written:
 * the new text must parse to the old document with exactly the one entry added, changed or removed.
 * Editors offer their edits best-first (a minimal textual edit, then the format library's own edit);
 * the first one that passes the check wins, so a layout the textual edit misreads can never corrupt a file.
 */
import { isDeepStrictEqual } from 'node:util';

export type ConfigFormat = 'json' | 'toml' | 'yaml';

/** The file cannot be parsed: it is left as it is. */
export class ParseRefusal extends Error {}

/** The file parses, but not into a shape an entry can go in (a list at the top, a string parent…): left as it is. */
export class ShapeRefusal extends ParseRefusal {}

/** No edit passed the check: a bug or a layout we do not handle; the file is left as it is. */
export class EditUnverified extends Error {}

export type Doc = Record<string, unknown>;

export interface ConfigEditor {
  readonly format: ConfigFormat;
  /** The document as plain data; throws ParseRefusal. */
  parse(text: string): Doc;
  /** Candidate texts with `parent.key = value` (added or replaced), best first; each may throw. */
  setCandidates(text: string, parent: string, key: string, value: unknown): Array<() => string>;
  /** Candidate texts without `parent.key` (and without `parent` if it is left empty and `dropEmptyParent`). */
  removeCandidates(text: string, parent: string, key: string, dropEmptyParent: boolean): Array<() => string>;
  /** A new file holding only the entry. */
  create(parent: string, key: string, value: unknown): string;
  /** Whether the text holds nothing (so a file install-bridge created can go). */
  isEmpty(text: string): boolean;
}

export function isTable(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** Refuses a document whose parent key holds something other than a table (a list, a string…). */
export function checkParent(doc: Doc, parent: string): Doc | undefined {
  const p = doc[parent];
  if (p === undefined || p === null) return undefined;
  if (!isTable(p)) throw new ShapeRefusal(`"${parent}" is not a table/object`);
  return p;
}

export function readEntry(doc: Doc, parent: string, key: string): unknown {
  const p = doc[parent];
  return isTable(p) ? p[key] : undefined;
}

/** `a` and `b` without the entry, an empty, null or missing parent counting as the same. */
function sameApartFromEntry(a: Doc, b: Doc, parent: string, key: string): boolean {
  for (const d of [a, b]) {
    const p = d[parent];
    if (isTable(p)) delete p[key];
    if (p === null || (isTable(p) && Object.keys(p).length === 0)) delete d[parent];
  }
  return isDeepStrictEqual(a, b);
}

function firstVerified(candidates: Array<() => string>, ok: (text: string) => boolean, what: string): string {
  const why: string[] = [];
  for (const candidate of candidates) {
    try {
      const text = candidate();
      if (ok(text)) return text;
      why.push('result differs from the intended document');
    } catch (err) {
      why.push(err instanceof Error ? err.message.split('\n')[0]! : String(err));
    }
  }
  throw new EditUnverified(`no ${what} edit could be verified (${why.join('; ')})`);
}

/** The new text with the entry set, verified; throws EditUnverified. */
export function setEntry(ed: ConfigEditor, text: string, parent: string, key: string, value: unknown): string {
  return firstVerified(
    ed.setCandidates(text, parent, key, value),
    (out) => {
      const after = ed.parse(out);
      return isDeepStrictEqual(readEntry(after, parent, key), value) && sameApartFromEntry(after, ed.parse(text), parent, key);
    },
    'install',
  );
}

/** The new text without the entry, verified; throws EditUnverified. */
export function removeEntry(ed: ConfigEditor, text: string, parent: string, key: string, dropEmptyParent: boolean): string {
  return firstVerified(
    ed.removeCandidates(text, parent, key, dropEmptyParent),
    (out) => {
      const after = ed.parse(out);
      return readEntry(after, parent, key) === undefined && sameApartFromEntry(after, ed.parse(text), parent, key);
    },
    'uninstall',
  );
}
