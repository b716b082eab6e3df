/**
 * agent_prompts/scenario-matrix.json, scenario by scenario: what sets the state and each thing that
 * must clear it, through the parser (virtual clock) and the supervisor's accumulator. The history-
 * and capture-template scenarios are drawn as the agents draw them (scripted screens, not captures).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ParsedEvent } from '../../../../shared/protocol/parsedEvents.js';
import { type AgentSignals, applyInput, applyParsed, clearAgent, emptySignals } from '../../../../supervisor/sessions/agentSignals.js';
import { fixture, replay, type Replay, screenBytes } from './replayHarness.js';

interface Scenario {
  id: string;
  set: string;
  clear: string[];
  must_not_set_after?: string[];
}
const matrix = JSON.parse(fixture('agent_prompts/scenario-matrix.json').toString('utf8')) as { scenarios: Scenario[] };

/** A parser and the supervisor's accumulator for one session, fed the same way tuicd feeds them. */
class Session {
  readonly r: Replay;
  readonly signals: AgentSignals = emptySignals();
  epoch = 0;
  private applied = 0;

  constructor(agent: string) {
    this.r = replay({ agent });
  }

  out(text: string, quietMs = 200): this {
    this.r.type(screenBytes(text), quietMs);
    return this.sync();
  }

  key(bytes: string): this {
    if (bytes.includes('\r')) this.epoch++;
    this.r.input(bytes);
    applyInput(this.signals, Buffer.from(bytes));
    return this.sync();
  }

  quiet(ms: number): this {
    this.r.timers.advance(ms);
    return this.sync();
  }

  exit(): this {
    clearAgent(this.signals);
    return this;
  }

  get awaiting(): string {
    if (this.signals.choice !== null) return 'choice_prompt';
    if (this.signals.question === null) return 'none';
    return this.signals.question.confident ? 'awaiting_input-confident' : 'awaiting_input-low-confidence';
  }

  private sync(): this {
    const events: ParsedEvent[] = this.r.events.slice(this.applied);
    this.applied = this.r.events.length;
    for (const e of events) applyParsed(this.signals, e, { now: this.r.timers.now(), turnEpoch: this.epoch, taskActive: true, intents: true, suggests: true });
    return this;
  }
}

const CLEAR = '\x1b[2J\x1b[H';
const CLAUDE_BOX = '\n────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n';
const askSingle = `${CLEAR}⏺ I need one decision first.\n\n Which database should the service use?\n\n❯ 1. PostgreSQL\n  2. SQLite\n  3. Type something.\n\nEnter to select · ↑/↓ to navigate · Esc to cancel\n`;
const askMulti = `${CLEAR}⏺ Pick what to include.\n\n Which checks should run on every push?\n\n❯ 1. [ ] Unit tests\n  2. [ ] Lint\n  3. [ ] Type check\n  4. Submit\n\nEnter to select · ↑/↓ to navigate · Esc to cancel\n`;
const codexEdit = `${CLEAR}• Edited src/app.ts (+3 -1)\n\n  Would you like to make the following edits?\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for these files (a)\n  3. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel\n`;
const codexReady = `${CLEAR}• Done: the edit is applied.\n\n› Ask Codex to do anything\n\n  gpt-5 high · ~/repo · main\n`;

describe('scenario matrix', () => {
  const byId = new Map(matrix.scenarios.map((s) => [s.id, s]));
  const scenario = (id: string): Scenario => {
    const s = byId.get(id);
    assert.ok(s, `scenario ${id} is in the matrix`);
    return s;
  };

  it('every scenario of the matrix is covered here', () => {
    const covered = [
      'claude-ask-user-single-select',
      'claude-ask-user-multi-select',
      'claude-plan-picker-osc777',
      'claude-generic-attention-completion',
      'claude-permission-approval',
      'codex-edit-approval',
      'codex-question-answer-repaint-complete',
      'codex-working-to-completed',
      'codex-bare-enter',
      'turn-timer-input-race',
      'bottom-zone-question-mark',
      'two-session-relay-isolation',
    ];
    assert.deepEqual(matrix.scenarios.map((s) => s.id).sort(), covered.sort());
  });

  for (const [id, screen] of [
    ['claude-ask-user-single-select', askSingle],
    ['claude-ask-user-multi-select', askMulti],
  ] as const) {
    it(`${id}: the question's options set awaiting_input; an option, an interrupt or the exit clear it`, () => {
      const s = scenario(id);
      assert.equal(s.set, 'awaiting_input');
      const clears: Record<string, (x: Session) => void> = {
        'submitted-option': (x) => x.key('1'),
        'submitted-selection': (x) => x.key('\r'),
        interrupt: (x) => x.key('\x1b'),
        'pty-exit': (x) => x.exit(),
      };
      for (const how of s.clear) {
        const x = new Session('claude').out(screen);
        assert.equal(x.awaiting, 'choice_prompt', how);
        assert.equal(x.signals.choice?.options.length, id.includes('multi') ? 4 : 3);
        clears[how]!(x);
        assert.equal(x.awaiting, 'none', how);
      }
      // Moving the highlight is not an answer.
      assert.equal(new Session('claude').out(screen).key('\x1b[B').awaiting, 'choice_prompt');
    });
  }

  it('claude-plan-picker-osc777: low confidence; a submitted option, question-cleared, protocol busy and exit clear it', () => {
    const s = scenario('claude-plan-picker-osc777');
    assert.equal(s.set, 'awaiting_input-low-confidence');
    const raw = fixture('agent_prompts/claude-plan-picker.raw');
    const upTo = raw.subarray(0, raw.indexOf('waiting for your input') + 40);
    const ask = (): Session => {
      const x = new Session('claude');
      x.r.push(upTo);
      x.quiet(200);
      assert.equal(x.awaiting, 'awaiting_input-low-confidence');
      return x;
    };
    assert.equal(ask().key('2').awaiting, 'none');
    const cleared = ask();
    applyParsed(cleared.signals, { type: 'question-cleared' }, { now: 0, turnEpoch: 0, taskActive: true, intents: true, suggests: true });
    assert.equal(cleared.awaiting, 'none');
    const busy = ask();
    busy.r.push(raw.subarray(upTo.length));
    assert.equal(busy.quiet(200).awaiting, 'none');
    assert.equal(ask().exit().awaiting, 'none');
  });

  it('claude-generic-attention-completion: sets nothing', () => {
    assert.equal(scenario('claude-generic-attention-completion').set, 'none');
    const x = new Session('claude');
    x.r.push(fixture('agent_prompts/claude-generic-attention.raw'));
    assert.equal(x.quiet(20_000).awaiting, 'none');
  });

  it('claude-permission-approval: the permission notify is confident; option, interrupt and exit clear it', () => {
    assert.equal(scenario('claude-permission-approval').set, 'awaiting_input-confident');
    const notify = '\x1b]777;notify;Claude Code;Claude needs your permission to use Bash\x07';
    for (const clear of [(x: Session) => x.key('1'), (x: Session) => x.key('\x03'), (x: Session) => x.exit()]) {
      const x = new Session('claude').out(notify);
      assert.equal(x.awaiting, 'awaiting_input-confident');
      assert.equal(x.signals.question?.text, 'Claude needs your permission to use Bash');
      clear(x);
      assert.equal(x.awaiting, 'none');
    }
  });

  it('codex-edit-approval: a choice prompt; an option, a bare Enter, its disappearance and exit clear it', () => {
    assert.equal(scenario('codex-edit-approval').set, 'choice_prompt');
    const open = (): Session => {
      const x = new Session('codex').out(codexEdit);
      assert.equal(x.awaiting, 'choice_prompt');
      assert.deepEqual(
        x.signals.choice?.options.map((o) => [o.key, o.label, o.highlighted, o.destructive, o.hint]),
        [
          ['1', 'Yes, proceed', true, false, 'y'],
          ['2', "Yes, and don't ask again for these files", false, false, 'a'],
          ['3', 'No, and tell Codex what to do differently', false, true, 'esc'],
        ],
      );
      return x;
    };
    assert.equal(open().key('1').awaiting, 'none');
    assert.equal(open().key('\r').awaiting, 'none');
    assert.equal(open().quiet(1_000).out(codexReady).awaiting, 'none', 'choice-disappeared');
    assert.equal(open().exit().awaiting, 'none');
  });

  it('codex-question-answer-repaint-complete: a quiet question is low confidence; the answer clears it; its repaint and the completion do not set it again', () => {
    const s = scenario('codex-question-answer-repaint-complete');
    assert.deepEqual(s.must_not_set_after, ['historical-question-repaint', 'completion']);
    const asked = `${CLEAR}• I found two config files.\n\n• Should I merge them into one?\n\n› \n\n  gpt-5 high · ~/repo\n`;
    const x = new Session('codex').out(asked).quiet(9_000);
    assert.equal(x.awaiting, 'none', 'not before 10 s of silence');
    x.quiet(1_500);
    assert.equal(x.awaiting, 'awaiting_input-low-confidence');
    assert.equal(x.signals.question?.text, '• Should I merge them into one?');
    x.key('yes\r');
    assert.equal(x.awaiting, 'none');
    // The transcript is repainted (scrolled a line) with the old question in it, then the turn completes.
    x.quiet(600)
      .out(
        `${CLEAR}• I found two config files.\n• Should I merge them into one?\n\n› yes\n\n• Merged into config.toml.\n\nsuggest: [ Run the tests | Commit ]\n\n› \n`,
      )
      .quiet(30_000);
    assert.equal(x.awaiting, 'none');
    assert.deepEqual(x.signals.suggested, ['Run the tests', 'Commit']);
  });

  it('codex-working-to-completed: the Working status holds working; completion, the ready screen, an abort or exit end it', () => {
    assert.equal(scenario('codex-working-to-completed').set, 'working');
    const working = `${CLEAR}› fix the build\n\n• Working (12s • esc to interrupt)\n\n› \n`;
    const start = (): { x: Session; held: boolean[] } => {
      const x = new Session('codex');
      const held: boolean[] = [];
      (x.r.parser as unknown as { opts: { onWorking?: (w: boolean) => void } }).opts.onWorking = (w) => held.push(w);
      x.out(working).quiet(8_000);
      assert.deepEqual(held, [true], 'still held after 8 s of silence (AGENT_IDLE_MS is 2.5 s)');
      assert.equal(x.signals.currentTask, 'Working');
      return { x, held };
    };
    const completed = start();
    completed.x.out(`${CLEAR}• Fixed.\nsuggest: [ Run tests | Open PR ]\n\n› \n`);
    assert.deepEqual(completed.held, [true, false]);
    assert.equal(completed.x.signals.completedEpoch, completed.x.epoch);
    const ready = start();
    ready.x.out(codexReady);
    assert.deepEqual(ready.held, [true, false]);
    const aborted = start();
    aborted.x.key('\x1b').out(`${CLEAR}■ Conversation interrupted - tell the model what to do differently\n\n› \n`);
    assert.deepEqual(aborted.held, [true, false]);
    const exited = start();
    exited.x.r.parser.setAgent(null);
    assert.deepEqual(exited.held, [true, false]);
    const frozen = start();
    frozen.x.quiet(2_100);
    assert.deepEqual(frozen.held, [true, false], 'a status line frozen for 10 s no longer holds');
  });

  it('codex-bare-enter: an open question clears on a bare Enter', () => {
    const x = new Session('codex').out(`${CLEAR}• Continue with the migration?\n\n› \n`).quiet(10_500);
    assert.equal(x.awaiting, 'awaiting_input-low-confidence');
    assert.equal(x.key('\r').awaiting, 'none');
  });

  it('turn-timer-input-race: input of a newer turn before the silence timer fires cancels the question for good', () => {
    const x = new Session('claude').out(`${CLEAR}⏺ Shall I delete the old fixtures?${CLAUDE_BOX}`).quiet(9_900);
    x.key('no, keep them\r').quiet(30_000);
    assert.equal(x.awaiting, 'none');
  });

  it('bottom-zone-question-mark: a `?` in the composer or the footer is not a question', () => {
    const x = new Session('claude')
      .out(
        `${CLEAR}⏺ Tests pass.\n\n────────────────────────────────────────\n❯ what about windows?\n────────────────────────────────────────\n  ? for shortcuts\n`,
      )
      .quiet(30_000);
    assert.equal(x.awaiting, 'none');
  });

  it('two-session-relay-isolation: each session keeps its own question; input and exit of one leave the other', () => {
    const notify = '\x1b]777;notify;Claude Code;Claude needs your permission to use Edit\x07';
    const a = new Session('claude').out(notify);
    const b = new Session('claude').out(notify);
    a.key('1');
    assert.equal(a.awaiting, 'none');
    assert.equal(b.awaiting, 'awaiting_input-confident', 'same-session-input only');
    const c = new Session('claude').out(notify);
    b.exit();
    assert.equal(c.awaiting, 'awaiting_input-confident', 'same-session-exit only');
  });
});

describe('silence heuristic rules', () => {
  it('a question that scrolled out of the last 5 chat rows, or went stale, does not fire', () => {
    const scrolled = new Session('claude').out(`${CLEAR}⏺ Should I proceed?\n`, 50);
    scrolled.out('line 1\nline 2\nline 3\nline 4\nline 5\n', 50).quiet(11_000);
    assert.equal(scrolled.awaiting, 'none');
    const stale = new Session('claude').out(`${CLEAR}⏺ Should I proceed?\n`, 50);
    for (let i = 0; i < 11; i++) stale.out(`\x1b[20;1Hspinner ${i}`, 10);
    stale.quiet(11_000);
    assert.equal(stale.awaiting, 'none');
  });

  it('filters: comments, diffs, arrows and asides ending in `?` are not candidates', () => {
    for (const row of ['// why does this work?', '# is this right?', '+ added?', 'a -> b?', 'x => y?', 'Foo::bar?', 'done (really)?']) {
      const x = new Session('claude').out(`${CLEAR}${row}\n`).quiet(11_000);
      assert.equal(x.awaiting, 'none', row);
    }
  });

  it('the echo window, a resize, a recent status line and hook instrumentation hold the heuristic back', () => {
    const echo = new Session('claude');
    echo.key('why?');
    echo.out(`${CLEAR}❯ why?\n`, 0).quiet(11_000);
    assert.equal(echo.awaiting, 'none', 'the typed text echoed');
    const reply = new Session('claude');
    reply.key('go\r');
    reply.out(`${CLEAR}❯ go\n\n⏺ Which branch should I use?\n`, 0).quiet(11_000);
    assert.equal(reply.awaiting, 'awaiting_input-low-confidence', 'a question drawn within the echo window is looked at once it is over');
    const resized = new Session('claude');
    resized.r.parser.resized();
    resized.out(`${CLEAR}⏺ Ready to go?\n`).quiet(11_000);
    assert.equal(resized.awaiting, 'none', 'drawn within 1 s of a resize');
    const hooked = new Session('claude').out('\x1b]7770;state=idle;agent=claude\x07').out(`${CLEAR}⏺ Ready to go?\n`).quiet(11_000);
    assert.equal(hooked.awaiting, 'none');
    const control = new Session('claude').out(`${CLEAR}⏺ Ready to go?\n`).quiet(11_000);
    assert.equal(control.awaiting, 'awaiting_input-low-confidence');
  });

  it('a raised question clears once it leaves the screen (question-cleared)', () => {
    const x = new Session('claude').out(`${CLEAR}⏺ Ready to go?\n`).quiet(11_000);
    assert.equal(x.awaiting, 'awaiting_input-low-confidence');
    x.out(`${CLEAR}⏺ Went ahead on my own.\n`);
    assert.equal(x.awaiting, 'none');
    assert.equal(x.r.events.at(-1)?.type, 'question-cleared');
  });

  it('startup grace: nothing is asked until output paused 5 s, or 120 s passed', () => {
    const r = replay({ agent: 'claude', settled: false });
    for (let i = 0; i < 30; i++) r.type(`history line ${i}\r\n\x1b]777;notify;Claude Code;Claude needs your permission to use Bash\x07`, 4_000);
    assert.equal(r.events.filter((e) => e.type === 'question').length, 0, 'never quiet for 5 s, under 120 s');
    r.type('\x1b]777;notify;Claude Code;Claude needs your permission to use Bash\x07', 100);
    assert.equal(r.events.filter((e) => e.type === 'question').length, 1, 'past 120 s');
  });

  it('a tool error line is reported after 5 s of quiet, not before', () => {
    const r = replay({ agent: 'claude' });
    r.type('  ⎿  Error: Exit code 2\r\n', 4_000);
    assert.deepEqual(r.events, []);
    r.timers.advance(1_100);
    assert.deepEqual(r.events, [{ type: 'tool-error', matched_text: '⎿  Error: Exit code 2' }]);
  });
});

describe('screen reads', () => {
  it('while output floods, the screen is not read; once it pauses, the prompt the flood ended with is found', () => {
    const r = replay({ agent: 'claude' });
    const chunk = 'x'.repeat(64 * 1024 - 2) + '\r\n';
    for (let t = 0; t < 3_000; t += 10) r.type(chunk, 10); // 6.4 MB/s for 3 s
    assert.ok(r.screenReads <= 1, `${r.screenReads} screen reads during a 3 s flood`);
    r.type('\x1b[2J\x1b[HDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No\r\n', 200);
    assert.equal(r.events.filter((e) => e.type === 'choice-prompt').length, 1, 'read within 200 ms of the pause');
    const calm = replay({ agent: 'claude' });
    for (let t = 0; t < 1_000; t += 50) calm.type('✢ Reading… (1s)\r', 50);
    assert.ok(calm.screenReads >= 9, `${calm.screenReads} reads in 1 s of light output (every 100 ms)`);
  });
});
