/**
 * Agent state end to end: the scripted fake agent (test/fixtures/fakeAgent, a stand-in for a paid
 * agent, run under the agent's name) in a real PTY of a real tuicd. What its output says reaches
 * GET /sessions, session status, submit, session-state-changed, pty-parsed, raw-mode `parsed` frames,
 * log-mode `state` frames and the progress journal. Real time: the silence rules take seconds here
 * (the virtual-clock replays in test/workers/pty/agentParser cover their edges).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { fakeAgent, removeFakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';
import { WsViewer } from '../../helpers/wsViewer.js';

const ESC = '\x1b';
const CLAUDE_BOX = '\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n';

describe('agent state end to end', { timeout: 150_000 }, () => {
  const suite = sessionSuite('tuicd-agent-state-');

  /** Polls `probe`; a timeout names what it waited for and `lastSeen()`, so a failure says what happened instead. */
  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000, lastSeen?: () => unknown): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}${lastSeen ? `; last saw ${JSON.stringify(lastSeen())}` : ''}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function tool(name: string, args: Record<string, unknown>): Promise<any> {
    const answer = await suite.t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }), {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    });
    const text = answer.json().result?.content?.[0]?.text;
    assert.ok(typeof text === 'string', answer.text);
    return JSON.parse(text);
  }

  /** The session's SessionState from GET /sessions ({} once it left the list). */
  const state = async (id: string): Promise<Record<string, any>> =>
    ((await suite.t.socket('GET', '/sessions')).json() as Array<{ session_id: string; state: Record<string, any> }>).find((r) => r.session_id === id)?.state ??
    {};
  const stateWhere = (id: string, what: string, pred: (s: Record<string, any>) => boolean, timeoutMs?: number) => {
    let last: Record<string, any> | undefined;
    return until(
      what,
      async () => {
        last = await state(id);
        return pred(last) ? last : undefined;
      },
      timeoutMs,
      () => ({
        state: last,
        parsed: suite.sse.events
          .filter((e) => e.event === 'pty-parsed' && JSON.parse(e.data).session_id === id)
          .slice(-6)
          .map((e) => JSON.parse(e.data).parsed),
      }),
    );
  };

  it('claude: a quiet question, a permission prompt, submit refused, answers clear them; rate limits only in a task; suggest completes the turn', async () => {
    const s = await suite.create();
    const agent = fakeAgent('claude', [
      // Replayed history at start: a rate-limit error from an old turn must not count (no task yet).
      { out: `${ESC}[2J${ESC}[H⏺ Welcome back.\r\n  ⎿  API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}\r\n${CLAUDE_BOX}` },
      // Past the 5 s startup grace, then a question and silence.
      { sleep: 5_600 },
      { out: `${ESC}[2J${ESC}[H⏺ I found two test runners.\r\n\r\n⏺ Should I remove the old one?\r\n${CLAUDE_BOX}` },
      { read: '\r' },
      {
        out: `${ESC}[2J${ESC}[H⏺ Removing it.\r\n\r\n⏺ Bash(rm -r old-runner)\r\n\r\nDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No, and tell Claude what to do differently (esc)\r\n\r\nEsc to cancel · Tab to amend\r\n`,
      },
      { osc: '777;notify;Claude Code;Claude needs your permission to use Bash' },
      { read: '1' },
      { out: `${ESC}[2J${ESC}[H⏺ intent: Remove the old test runner (Cleanup)\r\n⏺ Done.\r\n  ⎿  Retry-After: 2\r\n${CLAUDE_BOX}` },
      { sleep: 3_500 },
      { out: `⏺ All clean.\r\n⏺ suggest: [ Run the tests | Commit the change | Open a PR ]\r\n` },
      { read: 'q' },
      { exit: 0 },
    ]);
    const viewer = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${s.session_id}/stream`));
    const logViewer = await WsViewer.open(WsViewer.socketUrl(suite.t.socketPath, `/sessions/${s.session_id}/stream?format=log`));
    try {
      await suite.write(s.session_id, `${agent.command}\n`);
      const started = await stateWhere(s.session_id, 'agent_type claude', (st) => st['agent_type'] === 'claude');
      assert.equal(started['rate_limited'], false);
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal((await state(s.session_id))['rate_limited'], false, 'history replayed at start is not a task');

      // 5.6 s grace + 10 s of silence: a low-confidence question.
      const asked = await stateWhere(s.session_id, 'the quiet question', (st) => st['awaiting_input'] === true, 25_000);
      assert.equal(asked['question_text'], '⏺ Should I remove the old one?');
      assert.equal(asked['question_confident'], undefined, 'low confidence is omitted on the wire');
      assert.equal(asked['agent_state'], 'awaiting_input');
      const answer = 'yes, remove the old runner and keep the new one please';
      await suite.write(s.session_id, `${answer}\r`);

      // The permission prompt: confident, with its choice prompt.
      const prompt = await stateWhere(s.session_id, 'the permission prompt', (st) => st['question_confident'] === true && st['choice_prompt'] !== undefined);
      assert.equal(prompt['question_text'], 'Claude needs your permission to use Bash');
      assert.equal(prompt['choice_prompt'].title, 'Do you want to proceed?');
      assert.deepEqual(
        prompt['choice_prompt'].options.map((o: { destructive: boolean }) => o.destructive),
        [false, true],
      );
      const status = await tool('session', { action: 'status', session_id: s.session_id });
      assert.equal(status.awaiting_input, true);
      assert.equal(status.question_confident, true);
      const refused = await tool('session', { action: 'submit', session_id: s.session_id, input: 'ls' });
      assert.equal(refused.submitted, false);
      assert.equal(refused.reason, 'confident_dialog');
      assert.equal(refused.retry_safe, true);
      assert.equal(refused.write_state, 'not_started');

      assert.deepEqual((await suite.t.socket('GET', `/sessions/${s.session_id}/last-prompt`)).json(), { prompt: answer }, 'ten words or more: the last prompt');
      assert.equal((await state(s.session_id))['last_prompt'], answer);
      await suite.write(s.session_id, '1');
      const answered = await stateWhere(s.session_id, 'the prompt answered and the rate limit', (st) => st['rate_limited'] === true);
      assert.equal(answered['awaiting_input'], false);
      assert.equal(answered['choice_prompt'], undefined);
      assert.equal(answered['retry_after_ms'], 2_000);
      assert.equal(answered['agent_intent'], 'Remove the old test runner (Cleanup)');
      const expired = await stateWhere(s.session_id, 'the rate limit expiring', (st) => st['rate_limited'] === false, 5_000);
      assert.equal(expired['retry_after_ms'], undefined);

      const done = await stateWhere(s.session_id, 'completed', (st) => st['agent_state'] === 'completed');
      assert.deepEqual(done['suggested_actions'], ['Run the tests', 'Commit the change', 'Open a PR']);
      assert.equal(done['shell_state'], 'idle', 'a completed turn reads idle');

      // The same story on every channel.
      const parsedTypes = suite.sse.events
        .filter((e) => e.event === 'pty-parsed' && JSON.parse(e.data).session_id === s.session_id)
        .map((e) => JSON.parse(e.data).parsed.type);
      for (const t of ['question', 'user-input', 'choice-prompt', 'intent', 'rate-limit', 'suggest'])
        assert.ok(parsedTypes.includes(t), `pty-parsed ${t} in ${parsedTypes.join(',')}`);
      const frameTypes = viewer.frames.filter((f) => f.type === 'parsed').map((f) => (f['event'] as { type: string }).type);
      for (const t of ['question', 'choice-prompt', 'suggest']) assert.ok(frameTypes.includes(t), `parsed frame ${t}`);
      await logViewer.waitFor(() => logViewer.frames.some((f) => f.type === 'state' && (f['state'] as { agent_state?: string }).agent_state === 'completed'));
      const changes = suite.sse.events
        .filter((e) => e.event === 'session-state-changed' && JSON.parse(e.data).session_id === s.session_id)
        .map((e) => JSON.stringify(JSON.parse(e.data).state));
      assert.ok(changes.some((c) => c.includes('"agent_state":"awaiting_input"')));
      for (let i = 1; i < changes.length; i++) {
        const strip = (c: string) => c.replace(/"last_activity_ms":\d+,?/, '');
        assert.notEqual(strip(changes[i]!), strip(changes[i - 1]!), 'session-state-changed is deduplicated');
      }

      // The intent is in the progress journal, once.
      const journal = readFileSync(join(suite.t.configDir, 'progress.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const intents = journal.filter((e) => e.kind === 'intent' && e.session_id === s.session_id);
      assert.equal(intents.length, 1);
      assert.equal(intents[0].text, 'Remove the old test runner (Cleanup)');

      // A new turn ends the completion.
      await suite.write(s.session_id, 'q');
      await stateWhere(s.session_id, 'agent gone', (st) => st['agent_type'] === undefined);
    } finally {
      viewer.ws.close();
      logViewer.ws.close();
      removeFakeAgent(agent);
    }
  });

  it('codex: a `• Working (…)` status keeps working through silence; the ready screen makes it idle; its exit makes it exited', async () => {
    const agent = fakeAgent('codex', [
      { out: `${ESC}[?1049h${ESC}[2J${ESC}[H› fix the build\r\n\r\n• Working (1s • esc to interrupt)\r\n\r\n› \r\n` },
      // Codex redraws its timer every second; the next draw is late (a long tool call): no byte for 4 s.
      { sleep: 1_000 },
      { out: `${ESC}[3;1H• Working (2s • esc to interrupt)${ESC}[5;3H` },
      { sleep: 4_000 },
      { out: `${ESC}[?1049l${ESC}[2J${ESC}[H• Fixed the build.\r\n\r\n› Ask Codex to do anything\r\n` },
      { sleep: 4_000 },
      { exit: 3 },
    ]);
    try {
      const s = await suite.create({ shell: join(agent.binDir, 'codex'), args: agent.args });
      const working = await stateWhere(s.session_id, 'working', (st) => st['agent_type'] === 'codex' && st['current_task'] === 'Working');
      assert.equal(working['agent_state'], 'working');
      assert.deepEqual(working['terminal_mode'], { FullscreenTui: { app_hint: 'codex', depth: 1 } }, 'on the alternate screen');
      await stateWhere(s.session_id, 'the second draw', (st) => st['current_task'] === 'Working' && st['last_activity_ms'] > working['last_activity_ms']);
      // Past AGENT_IDLE_MS (2.5 s) without a byte: the status line still holds it busy.
      await new Promise((r) => setTimeout(r, 3_000));
      const held = await state(s.session_id);
      assert.equal(held['agent_state'], 'working', JSON.stringify(held));
      assert.equal(held['shell_state'], 'busy');
      const idle = await stateWhere(s.session_id, 'idle after the ready screen', (st) => st['agent_state'] === 'idle', 8_000);
      assert.equal(idle['terminal_mode'], 'Shell', 'back on the primary screen');
      const exited = await until('exited', async () => {
        const st = await tool('session', { action: 'status', session_id: s.session_id });
        return st.agent_state === 'exited' ? st : undefined;
      });
      assert.equal(exited.exit_code, 3);
      assert.equal(exited.awaiting_input, false);
    } finally {
      removeFakeAgent(agent);
    }
  });
});
