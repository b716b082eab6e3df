/** This process's heap, as the nodes of a V8 heap snapshot (for tests of what objects stay alive). */

import { getHeapSnapshot } from 'node:v8';

export interface HeapNode {
  /** V8's node type: 'object', 'string', 'sliced string', 'closure'... */
  type: string;
  /** An object's constructor name; a string's text (cut by V8 after 1,024 characters). */
  name: string;
  selfSize: number;
}

/** Every node of a fresh snapshot that `keep` accepts (a snapshot collects garbage first). */
export async function heapNodes(keep: (node: HeapNode) => boolean): Promise<HeapNode[]> {
  let json = '';
  for await (const chunk of getHeapSnapshot()) json += chunk;
  const snap = JSON.parse(json) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const types = snap.snapshot.meta.node_types[0];
  const found: HeapNode[] = [];
  for (let i = 0; i < snap.nodes.length; i += width) {
    const node = { type: types[snap.nodes[i + typeAt]!]!, name: snap.strings[snap.nodes[i + nameAt]!]!, selfSize: snap.nodes[i + sizeAt]! };
    if (keep(node)) found.push(node);
  }
  return found;
}

/** How many objects of each of `names` (constructor names) the heap holds. */
export async function countObjects(names: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const node of await heapNodes((n) => n.type === 'object' && names.includes(n.name))) counts[node.name]!++;
  return counts;
}
