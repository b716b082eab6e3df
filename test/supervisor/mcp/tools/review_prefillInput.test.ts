// session action=input, text + special_key=enter into a prefill-only agent (Codex, OpenCode): MCP
// frames it — Ctrl-U, bracketed paste for multi-line text, the 50 ms gap, then CR — instead of the
// raw pair that such a composer takes as one paste (Enter swallowed as a newline). The agent here
// is a raw-mode recorder run as `codex` (a symlink to node, so the foreground process is named
// codex, as the real one is).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { waitFor } from '../../../helpers/poll.js';
import { foregroundOf } from '../../../../supervisor/sessions/foreground.js';
import { call, idleShell, startHarness } from './sessionHarness.js';
import type { Harness } from './sessionHarness.js';

/** Puts the terminal in raw mode, turns bracketed paste on (as Codex does) and appends every stdin chunk, hex, one per line. */
const RECORDER = `
const fs = require('node:fs');
const out = process.argv[2];
process.stdin.setRawMode(true);
process.stdin.on('data', (b) => fs.appendFileSync(out, b.toString('hex') + '\\n'));
process.stdout.write('\\x1b[?2004hready> ');
`;

describe('session input into a prefill-only agent', () => {
  let h: Harness;
  before(() => {
    h = startHarness();
  });
  after(() => h.stop());

  /** Starts the recorder as `codex` in a fresh shell; returns the session id and the recording path. */
  async function startAgent(name: string): Promise<{ id: string; recording: string }> {
    const id = await idleShell(h);
    const recording = join(h.work, `${name}.hex`);
    if (!existsSync(join(h.work, 'codex'))) {
      symlinkSync(process.execPath, join(h.work, 'codex'));
      writeFileSync(join(h.work, 'recorder.cjs'), RECORDER);
    }
    const r = await call(h.session, { action: 'submit', session_id: id, input: `./codex recorder.cjs ${recording}` });
    assert.equal(r.submitted, true, JSON.stringify(r));
    const pid = h.sessions.get(id).pid;
    await waitFor(() => foregroundOf(pid)?.name === 'codex', 'codex holds the terminal');
    await waitFor(async () => (await h.sessions.readScreen(id)).rows.some((row) => row.includes('ready>')), 'the recorder is in raw mode');
    return { id, recording };
  }

  function recorded(path: string): string {
    if (!existsSync(path)) return '';
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((hex) => Buffer.from(hex, 'hex').toString('utf8'))
      .join('');
  }

  it('multi-line text + enter: Ctrl-U, one bracketed paste, then CR', async () => {
    const { id, recording } = await startAgent('multi');
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id, input: 'line one\nline two', special_key: 'enter' }), { ok: true });
    await waitFor(() => recorded(recording).endsWith('\r'), 'the CR reached the agent');
    assert.equal(recorded(recording), '\x15\x1b[200~line one\nline two\x1b[201~\r');
  });

  it('single-line text + enter: Ctrl-U, the text, then CR (no paste frame)', async () => {
    const { id, recording } = await startAgent('single');
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id, input: 'fix the tests', special_key: 'enter' }), { ok: true });
    await waitFor(() => recorded(recording).endsWith('\r'), 'the CR reached the agent');
    assert.equal(recorded(recording), '\x15fix the tests\r');
  });

  it('other pairs keep raw semantics: text + tab is written as it is', async () => {
    const { id, recording } = await startAgent('raw');
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id, input: 'ab', special_key: 'tab' }), { ok: true });
    await waitFor(() => recorded(recording).endsWith('\t'), 'the tab reached the agent');
    assert.equal(recorded(recording), 'ab\t');
  });
});
