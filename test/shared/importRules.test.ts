/**
 * The import rules between the source folders, checked over the real tree's import statements
 * (static, dynamic, type-only, re-exports), not by convention:
 * - supervisor/ never imports workers/ (it talks to them over channels and names their entries by path);
 * - bridge/ imports neither supervisor/ nor workers/ (what it shares with them lives in shared/);
 * - shared/ is a leaf: it imports nothing outside shared/;
 * - supervisor/agents/ never imports supervisor/mcp/ (the MCP side implements the ports agents/ declares);
 * - no import cycle between supervisor/mcp and supervisor/agents, nor between supervisor/config and
 *   supervisor/http (a chain of imports from a file of one to a file of the other, and back);
 * - HTTP stays at the edge: only supervisor/http, supervisor/routes, supervisor/features and the
 *   composition root (supervisor/supervisor.ts) import supervisor/http/.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { describe, it } from 'node:test';

import { importSpecifiers } from '../helpers/importSpecifiers.js';

// From dist/test/shared/ back to the repository (tests run on the emitted JS; the rules read the .ts sources).
const ROOT = new URL('../../../', import.meta.url).pathname;
const SOURCE_DIRS = ['supervisor', 'workers', 'bridge', 'shared'];

/** Repository-relative source file → the repository-relative source files it imports. */
type ImportGraph = ReadonlyMap<string, readonly string[]>;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

/** A relative specifier as the source file it names (`./x.js` → `x.ts`), or null for a package or a non-source file. */
function resolveSpecifier(fromFile: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = posix.normalize(posix.join(posix.dirname(fromFile), spec));
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, `${base}/index.ts`];
  return candidates.find((c) => c.endsWith('.ts') && existsSync(join(ROOT, c))) ?? null;
}

/** The import graph of the source folders. */
function sourceGraph(): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const dir of SOURCE_DIRS) {
    for (const full of tsFiles(join(ROOT, dir))) {
      const file = relative(ROOT, full).split('\\').join('/');
      const targets = importSpecifiers(readFileSync(full, 'utf8'))
        .map((spec) => resolveSpecifier(file, spec))
        .filter((t): t is string => t !== null);
      graph.set(file, [...new Set(targets)]);
    }
  }
  return graph;
}

const inFolder = (file: string, folder: string): boolean => file.startsWith(folder.endsWith('/') ? folder : `${folder}/`);

/** `from → to` for every import of a file in `from` (minus `except`) of a file in `to`. */
function importsBetween(graph: ImportGraph, from: string, to: string, except: (file: string) => boolean = () => false): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    if (!inFolder(file, from) || except(file)) continue;
    for (const target of targets) if (inFolder(target, to)) found.push(`${file} → ${target}`);
  }
  return found;
}

/** `from → to` for every import of a file in `folder` of a file outside it. */
function importsLeaving(graph: ImportGraph, folder: string): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    if (!inFolder(file, folder)) continue;
    for (const target of targets) if (!inFolder(target, folder)) found.push(`${file} → ${target}`);
  }
  return found;
}

/** A chain of imports from some file of `from` to some file of `to` (the files on it), or null. */
function importChain(graph: ImportGraph, from: string, to: string): string[] | null {
  const previous = new Map<string, string | null>();
  const queue: string[] = [];
  for (const file of graph.keys()) {
    if (inFolder(file, from)) {
      previous.set(file, null);
      queue.push(file);
    }
  }
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (inFolder(file, to)) {
      const chain = [file];
      for (let p = previous.get(file); p != null; p = previous.get(p)) chain.unshift(p);
      return chain;
    }
    for (const next of graph.get(file) ?? []) {
      if (previous.has(next)) continue;
      previous.set(next, file);
      queue.push(next);
    }
  }
  return null;
}

/** Both ways' chains when `a` and `b` import each other (directly or through other files); null when they do not. */
function folderCycle(graph: ImportGraph, a: string, b: string): string | null {
  const there = importChain(graph, a, b);
  const back = importChain(graph, b, a);
  return there && back ? `${there.join(' → ')}\n  and back: ${back.join(' → ')}` : null;
}

/**
 * Files allowed to import supervisor/http/: the edge itself, the routes, the features, the
 * composition root, the process entry (it picks the engine), and MCP's Streamable HTTP transport
 * (the /mcp edge: JSON-RPC over HTTP requests and SSE streams).
 */
/** The MCP transport and its streams (GET /mcp's, and a POST's answer turned into one: clientExchanges). */
const HTTP_EDGE_FILES = new Set([
  'supervisor/supervisor.ts',
  'supervisor/main.ts',
  'supervisor/mcp/transport.ts',
  'supervisor/mcp/mcpStreams.ts',
  'supervisor/mcp/clientExchanges.ts',
]);
const HTTP_EDGE = (file: string): boolean =>
  inFolder(file, 'supervisor/http') || inFolder(file, 'supervisor/routes') || inFolder(file, 'supervisor/features') || HTTP_EDGE_FILES.has(file);

describe('import rules', () => {
  const graph = sourceGraph();

  it('reads the real tree: every import form, resolved to files', () => {
    // The folders the rules name exist, or a rule would pass vacuously after a rename.
    for (const folder of [
      'supervisor/agents',
      'supervisor/mcp',
      'supervisor/config',
      'supervisor/http',
      'supervisor/routes',
      'supervisor/features',
      ...SOURCE_DIRS,
    ])
      assert.ok(existsSync(join(ROOT, folder)), `the rules name ${folder}, which is not under ${ROOT}`);
    assert.ok(graph.size > 100, `expected the source tree under ${ROOT}, found ${graph.size} files`);
    // A static import, a type-only one, a re-export and a dynamic import the parser must each see.
    const edges = (file: string) => graph.get(file) ?? [];
    assert.ok(edges('supervisor/supervisor.ts').includes('supervisor/features/agents.ts'), 'static import');
    assert.ok(edges('supervisor/features/mcp.ts').includes('supervisor/features/agents.ts'), 'type-only import');
    assert.ok(edges('supervisor/events/eventBus.ts').includes('supervisor/events/subscriber.ts'), 're-export');
    assert.ok(edges('supervisor/main.ts').includes('supervisor/installBridge/command.ts'), 'dynamic import');
    assert.ok(edges('bridge/endpoint.ts').includes('shared/paths.ts'), 'across folders');
  });

  it('the checks find what they look for (a made-up graph breaking every rule)', () => {
    const bad: ImportGraph = new Map([
      ['supervisor/agents/a.ts', ['supervisor/sessions/s.ts']],
      ['supervisor/sessions/s.ts', ['supervisor/mcp/m.ts']],
      ['supervisor/mcp/m.ts', ['supervisor/agents/a.ts', 'workers/w.ts']],
      ['bridge/b.ts', ['supervisor/paths.ts']],
      ['shared/x.ts', ['supervisor/log.ts']],
      ['supervisor/repos/r.ts', ['supervisor/http/types.ts']],
    ]);
    assert.deepEqual(importsBetween(bad, 'supervisor', 'workers'), ['supervisor/mcp/m.ts → workers/w.ts']);
    assert.deepEqual(importsBetween(bad, 'bridge', 'supervisor'), ['bridge/b.ts → supervisor/paths.ts']);
    assert.deepEqual(importsLeaving(bad, 'shared'), ['shared/x.ts → supervisor/log.ts']);
    assert.equal(
      folderCycle(bad, 'supervisor/agents', 'supervisor/mcp'),
      'supervisor/agents/a.ts → supervisor/sessions/s.ts → supervisor/mcp/m.ts\n  and back: supervisor/mcp/m.ts → supervisor/agents/a.ts',
    );
    assert.deepEqual(importsBetween(bad, 'supervisor', 'supervisor/http', HTTP_EDGE), ['supervisor/repos/r.ts → supervisor/http/types.ts']);
    assert.equal(folderCycle(new Map([['supervisor/mcp/m.ts', ['supervisor/agents/a.ts']]]), 'supervisor/agents', 'supervisor/mcp'), null);
  });

  it('supervisor/ imports nothing from workers/', () => {
    assert.deepEqual(importsBetween(graph, 'supervisor', 'workers'), []);
  });

  it('bridge/ imports nothing from supervisor/ or workers/', () => {
    assert.deepEqual([...importsBetween(graph, 'bridge', 'supervisor'), ...importsBetween(graph, 'bridge', 'workers')], []);
  });

  it('shared/ is a leaf: it imports nothing outside shared/', () => {
    assert.deepEqual(importsLeaving(graph, 'shared'), []);
  });

  it('supervisor/agents/ imports nothing from supervisor/mcp/', () => {
    assert.deepEqual(importsBetween(graph, 'supervisor/agents', 'supervisor/mcp'), []);
  });

  for (const [a, b] of [
    ['supervisor/mcp', 'supervisor/agents'],
    ['supervisor/config', 'supervisor/http'],
  ] as const) {
    it(`no import cycle between ${a} and ${b}`, () => {
      const cycle = folderCycle(graph, a, b);
      assert.equal(cycle, null, `${a} and ${b} import each other:\n  ${cycle}`);
    });
  }

  it('only the HTTP edge imports supervisor/http/ (http, routes, features, the root, the entry, the MCP transport and its streams)', () => {
    const offenders = importsBetween(graph, 'supervisor', 'supervisor/http', HTTP_EDGE);
    const files = [...new Set(offenders.map((edge) => edge.split(' → ')[0]!))].sort();
    assert.deepEqual(files, [], `modules outside the HTTP edge import supervisor/http/:\n${offenders.map((o) => `  ${o}`).join('\n')}`);
  });
});
