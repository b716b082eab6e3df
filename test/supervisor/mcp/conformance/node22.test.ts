// The third-party MCP clients need Node 22; scripts/ensureNode.mjs provides it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

import { node22 } from '../../../helpers/node22.js';

test('the Node 22 binary the Inspector and conformance suite run under is installed and is Node 22', () => {
  const version = execFileSync(node22(), ['--version'], { encoding: 'utf8' }).trim();
  assert.match(version, /^v22\./);
});
