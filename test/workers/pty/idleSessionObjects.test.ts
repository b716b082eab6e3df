/**
 * What an idle session holds (issue 29, memory per idle session): parts a session may never use
 * are made on first use. A session that printed its prompt and waits has no screen model (made by
 * the first screen read) and no input queue (made by the first keystroke).
 */

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test } from 'node:test';

import { PtyService } from '../../../workers/pty/ptyService.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { countObjects } from '../../helpers/heapSnapshot.js';
import { shellHomeEnv } from '../../helpers/testHome.js';

const SESSIONS = 3;
const LAZY = ['ScreenModel', 'InputQueue'] as const;

test(`${SESSIONS} sessions at a prompt hold no screen model and no input queue; a screen read and a keystroke make one each`, async () => {
  const prompted = new Set<string>();
  let allPrompted: () => void = () => {};
  const ready = new Promise<void>((resolve) => (allPrompted = resolve));
  const service: PtyService = new PtyService(
    {
      emit: (event, data) => {
        if (event !== 'data') return;
        prompted.add((data as { session_id: string }).session_id);
        if (prompted.size === SESSIONS) allPrompted();
      },
    },
    { createTextLog: () => new TextPipeline() },
  );
  try {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `idle-${i}`);
    for (const id of ids) {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...shellHomeEnv() };
      service.spawn({ session_id: id, shell: '/bin/sh', args: ['-c', `printf '$ '; exec cat`], cwd: tmpdir(), env, rows: 24, cols: 80 });
    }
    await ready;
    assert.deepEqual(await countObjects(LAZY), { ScreenModel: 0, InputQueue: 0 });

    const screen = service.readScreen({ session_id: ids[0]! });
    assert.equal(screen.rows[0], '$');
    service.input(ids[1]!, Buffer.from('typed\n'), undefined);
    service.resize({ session_id: ids[2]!, rows: 30, cols: 100 });
    assert.deepEqual(await countObjects(LAZY), { ScreenModel: 1, InputQueue: 1 });
    // A screen made after a resize has the new size.
    assert.equal(service.readScreen({ session_id: ids[2]! }).rows_count, 30);
  } finally {
    await service.shutdown(2_000);
  }
});
