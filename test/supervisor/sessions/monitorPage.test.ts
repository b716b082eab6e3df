// /process/monitor in a real headless Chromium over the authenticated TCP listener: the page must
// load with no external assets and fill its table from /process/stats.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';

import { CHROMIUM, QUIET_CHROMIUM_FLAGS } from '../../helpers/phoneBrowser.js';
import { browserEnv } from '../../helpers/testHome.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const run = promisify(execFile);
const TOKEN = 'monitor-test-token-5f0c2a9e';

describe('process monitor page in headless Chromium', { skip: CHROMIUM ? false : 'chromium not installed (apt-get install -y chromium; .ci/run does)' }, () => {
  let t: Tuicd;
  // Everything Chromium writes goes under one temp dir: the profile (--user-data-dir) and, through
  // HOME and the XDG dirs, what it creates regardless (~/.config/chromium, ~/.cache/dconf, ~/.pki).
  const scratch = mkdtempSync(join(tmpdir(), 'tuicd-chromium-'));
  const profile = join(scratch, 'profile');
  before(async () => {
    t = await Tuicd.start({
      env: { SHELL: '/bin/sh' },
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: 'u', session_token: TOKEN } } },
    });
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh' }));
    assert.equal(created.status, 201);
  });
  after(async () => {
    await t.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('renders live rows for tuicd, the pty host and the session', async () => {
    // ?token= logs the page in (cookie); its own fetch('stats') then rides on that cookie.
    const url = `http://127.0.0.1:${t.tcpPort}/process/monitor?token=${TOKEN}`;
    const { stdout } = await run(
      CHROMIUM!,
      ['--headless', ...QUIET_CHROMIUM_FLAGS, `--user-data-dir=${profile}`, '--virtual-time-budget=5000', '--dump-dom', url],
      { timeout: 60_000, maxBuffer: 8 * 1024 * 1024, env: browserEnv(scratch) },
    );
    assert.match(stdout, /<tr class="tuicd">/, 'a tuicd row');
    assert.match(stdout, /<tr class="pty-host">/, 'a pty host row');
    assert.match(stdout, /<tr class="session">/, 'a session row');
    assert.match(stdout, /updated .* rows/, 'the status line says it refreshed');
  });
});
