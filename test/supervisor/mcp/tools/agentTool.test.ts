/** The agent tool's loopback rule (anti-hijack): messaging and spawn refuse a remote caller before touching anything. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { createAgentTool, type AgentToolDeps } from '../../../../supervisor/mcp/tools/agent.js';
import { call, REMOTE } from './sessionHarness.js';

describe('agent tool, remote callers', () => {
  // Nothing usable behind the tool: a remote call that got past the check would call into these and throw.
  const untouchable: object = new Proxy(function unusable() {}, {
    get: () => untouchable,
    apply: () => {
      throw new Error('a refused call reached its dependencies');
    },
  });
  const tool = createAgentTool(untouchable as unknown as AgentToolDeps);

  it('register, list_peers, send and inbox are local only; spawn has its own message', async () => {
    for (const action of ['register', 'list_peers', 'send', 'inbox']) {
      assert.deepEqual(
        await call(tool, { action, to: 'x', message: 'y' }, REMOTE),
        { error: 'Agent messaging is restricted to localhost connections', code: 'forbidden' },
        action,
      );
    }
    assert.deepEqual(await call(tool, { action: 'spawn', prompt: 'x' }, REMOTE), {
      error: 'Agent spawning is restricted to localhost connections',
      code: 'forbidden',
    });
  });
});
