/**
 * Every recorded capture of test/fixtures/tuicommander/ through the output parser: whole, and split
 * in two at every byte boundary, gives the events its scenario or expected-parse file names; the
 * negative ones give none.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ParsedEvent } from '../../../../shared/protocol/parsedEvents.js';
import { applyParsed, emptySignals } from '../../../../supervisor/sessions/agentSignals.js';
import { findChoicePrompt } from '../../../../workers/pty/agentParser/screenRules.js';
import { eventsOf, fixture, replay, screenBytes } from './replayHarness.js';

/** Same events whether the bytes come in one read or two, wherever the cut. */
function assertSplitInvariant(bytes: Buffer, agent: string | null, step = 1): ParsedEvent[] {
  const whole = eventsOf(bytes, [], { agent });
  for (let cut = 1; cut < bytes.length; cut += step) {
    assert.deepEqual(eventsOf(bytes, [cut], { agent }), whole, `split at byte ${cut}`);
  }
  return whole;
}

const types = (events: ParsedEvent[]): string[] => events.map((e) => e.type);

describe('choice prompt captures', () => {
  for (const name of ['claude-code_bash-confirm', 'claude-code_edit-confirm']) {
    it(`${name}: the screen parses to the expected JSON, whole and split at every byte`, () => {
      const text = fixture(`choice_prompts/${name}.txt`).toString('utf8');
      const expected = JSON.parse(fixture(`choice_prompts/${name}.json`).toString('utf8')) as ParsedEvent;
      assert.deepEqual(findChoicePrompt(text.split('\n')), expected);
      const events = assertSplitInvariant(screenBytes(text), 'claude');
      assert.deepEqual(
        events.filter((e) => e.type === 'choice-prompt'),
        [expected],
      );
      // Drawn, not asked: the title's `?` is the prompt's, and no silence question is raised beside it.
      assert.deepEqual(types(events), ['choice-prompt']);
    });
  }

  it('a numbered markdown list above a ready composer is not a prompt, and nothing else fires', () => {
    const text = fixture('choice_prompts/negative/markdown-numbered-list.txt').toString('utf8');
    assert.equal(findChoicePrompt(text.split('\n')), null);
    assert.deepEqual(assertSplitInvariant(screenBytes(text), 'claude'), []);
  });
});

describe('agent prompt captures (agent_prompts/scenario-matrix.json)', () => {
  it('claude-plan-picker-osc777: a low-confidence question, then the next turn’s status line clears it (protocol-busy)', () => {
    const bytes = fixture('agent_prompts/claude-plan-picker.raw');
    const events = assertSplitInvariant(bytes, 'claude', 7);
    const question = events.find((e) => e.type === 'question');
    assert.deepEqual(question, { type: 'question', prompt_text: 'Claude is waiting for your input', confident: false });
    assert.deepEqual(
      events.find((e) => e.type === 'progress'),
      { type: 'progress', state: 0, value: 0 },
    );
    const status = events.find((e) => e.type === 'status-line');
    assert.deepEqual(status, { type: 'status-line', task_name: 'Leavening', full_line: '✢ Leavening… (3s · thinking with high effort)', time_info: '3s' });
    assert.ok(events.indexOf(question!) < events.indexOf(status!), 'the question comes before the status line that clears it');

    // The state: set at the notify, cleared by the status line (protocol-busy).
    const cut = bytes.indexOf('waiting for your input') + 40;
    const signals = emptySignals();
    const ctx = { now: 0, turnEpoch: 1, taskActive: true, intents: true, suggests: true };
    for (const e of eventsOf(bytes.subarray(0, cut), [], { agent: 'claude' }, 0)) applyParsed(signals, e, ctx);
    assert.deepEqual(signals.question, { text: 'Claude is waiting for your input', confident: false });
    for (const e of events) applyParsed(signals, e, ctx);
    assert.equal(signals.question, null);
    assert.equal(signals.currentTask, 'Leavening');
  });

  it('the plan picker’s notify during the startup grace (replayed history) raises nothing', () => {
    const events = eventsOf(fixture('agent_prompts/claude-plan-picker.raw'), [], { agent: 'claude', settled: false }, 0);
    assert.equal(events.filter((e) => e.type === 'question').length, 0);
  });

  it('claude-generic-attention-completion: "needs your attention" sets nothing, split anywhere', () => {
    assert.deepEqual(assertSplitInvariant(fixture('agent_prompts/claude-generic-attention.raw'), 'claude'), []);
  });
});

describe('screens of agents in given states (terminal-stress/)', () => {
  it('claude-completed: no status line, question or prompt; the agent is idle, not working', () => {
    const events = assertSplitInvariant(screenBytes(fixture('terminal-stress/claude-completed.txt').toString('utf8')), 'claude');
    assert.deepEqual(events, []);
  });

  it('codex-background-working: the Working status line and one background terminal', () => {
    const text = fixture('terminal-stress/codex-background-working.txt').toString('utf8');
    const events = assertSplitInvariant(screenBytes(text), 'codex');
    assert.deepEqual(events, [
      {
        type: 'status-line',
        task_name: 'Working',
        full_line: '• Working (4s • esc to interrupt) · 1 background terminal running · /ps to view · /stop to close',
        time_info: '4s',
      },
      { type: 'active-subtasks', count: 1, task_type: 'background terminal' },
      // Re-read when the frozen status line goes stale (10 s): the count still on screen is re-sent.
      { type: 'active-subtasks', count: 1, task_type: 'background terminal' },
    ]);
    const r = replay({ agent: 'codex' });
    const working: boolean[] = [];
    (r.parser as unknown as { opts: { onWorking?: (w: boolean) => void } }).opts.onWorking = (w) => working.push(w);
    r.push(screenBytes(text));
    r.timers.advance(200);
    assert.deepEqual(working, [true], 'the status line holds the session busy');
  });
});

describe('alternate screen capture (alt_screen/gh-run-watch.raw)', () => {
  it('a full-screen program in a plain shell gives no event, split every 97 bytes', () => {
    assert.deepEqual(assertSplitInvariant(fixture('alt_screen/gh-run-watch.raw'), null, 97), []);
  });

  it('even read as an agent screen it holds no status line, prompt or question', () => {
    assert.deepEqual(eventsOf(fixture('alt_screen/gh-run-watch.raw'), [], { agent: 'claude', rows: 30, cols: 120 }), []);
  });
});
