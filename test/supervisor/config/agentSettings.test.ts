/** agents.json per-agent overrides: absent, valid, malformed, edited while running; effective = global AND override. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { AgentSettings, effective } from '../../../supervisor/config/agentSettings.js';
import type { Logger } from '../../../supervisor/log.js';

describe('agents.json', () => {
  it('reads overrides per agent type, ignores wrong types, re-reads on change, survives bad JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tuicd-agents-json-'));
    const warnings: string[] = [];
    const log = { warn: (_o: unknown, msg: string) => warnings.push(msg) } as unknown as Logger;
    try {
      const path = join(dir, 'agents.json');
      const settings = new AgentSettings(path, log);
      assert.deepEqual(settings.forAgent('claude'), {}, 'no file');
      writeFileSync(path, JSON.stringify({ agents: { Claude: { progress_tracking: false, intent_tab_title: 'yes', suggest_followups: null }, codex: 3 } }));
      assert.deepEqual(settings.forAgent('claude'), { progress_tracking: false, suggest_followups: null });
      assert.deepEqual(settings.forAgent('codex'), {});
      assert.deepEqual(settings.forAgent(null), {});
      writeFileSync(path, '{ not json');
      utimesSync(path, new Date(), new Date(Date.now() + 5_000));
      assert.deepEqual(settings.forAgent('claude'), {});
      assert.equal(warnings.length, 1);
      writeFileSync(path, JSON.stringify({ agents: { claude: { intent_tab_title: false } } }));
      utimesSync(path, new Date(), new Date(Date.now() + 10_000));
      assert.deepEqual(settings.forAgent('claude'), { intent_tab_title: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('effective is the global flag AND the override (null or absent inherits)', () => {
    assert.equal(effective(true, undefined), true);
    assert.equal(effective(true, null), true);
    assert.equal(effective(true, false), false);
    assert.equal(effective(false, true), false);
  });
});
