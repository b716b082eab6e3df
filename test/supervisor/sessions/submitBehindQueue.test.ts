/**
 * A submit never goes ahead of commands waiting in the session's typed queue (POST
 * /sessions/:id/queue): both faces, the REST route and the `session` tool, refuse with
 * `queued_commands_pending` before writing a byte; once the queue is cleared the same submit is
 * typed. A fake Claude (scripted like the real one's screens) is busy when the command is queued,
 * then quits, leaving the command queued for an agent no longer there.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fakeAgent, removeFakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { until } from '../../helpers/poll.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';

const ESC = '\x1b';
const BUSY = `${ESC}[2J${ESC}[H⏺ On it.\r\n\r\n✢ Thinking… (1s)\r\n\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n`;
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('submit behind queued commands', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-submit-queue-');

  const stateOf = async (id: string): Promise<Record<string, unknown>> =>
    (await suite.t.socket('GET', '/sessions')).json().find((r: { session_id: string }) => r.session_id === id)?.state ?? {};

  async function mcpSubmit(sessionId: string, input: string): Promise<Record<string, unknown>> {
    const init = await suite.t.socket(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'queue-test', version: '1' } },
      }),
      MCP_HEADERS,
    );
    const call = await suite.t.socket(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'session', arguments: { action: 'submit', session_id: sessionId, input } },
      }),
      { ...MCP_HEADERS, 'Mcp-Session-Id': init.headers['mcp-session-id'] as string },
    );
    return JSON.parse(call.json().result.content[0].text);
  }

  it('REST and MCP submits are refused with queued_commands_pending while a command waits; typed once the queue is cleared', async () => {
    const agent = fakeAgent('claude', [{ out: BUSY }, { read: 'quit' }, { exit: 0 }]);
    const s = await suite.create();
    try {
      await suite.write(s.session_id, `${agent.command}\n`);
      await until(
        () => stateOf(s.session_id),
        (st) => st['agent_state'] === 'working',
        'the agent working',
      );
      const queued = await suite.t.socket('POST', `/sessions/${s.session_id}/queue`, JSON.stringify({ text: 'echo QUEUED_FIRST' }));
      assert.deepEqual([queued.json().accepted, queued.json().queued], [true, true], queued.text);

      // The agent quits: the shell is idle again, the command still waits (it was for the agent).
      await suite.write(s.session_id, 'quit\r');
      await until(
        () => stateOf(s.session_id),
        (st) => st['agent_type'] === undefined && st['shell_state'] === 'idle',
        'back at the shell prompt',
      );
      assert.equal((await stateOf(s.session_id))['queued_commands'], 1);

      const rest = await suite.t.socket('POST', `/sessions/${s.session_id}/submit`, JSON.stringify({ input: 'echo TYPED_AHEAD' }));
      assert.equal(rest.status, 409, rest.text);
      assert.deepEqual([rest.json().reason, rest.json().write_state, rest.json().retry_safe], ['queued_commands_pending', 'not_started', true]);
      const mcp = await mcpSubmit(s.session_id, 'echo TYPED_AHEAD');
      assert.deepEqual([mcp['reason'], mcp['write_state'], mcp['retry_safe']], ['queued_commands_pending', 'not_started', true]);
      const raw = (await suite.t.socket('GET', `/sessions/${s.session_id}/raw-ring`)).body.toString('utf8');
      assert.ok(!raw.includes('TYPED_AHEAD'), 'nothing was typed');

      assert.equal((await suite.t.socket('DELETE', `/sessions/${s.session_id}/queue`)).text, '1');
      const after = await until(
        () => suite.t.socket('POST', `/sessions/${s.session_id}/submit`, JSON.stringify({ input: 'echo NOW_TYPED' })),
        (a) => a.status !== 409,
        'the submit taken once the queue is empty',
      );
      assert.equal(after.status, 200, after.text);
      assert.equal(after.json().write_state, 'complete');
    } finally {
      removeFakeAgent(agent);
    }
  });
});
