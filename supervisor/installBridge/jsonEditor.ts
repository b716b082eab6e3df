/**
 * JSON and JSONC configs (Claude Code, Cursor, VS Code, Zed, opencode…). Microsoft's jsonc-parser
 * parses (comments and trailing commas allowed) and gives every node's offsets; the entry is then
 * spliced in as text in the file's own indentation, so comments, trailing commas and the layout of
 * every other key stay as they were. jsonc-parser's `modify` is the fallback edit: it reformats the
 * lines it touches (a neighbouring one-line entry becomes multi-line), hence not the first choice.
 */
import { applyEdits, createScanner, modify, parseTree, printParseErrorCode, SyntaxKind } from 'jsonc-parser';
import type { Node, ParseError } from 'jsonc-parser';

import { isTable, ParseRefusal, ShapeRefusal } from './editor.js';
import type { ConfigEditor, Doc } from './editor.js';
import { detectEol, indentAt, lineStart, splice, startsOwnLine } from './textEdit.js';
import type { Eol } from './textEdit.js';

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true };

/** The parsed root object node; an empty file counts as `{}` (editors leave touched files empty). */
function rootNode(text: string): Node | undefined {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, PARSE_OPTIONS);
  const first = errors[0];
  if (first !== undefined) {
    const line = text.slice(0, first.offset).split('\n').length;
    const col = first.offset - lineStart(text, first.offset) + 1;
    throw new ParseRefusal(`${printParseErrorCode(first.error)} at line ${line}, column ${col}`);
  }
  if (root === undefined) return undefined;
  if (root.type !== 'object') throw new ShapeRefusal('the top level is not an object');
  return root;
}

function toValue(node: Node): unknown {
  switch (node.type) {
    case 'object': {
      const out: Doc = {};
      // Last duplicate wins, as in JSON.parse.
      for (const prop of node.children ?? []) {
        const [k, v] = prop.children ?? [];
        if (k !== undefined && v !== undefined) out[String(k.value)] = toValue(v);
      }
      return out;
    }
    case 'array':
      return (node.children ?? []).map(toValue);
    default:
      return node.value;
  }
}

/** The last property named `key` of an object node (the one JSON.parse would keep). */
function findProp(obj: Node, key: string): Node | undefined {
  let found: Node | undefined;
  for (const prop of obj.children ?? []) if (prop.children?.[0]?.value === key) found = prop;
  return found;
}

const end = (n: Node): number => n.offset + n.length;

interface Layout {
  /** One indentation step, or null for a file written on one line (entries go in compact too). */
  unit: string | null;
  eol: Eol;
}

function layoutOf(text: string, root: Node | undefined): Layout {
  const eol = detectEol(text);
  const first = root?.children?.[0];
  if (first === undefined) {
    const m = /^\{[ \t]*\r?\n([ \t]+)"/m.exec(text) ?? /\n([ \t]+)"/.exec(text);
    return { unit: m?.[1] ?? '  ', eol };
  }
  if (!startsOwnLine(text, first.offset)) return { unit: null, eol };
  const unit = indentAt(text, first.offset);
  return { unit: unit === '' ? '  ' : unit, eol };
}

/** `value` as JSON text for a property whose line is indented by `indent`. */
function render(value: unknown, indent: string, layout: Layout): string {
  if (layout.unit === null) return JSON.stringify(value);
  return JSON.stringify(value, null, layout.unit)
    .split('\n')
    .join(layout.eol + indent);
}

function insertProperty(text: string, obj: Node, key: string, value: unknown, layout: Layout): string {
  const props = obj.children ?? [];
  const innerStart = obj.offset + 1;
  const innerEnd = end(obj) - 1;
  if (layout.unit === null) {
    const prop = `${JSON.stringify(key)}:${render(value, '', layout)}`;
    if (props.length > 0) return splice(text, end(props[props.length - 1]!), end(props[props.length - 1]!), `,${prop}`);
    return /^\s*$/.test(text.slice(innerStart, innerEnd)) ? splice(text, innerStart, innerEnd, prop) : splice(text, innerStart, innerStart, prop);
  }
  const objIndent = indentAt(text, obj.offset);
  const childIndent = props.length > 0 && startsOwnLine(text, props[0]!.offset) ? indentAt(text, props[0]!.offset) : objIndent + layout.unit;
  const prop = `${JSON.stringify(key)}: ${render(value, childIndent, layout)}`;
  if (props.length > 0) {
    // Right after the last value, before any trailing comma: removeProperty() takes exactly this back out.
    const at = end(props[props.length - 1]!);
    return splice(text, at, at, `,${layout.eol}${childIndent}${prop}`);
  }
  if (/^\s*$/.test(text.slice(innerStart, innerEnd))) {
    return splice(text, innerStart, innerEnd, `${layout.eol}${childIndent}${prop}${layout.eol}${objIndent}`);
  }
  // Only comments inside: keep them, after the entry.
  return splice(text, innerStart, innerStart, `${layout.eol}${childIndent}${prop}`);
}

/** Offset of the first comma token in [from, to), comments skipped. */
function commaBetween(text: string, from: number, to: number): number {
  const scanner = createScanner(text, true);
  scanner.setPosition(from);
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF && scanner.getTokenOffset() < to; kind = scanner.scan()) {
    if (kind === SyntaxKind.CommaToken) return scanner.getTokenOffset();
  }
  return -1;
}

function removeProperty(text: string, obj: Node, prop: Node): string {
  const props = obj.children ?? [];
  const i = props.indexOf(prop);
  if (props.length === 1) {
    const innerStart = obj.offset + 1;
    const innerEnd = end(obj) - 1;
    const blankBefore = /^\s*$/.test(text.slice(innerStart, prop.offset));
    if (blankBefore && /^\s*,?\s*$/.test(text.slice(end(prop), innerEnd))) return splice(text, innerStart, innerEnd);
    // Comments after it stay where they were: right after the brace.
    const comma = commaBetween(text, end(prop), innerEnd);
    return splice(text, blankBefore ? innerStart : prop.offset, comma === -1 ? end(prop) : comma + 1);
  }
  if (i === 0) return splice(text, prop.offset, props[1]!.offset);
  const prev = props[i - 1]!;
  if (/^\s*,\s*$/.test(text.slice(end(prev), prop.offset))) return splice(text, end(prev), end(prop));
  // Comments between the two: they stay; only the separating comma and the property's own line go.
  const comma = commaBetween(text, end(prev), prop.offset);
  let start = prop.offset;
  if (startsOwnLine(text, prop.offset)) {
    start = lineStart(text, prop.offset);
    if (start > 0) start -= text[start - 2] === '\r' ? 2 : 1;
  }
  const withoutProp = splice(text, start, end(prop));
  return comma === -1 ? withoutProp : splice(withoutProp, comma, comma + 1);
}

function objectAt(prop: Node | undefined): Node | undefined {
  const v = prop?.children?.[1];
  return v?.type === 'object' ? v : undefined;
}

function setTextually(text: string, parent: string, key: string, value: unknown): string {
  const root = rootNode(text);
  const layout = layoutOf(text, root);
  if (root === undefined) return createText(parent, key, value);
  const parentProp = findProp(root, parent);
  if (parentProp === undefined) return insertProperty(text, root, parent, { [key]: value }, layout);
  const obj = objectAt(parentProp);
  if (obj === undefined) throw new Error(`"${parent}" is not an object`);
  const entry = findProp(obj, key);
  if (entry === undefined) return insertProperty(text, obj, key, value, layout);
  const old = entry.children?.[1];
  if (old === undefined) throw new Error('entry without a value');
  return splice(text, old.offset, end(old), render(value, indentAt(text, entry.offset), layout));
}

function removeTextually(text: string, parent: string, key: string, dropEmptyParent: boolean): string {
  const root = rootNode(text);
  const obj = objectAt(root && findProp(root, parent));
  const entry = obj && findProp(obj, key);
  if (obj === undefined || entry === undefined) return text;
  const out = removeProperty(text, obj, entry);
  if (!dropEmptyParent) return out;
  const root2 = rootNode(out)!;
  const parentProp = findProp(root2, parent)!;
  return (objectAt(parentProp)?.children ?? []).length === 0 ? removeProperty(out, root2, parentProp) : out;
}

function createText(parent: string, key: string, value: unknown): string {
  return `${JSON.stringify({ [parent]: { [key]: value } }, null, 2)}\n`;
}

function formattingOptions(text: string): { insertSpaces: boolean; tabSize: number; eol: string } {
  const { unit, eol } = layoutOf(text, rootNode(text));
  return { insertSpaces: unit !== '\t', tabSize: unit === null || unit === '\t' ? 2 : unit.length, eol };
}

export const jsonEditor: ConfigEditor = {
  format: 'json',
  parse(text) {
    const root = rootNode(text);
    const doc = root === undefined ? {} : toValue(root);
    if (!isTable(doc)) throw new ShapeRefusal('the top level is not an object');
    return doc;
  },
  setCandidates(text, parent, key, value) {
    return [
      () => setTextually(text, parent, key, value),
      () => applyEdits(text, modify(text, [parent, key], value, { formattingOptions: formattingOptions(text) })),
    ];
  },
  removeCandidates(text, parent, key, dropEmptyParent) {
    return [
      () => removeTextually(text, parent, key, dropEmptyParent),
      () => {
        const opts = { formattingOptions: formattingOptions(text) };
        const out = applyEdits(text, modify(text, [parent, key], undefined, opts));
        const p = jsonEditor.parse(out)[parent];
        return dropEmptyParent && isTable(p) && Object.keys(p).length === 0 ? applyEdits(out, modify(out, [parent], undefined, opts)) : out;
      },
    ];
  },
  create: createText,
  isEmpty(text) {
    return /^\s*(\{\s*\})?\s*$/.test(text);
  },
};
