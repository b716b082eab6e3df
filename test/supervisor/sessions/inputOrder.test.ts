/**
 * Input and the agent's answer to it reach the agent state in the order the pty host saw them. A
 * write's reply and the output its bytes caused can arrive in one read of the host's channel (a
 * supervisor slow to read: a loaded machine); the input must still count before that output, or the
 * prompt the agent drew in answer is cleared by the very keystroke that caused it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { fakeAgent, removeFakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { sessionState } from '../../../supervisor/sessions/sessionRecord.js';
import { type Harness, startHarness } from '../mcp/tools/sessionHarness.js';

const ESC = '\x1b';
const CLAUDE_BOX = '\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n';

let h: Harness;
before(() => {
  h = startHarness();
});
after(() => h.stop());

/** Blocks this process (the supervisor) without yielding to its event loop, as a descheduled process is. */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

async function until<T>(read: () => T, ok: (v: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: last saw ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('a permission prompt drawn in answer to Enter survives the Enter, though its events arrive in one read with the write reply', async () => {
  const agent = fakeAgent('claude', [
    // A question and silence: once the heuristic raises it, the startup grace is over (the notification below counts).
    { out: `${ESC}[2J${ESC}[H⏺ Shall I remove the old runner?\r\n${CLAUDE_BOX}` },
    { read: '\r' },
    { out: `${ESC}[2J${ESC}[H⏺ Bash(rm -r old-runner)\r\n\r\nDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No\r\n\r\nEsc to cancel\r\n` },
    { osc: '777;notify;Claude Code;Claude needs your permission to use Bash' },
    { read: 'q' },
    { exit: 0 },
  ]);
  try {
    const record = await h.sessions.create({ cwd: h.work, shell: `${agent.binDir}/claude`, args: agent.args, agent_type: 'claude' });
    const id = record.session_id;
    await until(
      () => sessionState(record) as Record<string, any>,
      (s) => s['awaiting_input'] === true,
      'the quiet question',
    );

    // The write request leaves at this turn's check phase (the channel corks until then); right after
    // it, this process stops reading until the agent took the Enter and had time to answer, so the
    // reply and the answer's events wait in the channel together and arrive in one read.
    const client = h.host.runningClient()!;
    const request = client.request;
    client.request = function (this: typeof client, ...args: Parameters<typeof request>) {
      client.request = request;
      const reply = request.apply(this, args);
      setImmediate(() => {
        const typed = `${agent.scriptPath}.typed`;
        for (let i = 0; i < 500 && !(existsSync(typed) && readFileSync(typed, 'utf8').includes('\r')); i++) blockFor(10);
        blockFor(500);
      });
      return reply;
    } as typeof request;
    await h.sessions.write(id, Buffer.from('please go ahead\r'));

    // The prompt's title is read from the screen after the notification was: once it arrived, both count.
    await until(
      () => h.events.filter((e) => e.name === 'pty-parsed').map((e) => (e.payload as { parsed: { type: string } }).parsed.type),
      (types) => types.includes('choice-prompt'),
      'the choice prompt parsed',
    );
    const prompt = sessionState(record) as Record<string, any>;
    assert.equal(prompt['question_confident'], true, `the notification's question is open: ${JSON.stringify(prompt)}`);
    assert.equal(prompt['choice_prompt']?.title, 'Do you want to proceed?', JSON.stringify(prompt));
    assert.equal(prompt['question_text'], 'Claude needs your permission to use Bash');
    await h.sessions.write(id, Buffer.from('q'));
  } finally {
    removeFakeAgent(agent);
  }
});
