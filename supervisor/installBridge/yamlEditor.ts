/**
 * YAML configs (goose): the entry is an item of the `extensions` mapping. The `yaml` package's
 * Document API parses and locates nodes (with source ranges) and renders the entry; the entry's lines
 * are then inserted after the mapping's last item (or replaced where they stand), so every other line,
 * comment and quote style keeps its bytes. Document.toString() is the fallback edit: it keeps
 * comments but re-renders the whole file (indentation, spacing before comments), hence not the first choice.
 */
import { isMap, isScalar, parseDocument, stringify } from 'yaml';
import type { Document, Pair, YAMLMap } from 'yaml';

import { isTable, ParseRefusal, ShapeRefusal } from './editor.js';
import type { ConfigEditor, Doc } from './editor.js';
import { appendLines, detectEol, insertLines, lineStart, nextLineStart, removeLines, splice } from './textEdit.js';

const TO_STRING = { lineWidth: 0 };

function load(text: string): Document {
  const doc = parseDocument(text);
  const first = doc.errors[0];
  if (first !== undefined) throw new ParseRefusal(first.message.split('\n')[0]!);
  return doc;
}

function parseYaml(text: string): Doc {
  const value: unknown = load(text).toJS();
  if (value === null || value === undefined) return {};
  if (!isTable(value)) throw new ShapeRefusal('the top level is not a mapping');
  return value;
}

const col = (text: string, pos: number): number => pos - lineStart(text, pos);

function blockRoot(doc: Document): YAMLMap | null {
  const root = doc.contents;
  if (root === null) return null;
  if (!isMap(root) || root.flow) throw new Error('the top level is not a block mapping');
  return root;
}

function findPair(map: YAMLMap | null, key: string): Pair | undefined {
  return map?.items.find((p) => isScalar(p.key) && p.key.value === key);
}

function keyStart(pair: Pair): number {
  if (!isScalar(pair.key) || !pair.key.range) throw new Error('key without a source position');
  return pair.key.range[0];
}

/** Where the item's last line ends (a scalar value's range stops before its trailing comment). */
function pairEnd(text: string, pair: Pair): number {
  const v = pair.value as { range?: [number, number, number] | null } | null;
  const endPos = v?.range?.[1] ?? (isScalar(pair.key) ? pair.key.range?.[1] : undefined);
  if (endPos === undefined) throw new Error('item without a source position');
  return nextLineStart(text, endPos);
}

function blockMapValue(pair: Pair): YAMLMap {
  if (!isMap(pair.value) || pair.value.flow || pair.value.items.length === 0) throw new Error('not a non-empty block mapping');
  return pair.value;
}

/** The document's indentation step: how far the first nested block item sits from its parent key. */
function indentStep(text: string, root: YAMLMap | null): number {
  for (const pair of root?.items ?? []) {
    const inner = isMap(pair.value) && !pair.value.flow ? pair.value.items[0] : undefined;
    if (inner !== undefined) {
      const step = col(text, keyStart(inner)) - col(text, keyStart(pair));
      if (step > 0) return step;
    }
  }
  return 2;
}

function render(obj: Doc, indent: number, prefix: string): string[] {
  return stringify(obj, { indent, ...TO_STRING })
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => prefix + l);
}

function setTextually(text: string, parent: string, key: string, value: unknown): string {
  const eol = detectEol(text);
  const root = blockRoot(load(text));
  const parentPair = findPair(root, parent);
  const step = indentStep(text, root);
  if (parentPair === undefined) {
    const rootCol = root?.items[0] ? col(text, keyStart(root.items[0])) : 0;
    return appendLines(text, render({ [parent]: { [key]: value } }, step, ' '.repeat(rootCol)), eol, false);
  }
  const map = blockMapValue(parentPair);
  const itemCol = col(text, keyStart(map.items[0]!));
  const unit = itemCol - col(text, keyStart(parentPair));
  const lines = render({ [key]: value }, unit > 0 ? unit : step, ' '.repeat(itemCol));
  const existing = findPair(map, key);
  if (existing === undefined) return insertLines(text, pairEnd(text, map.items[map.items.length - 1]!), lines, eol);
  const start = lineStart(text, keyStart(existing));
  const stop = pairEnd(text, existing);
  const lastLineHasEol = stop < text.length || text.endsWith('\n');
  return splice(text, start, stop, lines.join(eol) + (lastLineHasEol ? eol : ''));
}

function removeTextually(text: string, parent: string, key: string, dropEmptyParent: boolean): string {
  const eol = detectEol(text);
  const parentPair = findPair(blockRoot(load(text)), parent);
  if (parentPair === undefined) return text;
  const map = blockMapValue(parentPair);
  const entry = findPair(map, key);
  if (entry === undefined) return text;
  const stop = pairEnd(text, entry);
  if (map.items.length > 1) return removeLines(text, lineStart(text, keyStart(entry)), stop, eol, false);
  if (dropEmptyParent) return removeLines(text, lineStart(text, keyStart(parentPair)), stop, eol, false);
  // The parent stays, as an empty mapping rather than a null one.
  const colon = text.indexOf(':', (parentPair.key as { range: [number, number, number] }).range[1]);
  return splice(removeLines(text, lineStart(text, keyStart(entry)), stop, eol, false), colon + 1, colon + 1, ' {}');
}

export const yamlEditor: ConfigEditor = {
  format: 'yaml',
  parse: parseYaml,
  setCandidates(text, parent, key, value) {
    return [
      () => setTextually(text, parent, key, value),
      () => {
        const doc = load(text);
        if (doc.contents === null) doc.contents = doc.createNode({});
        const p: unknown = doc.get(parent);
        if (p === null || p === undefined) doc.set(parent, doc.createNode({ [key]: value }));
        else doc.setIn([parent, key], doc.createNode(value));
        return doc.toString(TO_STRING);
      },
    ];
  },
  removeCandidates(text, parent, key, dropEmptyParent) {
    return [
      () => removeTextually(text, parent, key, dropEmptyParent),
      () => {
        const doc = load(text);
        doc.deleteIn([parent, key]);
        const p: unknown = doc.get(parent);
        if (dropEmptyParent && isMap(p) && p.items.length === 0) doc.delete(parent);
        return doc.toString(TO_STRING);
      },
    ];
  },
  create(parent, key, value) {
    return stringify({ [parent]: { [key]: value } }, { indent: 2, ...TO_STRING });
  },
  isEmpty(text) {
    return text.trim() === '';
  },
};
