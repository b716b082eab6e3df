/** Background work from /proc: real process trees, helpers by name, startup helpers by start time. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { hasMeaningfulDescendant } from '../../../supervisor/sessions/backgroundWork.js';

/** A stand-in agent: a shell that starts `children` (commands) in the background and waits. */
function agent(children: string[]): ChildProcess {
  // Its own process group, so the test ends the children with it.
  return spawn('/bin/sh', ['-c', `${children.map((c) => `${c} &`).join(' ')} wait`], { stdio: 'ignore', detached: true });
}

async function settled(): Promise<void> {
  await new Promise((r) => setTimeout(r, 300));
}

describe('background work', () => {
  it('a live child counts once past the startup window; none, when it is a named helper or the agent has none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tuicd-bgwork-'));
    symlinkSync('/bin/sleep', join(dir, 'tuic-bridge'));
    const worker = agent(['sleep 30']);
    const helper = agent([`${join(dir, 'tuic-bridge')} 30`]);
    const lonely = spawn('/bin/sleep', ['30'], { stdio: 'ignore', detached: true });
    try {
      await settled();
      assert.equal(hasMeaningfulDescendant(worker.pid!, 0), true, 'sleep started by the agent');
      assert.equal(hasMeaningfulDescendant(worker.pid!), false, 'started with the agent: a startup helper (MCP servers live like that)');
      assert.equal(hasMeaningfulDescendant(helper.pid!, 0), false, 'tuic-bridge is an integration helper');
      assert.equal(hasMeaningfulDescendant(lonely.pid!, 0), false, 'no children');
      assert.equal(hasMeaningfulDescendant(2 ** 22 + 7, 0), false, 'no such process');
    } finally {
      for (const p of [worker, helper, lonely]) process.kill(-p.pid!, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
