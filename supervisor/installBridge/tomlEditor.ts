/**
 * TOML configs (Codex, Grok): the entry is a `[mcp_servers.tuicommander]` table. @decimalturn/toml-patch
 * parses, validates and renders the values; the table itself is added as a separate block at the end of
 * the file (or replaced where it stands) and removed the same way, so other tables, comments and
 * blank lines keep their bytes. toml-patch's own `patch` is the fallback for layouts a block cannot
 * express (an inline `mcp_servers = {…}`, dotted keys): it edits in place but writes new tables as
 * dotted keys, hence not the first choice.
 */
import { parse, patch, stringify } from '@decimalturn/toml-patch';

import { isTable, ParseRefusal, ShapeRefusal } from './editor.js';
import type { ConfigEditor, Doc } from './editor.js';
import { appendLines, detectEol, nextLineStart, removeLines, splice } from './textEdit.js';

function parseToml(text: string): Doc {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    const e = err as Error & { line?: number; column?: number };
    const lines = e.message.split('\n').filter((l) => l.trim() !== '' && l.trim() !== '^');
    const what = lines[lines.length - 1] ?? e.message;
    throw new ParseRefusal(e.line !== undefined ? `${what} at line ${e.line}, column ${e.column ?? 0}` : what);
  }
  const plain = toPlain(doc);
  if (!isTable(plain)) throw new ShapeRefusal('the top level is not a table');
  return plain;
}

/** toml-patch builds tables without a prototype; plain objects compare equal to the entries we write. */
function toPlain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toPlain);
  if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === null) {
    const out: Doc = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}

function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k);
}

function keyPattern(k: string): string {
  const esc = k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `(?:${esc}|"${esc}"|'${esc}')`;
}

/** The table's lines: header, key/value lines, never the blank or comment lines that lead to the next table. */
function tableSpan(text: string, parent: string, key: string): { start: number; end: number } | undefined {
  const header = new RegExp(`^[ \\t]*\\[[ \\t]*${keyPattern(parent)}[ \\t]*\\.[ \\t]*${keyPattern(key)}[ \\t]*\\][ \\t]*(?:#.*)?\\r?$`);
  const anyHeader = /^[ \t]*\[/;
  const lines: Array<{ start: number; text: string }> = [];
  for (let pos = 0; pos < text.length; ) {
    const next = nextLineStart(text, pos + 1);
    lines.push({ start: pos, text: text.slice(pos, next).replace(/\r?\n$/, '') });
    pos = next;
  }
  const found = lines.filter((l) => header.test(l.text));
  if (found.length !== 1) return undefined;
  const first = lines.indexOf(found[0]!);
  let last = first;
  for (let i = first + 1; i < lines.length && !anyHeader.test(lines[i]!.text); i++) {
    if (!/^\s*(#.*)?$/.test(lines[i]!.text)) last = i;
  }
  const after = lines[last + 1];
  return { start: found[0]!.start, end: after === undefined ? text.length : after.start };
}

function blockLines(parent: string, key: string, value: unknown): string[] {
  const body = stringify(value, { bracketSpacing: false, newLine: '\n' })
    .split('\n')
    .filter((l) => l !== '');
  if (body.some((l) => l.startsWith('['))) throw new Error('nested tables are not written as a block');
  return [`[${tomlKey(parent)}.${tomlKey(key)}]`, ...body];
}

function withEntry(text: string, parent: string, key: string, value: unknown): Doc {
  const doc = parseToml(text);
  const p = doc[parent];
  if (isTable(p)) p[key] = value;
  else doc[parent] = { [key]: value };
  return doc;
}

export const tomlEditor: ConfigEditor = {
  format: 'toml',
  parse: parseToml,
  setCandidates(text, parent, key, value) {
    const eol = detectEol(text);
    return [
      () => {
        const lines = blockLines(parent, key, value);
        const span = tableSpan(text, parent, key);
        // A second definition of an entry written some other way fails the check: the fallback takes over.
        if (span === undefined) return appendLines(text, lines, eol, true);
        const lastLineHasEol = span.end < text.length || text.endsWith('\n');
        return splice(text, span.start, span.end, lines.join(eol) + (lastLineHasEol ? eol : ''));
      },
      () => patch(text, withEntry(text, parent, key, value)),
    ];
  },
  removeCandidates(text, parent, key, dropEmptyParent) {
    const eol = detectEol(text);
    return [
      () => {
        const span = tableSpan(text, parent, key);
        if (span === undefined) throw new Error('entry is not a [table] block');
        return removeLines(text, span.start, span.end, eol, true);
      },
      () => {
        const doc = parseToml(text);
        const p = doc[parent];
        if (isTable(p)) {
          delete p[key];
          if (dropEmptyParent && Object.keys(p).length === 0) delete doc[parent];
        }
        return patch(text, doc);
      },
    ];
  },
  create(parent, key, value) {
    return appendLines('', blockLines(parent, key, value), '\n', true);
  },
  isEmpty(text) {
    return text.trim() === '';
  },
};
