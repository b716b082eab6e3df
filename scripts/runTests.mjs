// Node 20's `node --test` does not expand globs: collect the compiled test files ourselves.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../dist/test/', import.meta.url).pathname;
const only = process.argv.slice(2);

function collect(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) { if (name !== 'fixtures') found.push(...collect(full)); }
    else if (name.endsWith('.test.js')) found.push(full);
  }
  return found;
}

const files = collect(root).filter((f) => only.length === 0 || only.some((o) => f.includes(o))).sort();
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
