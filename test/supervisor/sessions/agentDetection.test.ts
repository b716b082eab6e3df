/**
 * Agent detection: the classification rules, and end to end a scripted fake agent
 * (test/fixtures/fakeAgent, run under the name `claude`/`codex` in a real PTY, as a user would start
 * it from the session's shell) showing up as agent_type with its agent_state in GET /sessions,
 * session list/status, session-state-changed events and debug agent_detection, and going away
 * when it exits back to the shell.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { classifyProgram, parseAgentType } from '../../../supervisor/sessions/agentDetection.js';
import { fakeAgent, removeFakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';

describe('agent classification', () => {
  it('names, cursor-agent, shells, Claude native installs, interpreter scripts, unknowns', () => {
    assert.deepEqual(classifyProgram('claude'), { kind: 'agent', type: 'claude' });
    assert.deepEqual(classifyProgram('Codex'), { kind: 'agent', type: 'codex' });
    assert.deepEqual(classifyProgram('cursor-agent'), { kind: 'agent', type: 'cursor' });
    for (const shell of ['bash', '-bash', 'zsh', 'fish', 'sh', 'dash', 'pwsh', 'nu']) assert.deepEqual(classifyProgram(shell), { kind: 'shell' }, shell);
    assert.deepEqual(classifyProgram('2.1.3', ['/home/u/.local/share/claude/versions/2.1.3']), { kind: 'agent', type: 'claude' });
    assert.deepEqual(classifyProgram('node', ['/usr/bin/node', '/usr/lib/node_modules/@openai/codex/bin/codex']), { kind: 'agent', type: 'codex' });
    assert.deepEqual(classifyProgram('vim', ['/usr/bin/vim']), { kind: 'unknown' });
    assert.deepEqual(classifyProgram('2.1.3', ['/opt/versions/2.1.3']), { kind: 'unknown' }, 'versions/ alone is not Claude');
    assert.equal(parseAgentType('cursor'), 'cursor');
    assert.equal(parseAgentType('cursor-agent'), null, 'spawn requests name the type');
    assert.equal(parseAgentType('emacs'), null);
  });
});

describe('agent detection end to end', { timeout: 90_000 }, () => {
  const suite = sessionSuite('tuicd-agent-detect-');

  async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    for (let i = 0; i < 200; i++) {
      const v = await probe();
      if (v !== undefined) return v;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /** tools/call over the socket; the tool's JSON result. */
  async function tool(name: string, args: Record<string, unknown>): Promise<any> {
    const answer = await suite.t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }), {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    });
    const text = answer.json().result?.content?.[0]?.text;
    assert.ok(typeof text === 'string', answer.text);
    return JSON.parse(text);
  }

  const listed = async (id: string) =>
    ((await suite.t.socket('GET', '/sessions')).json() as Array<{ session_id: string; state: Record<string, unknown> }>).find((r) => r.session_id === id)!;

  it('a fake claude started from the shell: agent_type claude, working then idle; gone once it exits to the shell', async () => {
    const s = await suite.create();
    const agent = fakeAgent('claude', [{ out: '✢ Reading… (1s)\r\n' }, { sleep: 300 }, { out: '\x1b[1A\x1b[2KDone.\r\n> ' }, { read: 'q' }, { exit: 0 }]);
    try {
      assert.equal((await listed(s.session_id)).state['agent_type'], undefined, 'a bare shell has no agent');
      await suite.write(s.session_id, `${agent.command}\n`);
      const working = await until('agent_type claude', async () => {
        const st = (await listed(s.session_id)).state;
        return st['agent_type'] === 'claude' ? st : undefined;
      });
      // starting until the first busy/idle observation, then working or idle.
      assert.ok(['starting', 'working', 'idle'].includes(String(working['agent_state'])), JSON.stringify(working));
      await until('agent_state idle', async () => ((await listed(s.session_id)).state['agent_state'] === 'idle' ? true : undefined));

      const status = await tool('session', { action: 'status', session_id: s.session_id });
      assert.equal(status.agent_type, 'claude');
      assert.equal(status.agent_state, 'idle');

      // debug is off by default (disabled_native_tools): turn it on for this check.
      assert.equal((await suite.t.socket('PUT', '/config', JSON.stringify({ disabled_native_tools: [] }))).status, 200);
      const seen = (await tool('debug', { action: 'agent_detection', session_id: s.session_id })).sessions[0];
      assert.equal(seen.agent_type, 'claude');
      assert.equal(seen.source, 'foreground');
      assert.equal(seen.foreground.classification, 'agent');

      await suite.sse.waitFor(
        (e) => e.event === 'session-state-changed' && JSON.parse(e.data).session_id === s.session_id && JSON.parse(e.data).state.agent_type === 'claude',
      );

      // The user quits the agent: the shell's prompt comes back and the agent is gone.
      await suite.write(s.session_id, 'q');
      await until('agent_type gone', async () => ((await listed(s.session_id)).state['agent_type'] === undefined ? true : undefined));
      assert.equal((await listed(s.session_id)).state['agent_state'], undefined);
    } finally {
      removeFakeAgent(agent);
    }
  });

  it('created as agent_type codex: session-created says so, an unknown foreground keeps it, exit makes it exited', async () => {
    const s = await suite.create({ agent_type: 'codex', shell: '/bin/sleep', args: ['1'] });
    const created = await suite.sse.waitFor((e) => e.event === 'session-created' && JSON.parse(e.data).session_id === s.session_id);
    assert.equal(JSON.parse(created.data).agent_type, 'codex');
    // An exited session leaves GET /sessions; session status still reads its tombstone.
    const status = await until('exited', async () => {
      const st = await tool('session', { action: 'status', session_id: s.session_id });
      return st.agent_state === 'exited' ? st : undefined;
    });
    assert.equal(status.agent_type, 'codex');
    assert.equal(status.exit_code, 0);
    const bad = await suite.t.socket('POST', '/sessions', JSON.stringify({ agent_type: 'emacs' }));
    assert.equal(bad.status, 400);
    assert.match(bad.json().error, /agent_type must be one of/);
  });
});
