/** The supervisor's accumulator wiring: events applied in order, publishing deduplicated, input clears, last_prompt, user-input, markers and expiry. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ParsedEvent } from '../../../shared/protocol/parsedEvents.js';
import { emptySignals } from '../../../supervisor/sessions/agentSignals.js';
import { AgentStateTracker } from '../../../supervisor/sessions/agentStateTracker.js';
import type { SessionRecord } from '../../../supervisor/sessions/sessionRecord.js';
import type { EventBus } from '../../../supervisor/events/eventBus.js';

/** No process has this pid (above pid_max): the /proc reads behind background_work find nothing. */
const NO_SUCH_PID = 2 ** 22 + 11;

function record(over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    session_id: 's1',
    tuic_session: 's1',
    alias: 'tm-1',
    display_name: 'sh',
    display_name_is_custom: false,
    display_name_from_spawn: false,
    is_remote: true,
    visible: false,
    cwd: '/tmp',
    worktree: null,
    shell: '/bin/sh',
    pid: NO_SUCH_PID,
    rows: 24,
    cols: 80,
    created_ms: 0,
    shell_state: 'idle',
    shell_state_since_ms: 0,
    last_activity_ms: 0,
    total_written: 0,
    paused: false,
    exit: null,
    agent_type: 'claude',
    spawn_agent_type: null,
    agent_checked_ms: 0,
    agent_fg_pgid: null,
    agent_classified_ms: 0,
    signals: emptySignals(),
    turn_epoch: 0,
    agent_epoch: 0,
    last_prompt: null,
    alt_screen: false,
    queued_commands: 0,
    keep_open: false,
    ...over,
  };
}

function harness(markers = { intents: true, suggests: true }) {
  const published: Array<{ event: string; data: any }> = [];
  const bus = { publish: (event: string, data: unknown) => published.push({ event, data }) } as unknown as EventBus;
  const sent: Array<[string, string | null]> = [];
  const intents: string[] = [];
  const tracker = new AgentStateTracker({
    bus,
    lineCount: async () => 42,
    sendAgent: (id, type) => sent.push([id, type]),
    markers: (type) => (type === 'codex' ? { intents: false, suggests: false } : markers),
  });
  tracker.onIntent((_r, text) => intents.push(text));
  const states = () => published.filter((p) => p.event === 'session-state-changed').map((p) => p.data.state);
  return { tracker, published, sent, intents, states };
}

const enter = Buffer.from('\r');

describe('agent state tracker', () => {
  it('applies events in order, publishes each as pty-parsed, and state changes once per change', () => {
    const h = harness();
    const r = record();
    const q: ParsedEvent = { type: 'question', prompt_text: 'Proceed?', confident: true };
    h.tracker.parsed(r, [q, { type: 'pr-url', number: 1, url: 'https://github.com/a/b/pull/1', platform: 'github' }]);
    h.tracker.parsed(r, [q]);
    assert.deepEqual(
      h.published.filter((p) => p.event === 'pty-parsed').map((p) => p.data.parsed.type),
      ['question', 'pr-url', 'question'],
    );
    assert.equal(h.states().length, 1, 'the repeated question changed nothing');
    assert.equal(h.states()[0].agent_state, 'awaiting_input');
    assert.equal(h.states()[0].question_confident, true);
    h.tracker.input(r, Buffer.from('1'), null);
    assert.equal(h.states().at(-1).awaiting_input, false);
    assert.deepEqual(
      h.tracker.recentEvents('s1').map((e) => e.event.type),
      ['question', 'pr-url', 'question'],
    );
  });

  it('a rate limit counts only in a turn submitted to the agent, and expires on its own', async () => {
    const h = harness();
    const r = record({ turn_epoch: 3, agent_epoch: 3 });
    const limit: ParsedEvent = { type: 'rate-limit', pattern_name: 'retry-after-header', matched_text: 'Retry-After: 0', retry_after_ms: 30 };
    h.tracker.parsed(r, [limit]);
    assert.equal(r.signals.rateLimit, null, 'the command that started the agent is not a task');
    r.turn_epoch = 4;
    h.tracker.parsed(r, [limit]);
    assert.equal(h.states().at(-1).rate_limited, true);
    assert.equal(h.states().at(-1).retry_after_ms, 30);
    await new Promise((res) => setTimeout(res, 80));
    assert.equal(h.states().at(-1).rate_limited, false, 'republished when it expired');
    h.tracker.dispose();
  });

  it('markers follow the settings for the agent type; intents reach the journal listener', () => {
    const h = harness();
    const claude = record();
    h.tracker.parsed(claude, [
      { type: 'intent', text: 'Fix the build', title: 'CI' },
      { type: 'suggest', items: ['a', 'b'] },
    ]);
    assert.equal(claude.signals.intent, 'Fix the build (CI)');
    assert.equal(h.states().at(-1).agent_state, 'completed');
    assert.deepEqual(h.intents, ['Fix the build (CI)']);
    const codex = record({ session_id: 's2', agent_type: 'codex' });
    h.tracker.parsed(codex, [
      { type: 'intent', text: 'Fix the build' },
      { type: 'suggest', items: ['a', 'b'] },
    ]);
    assert.equal(codex.signals.intent, null);
    assert.equal(codex.signals.completedEpoch, null);
    assert.deepEqual(h.intents, ['Fix the build (CI)'], 'off for codex: no journal entry');
  });

  it('a submitted line of 10+ words is last_prompt; to an agent it is a user-input event with its log line', async () => {
    const h = harness();
    const r = record();
    h.tracker.input(r, enter, 'ls');
    assert.equal(r.last_prompt, null);
    const prompt = 'please refactor the session service into smaller files and keep tests green';
    h.tracker.input(r, enter, prompt);
    assert.equal(r.last_prompt, prompt);
    assert.equal(h.states().at(-1).last_prompt, prompt);
    await new Promise((res) => setImmediate(res));
    const inputs = h.published.filter((p) => p.event === 'pty-parsed' && p.data.parsed.type === 'user-input').map((p) => p.data.parsed);
    assert.deepEqual(inputs, [
      { type: 'user-input', content: 'ls', line: 42 },
      { type: 'user-input', content: prompt, line: 42 },
    ]);
    const shell = harness();
    shell.tracker.input(record({ agent_type: null }), enter, 'ls -la');
    await new Promise((res) => setImmediate(res));
    assert.equal(shell.published.filter((p) => p.event === 'pty-parsed').length, 0, 'a plain shell has no user-input events');
  });

  it('the agent leaving clears its state and tells the host; an exit keeps only the last error', () => {
    const h = harness();
    const r = record();
    h.tracker.parsed(r, [
      { type: 'question', prompt_text: 'x?', confident: false },
      { type: 'tool-error', matched_text: 'Error: Exit code 2' },
    ]);
    r.agent_type = null;
    h.tracker.agentChanged(r);
    assert.equal(r.signals.question, null);
    assert.equal(r.signals.lastError, null);
    assert.deepEqual(h.sent, [['s1', null]]);
    const e = record();
    h.tracker.parsed(e, [
      { type: 'question', prompt_text: 'x?', confident: true },
      { type: 'api-error', pattern_name: 'server-error', matched_text: 'API Error: 500', error_kind: 'server' },
    ]);
    e.exit = { exit_code: 0, signal: null, reason: 'exit', at_ms: 0, reported: true };
    h.tracker.exited(e);
    assert.equal(e.signals.question, null);
    assert.equal(e.signals.lastError, 'API Error: 500');
  });
});
