/**
 * The generated pages of docs/ are what `npm run docs` would write now: rendered the same way
 * (scripts/docs/generate.ts, from a live tuicd) and compared with the checked-in files. A stale
 * page fails naming the file and its first differing line; run `npm run docs` and commit.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

import { DOCS_DIR, firstDifference, GENERATED_DOCS, generateDocs } from '../../scripts/docs/generate.js';
import type { GeneratedDoc } from '../../scripts/docs/generate.js';

describe('docs/ generated pages are fresh', () => {
  let pages: Map<GeneratedDoc, string>;

  before(async () => {
    pages = await generateDocs();
  });

  for (const name of GENERATED_DOCS) {
    it(`docs/${name} is what npm run docs writes`, () => {
      const rendered = pages.get(name)!;
      let checkedIn: string;
      try {
        checkedIn = readFileSync(join(DOCS_DIR, name), 'utf8');
      } catch {
        assert.fail(`docs/${name} is missing: run \`npm run docs\` and commit it`);
      }
      const diff = firstDifference(checkedIn, rendered);
      if (diff) {
        assert.fail(
          `docs/${name} is stale at line ${diff.line}: run \`npm run docs\` and commit it.\n` +
            `  checked in: ${diff.expected.slice(0, 300)}\n  generated:  ${diff.actual.slice(0, 300)}`,
        );
      }
    });
  }
});
