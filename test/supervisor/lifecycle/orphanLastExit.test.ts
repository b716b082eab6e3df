/**
 * A pty host left without a supervisor whose last session exits: it notes the exit for the next
 * tuicd (which closes the session with reason `exit`) and exits itself, rather than take the
 * session's end with it unsaid. A real tuicd, a real orphaned host, a real exit.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { isHostOf } from '../../../supervisor/hosts/ptyHostState.js';
import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { orphanedCounter } from './keepHelpers.js';

const ENV = { TUIC_CREDENTIAL_STORE: 'file' };

test("an orphaned pty host's last session exiting is noted for the next tuicd, and the host exits", { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-lastexit-'));
  const run = await orphanedCounter(t, dir, ENV);
  const { session: s, host } = run;
  const statePath = join(dir, 'pty-host.json');

  process.kill(-s.pid, 'SIGKILL');
  await waitFor(() => !isHostOf(host, statePath), 'the orphaned host to exit after its last session', 10_000);
  const notePath = join(dir, 'pty-host.ended.json');
  assert.ok(existsSync(notePath), 'the host left a note of the exit');
  const note = JSON.parse(readFileSync(notePath, 'utf8')) as { reason: string; sessions: Array<{ session_id: string }> };
  assert.equal(note.reason, 'exit');
  assert.deepEqual(
    note.sessions.map((x) => x.session_id),
    [s.session_id],
  );
  assert.match(readFileSync(join(dir, 'logs', 'pty-host.log'), 'utf8'), /no supervisor and no live session left; exiting/);

  // The next tuicd reads the note once and closes the session with that reason.
  run.tuicd = await Tuicd.start({ configDir: dir, env: ENV });
  await run.tuicd.waitForStderr(/"reason":"exit","sessions":1,.*pty host ended its sessions: every session exited while no supervisor was attached/);
  assert.equal(existsSync(notePath), false, 'the note is taken');
  assert.deepEqual((await run.tuicd.socket('GET', '/sessions')).json(), []);
});
