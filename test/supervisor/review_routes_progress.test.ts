/**
 * GET /progress/list against a journal left by a crash: a torn last line (appendFile cut short) is
 * skipped on load, and the next report must still survive a restart rather than be glued onto it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { Tuicd } from '../helpers/tuicdProcess.js';

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function report(t: Tuicd, text: string): Promise<void> {
  const r = await t.socket(
    'POST',
    '/mcp',
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'progress', arguments: { type: 'done', text } } }),
    MCP_HEADERS,
  );
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json().result.isError ?? false, false, r.text);
}

async function listedTexts(t: Tuicd): Promise<string[]> {
  const r = await t.socket('GET', '/progress/list?limit=100');
  assert.equal(r.status, 200, r.text);
  return r.json<{ entries: { text: string }[] }>().entries.map((e) => e.text);
}

test('a report appended after a torn journal line is still listed after a restart', async () => {
  const configDir = mkdtempSync(join(tmpdir(), 'tuicd-review-progress-'));
  dirs.push(configDir);
  const journal = join(configDir, 'progress.jsonl');
  const before = { id: 'e1', at_ms: 1, kind: 'done', project: 'unknown', agent: 'a', text: 'before the crash' };
  // The crash cut the second append short: no closing brace, no newline.
  writeFileSync(journal, `${JSON.stringify(before)}\n{"id":"e2","at_ms":2,"kind":"do`, { mode: 0o600 });

  let t = await Tuicd.start({ configDir });
  try {
    assert.deepEqual(await listedTexts(t), ['before the crash'], 'the torn line is skipped');
    await report(t, 'after the crash');
    assert.deepEqual(await listedTexts(t), ['after the crash', 'before the crash']);
  } finally {
    await t.stop();
  }

  t = await Tuicd.start({ configDir });
  try {
    assert.deepEqual(await listedTexts(t), ['after the crash', 'before the crash'], `journal on disk:\n${readFileSync(journal, 'utf8')}`);
  } finally {
    await t.stop();
  }
});
