// npm run docs: renders docs/http-api.md, docs/mcp-tools.md and docs/configuration.md from a live
// tuicd (built first by `npm run build`) and writes them; test/docs/docsFresh.test.ts fails while
// a checked-in page differs from what this would write.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const { DOCS_DIR, generateDocs } = await import('../dist/scripts/docs/generate.js');

const pages = await generateDocs();
mkdirSync(DOCS_DIR, { recursive: true });
for (const [name, text] of pages) {
  const path = join(DOCS_DIR, name);
  let before = null;
  try {
    before = readFileSync(path, 'utf8');
  } catch {
    // A page written for the first time.
  }
  if (before === text) {
    process.stdout.write(`docs/${name}: unchanged\n`);
    continue;
  }
  writeFileSync(path, text);
  process.stdout.write(`docs/${name}: ${before === null ? 'written' : 'updated'} (${text.split('\n').length} lines)\n`);
}
