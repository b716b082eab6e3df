/**
 * agents.json overrides follow the agent running in the caller's own terminal: an MCP client bound to
 * a PTY (x-tuic-session) where a (fake, scripted) Codex runs is Codex, whatever its clientInfo.name
 * says, so Codex's `progress_tracking: false` refuses its progress report and drops its instructions'
 * Progress section; the same client unbound is not refused.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { fakeAgent, removeFakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { until } from '../../helpers/poll.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('agents.json overrides for a bound caller', { timeout: 60_000 }, () => {
  const suite = sessionSuite('tuicd-agent-overrides-bound-');

  async function connect(headers: Record<string, string> = {}): Promise<{ instructions: string; progress: () => Promise<{ isError: boolean; text: string }> }> {
    const init = await suite.t.socket(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'generic-client', version: '1' } },
      }),
      { ...MCP_HEADERS, ...headers },
    );
    const id = init.headers['mcp-session-id'] as string;
    const progress = async () => {
      const r = await suite.t.socket(
        'POST',
        '/mcp',
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'progress', arguments: { type: 'done', text: 'wrote the parser' } } }),
        { ...MCP_HEADERS, 'Mcp-Session-Id': id },
      );
      const result = r.json().result;
      return { isError: result.isError === true, text: result.content[0].text as string };
    };
    return { instructions: init.json().result.instructions as string, progress };
  }

  it("a client bound to a terminal running Codex gets Codex's settings", async () => {
    writeFileSync(join(suite.t.configDir, 'agents.json'), JSON.stringify({ agents: { codex: { progress_tracking: false } } }));
    const agent = fakeAgent('codex', [{ out: '› Ready\r\n' }, { read: 'quit' }, { exit: 0 }]);
    const s = await suite.create();
    try {
      await suite.write(s.session_id, `${agent.command}\n`);
      await until(
        async () => (await suite.t.socket('GET', '/sessions')).json().find((r: { session_id: string }) => r.session_id === s.session_id)?.state?.agent_type,
        (t) => t === 'codex',
        'codex detected in the terminal',
      );
      const bound = await connect({ 'x-tuic-session': s.tuic_session });
      assert.doesNotMatch(bound.instructions, /## Progress/);
      const refused = await bound.progress();
      assert.equal(refused.isError, true);
      assert.match(JSON.parse(refused.text).error, /^progress_tracking_disabled: Progress collection is off for this agent/);

      const unbound = await connect();
      assert.match(unbound.instructions, /## Progress — mandatory/);
      assert.equal((await unbound.progress()).isError, false);
      await suite.write(s.session_id, 'quit\r');
    } finally {
      removeFakeAgent(agent);
    }
  });
});
