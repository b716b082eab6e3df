/** stderr logs: readable lines for a person at a terminal, one JSON object a line for pipes and journals. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { spawn } from '@lydell/node-pty';

import { stderrLogFormat } from '../../supervisor/log.js';
import { waitFor } from '../helpers/poll.js';
import { makeTestHome, shellHomeEnv } from '../helpers/testHome.js';
import { MAIN_JS, Tuicd } from '../helpers/tuicdProcess.js';

test('the format follows the terminal unless TUIC_LOG_FORMAT says otherwise', () => {
  assert.equal(stderrLogFormat({}, true), 'pretty');
  assert.equal(stderrLogFormat({}, false), 'json');
  assert.equal(stderrLogFormat({ TUIC_LOG_FORMAT: 'json' }, true), 'json');
  assert.equal(stderrLogFormat({ TUIC_LOG_FORMAT: 'pretty' }, false), 'pretty');
  assert.equal(stderrLogFormat({ TUIC_LOG_FORMAT: 'yaml' }, false), 'json', 'an unknown value falls back to the default');
});

test('piped stderr carries JSON lines', async () => {
  const tuicd = await Tuicd.start();
  try {
    await waitFor(() => tuicd.stderr.includes('socket listener bound'), 'the bind log line');
  } finally {
    await tuicd.stop();
  }
  const lines = tuicd.stderr.split('\n').filter((l) => l.length > 0);
  assert.ok(lines.length > 0);
  for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `not JSON: ${line}`);
  assert.ok(lines.some((l) => (JSON.parse(l) as { msg?: string }).msg?.includes('socket listener bound')));
});

test('stderr on a terminal carries readable lines with a level name, not JSON', async () => {
  const configDir = mkdtempSync(join(tmpdir(), 'tuicd-test-'));
  const home = makeTestHome();
  const term = spawn(process.execPath, [MAIN_JS, '--config-dir', configDir], {
    cols: 200,
    rows: 50,
    env: { ...process.env, ...shellHomeEnv(home), TUIC_CREDENTIAL_STORE: 'file', TUIC_LOG_LEVEL: 'info', TUIC_LOG_FORMAT: '' },
  });
  let output = '';
  term.onData((d) => (output += d));
  const exited = new Promise<void>((resolve) => term.onExit(() => resolve()));
  try {
    await waitFor(() => output.includes('socket listener bound') && output.includes('serving on unix socket'), 'the start line and a log line');
  } finally {
    term.kill('SIGINT');
    await exited;
    rmSync(configDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const line = plain.split(/\r?\n/).find((l) => l.includes('socket listener bound'));
  assert.ok(line !== undefined);
  assert.match(line, /INFO/);
  assert.doesNotMatch(line, /^\s*\{/, 'a JSON object on a terminal');
});
