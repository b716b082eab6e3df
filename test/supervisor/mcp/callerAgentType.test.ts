/** Which agent an MCP caller is: the bound PTY's agent first, else its clientInfo.name, matched by the agent's name as a word. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { agentTypeOfClient, callerAgentType } from '../../../supervisor/mcp/callerAgentType.js';

describe('callerAgentType', () => {
  it('names Amp only by its own name, not by a name that contains "amp"', () => {
    for (const name of ['amp', 'Amp', 'amp-cli', 'Amp Code', 'ampcode']) assert.equal(agentTypeOfClient(name), 'amp', name);
    for (const name of ['example', 'sampler', 'my-example-client', 'champion']) assert.equal(agentTypeOfClient(name), null, name);
  });

  it('the bound PTY’s agent wins over the client name; the bridge speaks for Claude', () => {
    assert.equal(callerAgentType('codex', 'claude-code'), 'codex');
    assert.equal(callerAgentType(null, 'tuic-bridge'), 'claude');
    assert.equal(callerAgentType(undefined, null), null);
  });
});
