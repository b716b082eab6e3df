/** ShellActivity: busy on output, idle after the quiet period measured from the last output, events on change only. */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { normalizeSignal } from '../../../workers/pty/processGroup.js';
import { ShellActivity, type ShellState } from '../../../workers/pty/shellActivity.js';

describe('ShellActivity', () => {
  test('busy once on output, idle once after idleMs without output', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const states: ShellState[] = [];
    const activity = new ShellActivity(500, (s) => states.push(s));
    assert.equal(activity.state, 'idle');
    activity.output();
    activity.output();
    assert.deepEqual(states, ['busy']);
    t.mock.timers.tick(300);
    activity.output(); // quiet now counts from here
    t.mock.timers.tick(200);
    assert.deepEqual(states, ['busy'], 'only 200 ms since the last output');
    t.mock.timers.tick(300);
    assert.deepEqual(states, ['busy', 'idle']);
    assert.equal(activity.state, 'idle');
    activity.output();
    assert.deepEqual(states, ['busy', 'idle', 'busy']);
    activity.stop();
    assert.deepEqual(states, ['busy', 'idle', 'busy', 'idle']);
    t.mock.timers.tick(1_000);
    assert.equal(states.length, 4, 'no timer left after stop');
  });
});

describe('normalizeSignal', () => {
  test('accepts names with or without SIG, any case; refuses unknown names', () => {
    assert.equal(normalizeSignal('SIGTERM'), 'SIGTERM');
    assert.equal(normalizeSignal('hup'), 'SIGHUP');
    assert.equal(normalizeSignal('Kill'), 'SIGKILL');
    assert.throws(() => normalizeSignal('SIGNOPE'), { code: 'INVALID_MESSAGE' });
  });
});
