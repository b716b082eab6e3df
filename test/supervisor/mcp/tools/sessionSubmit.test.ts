// session action=submit against real bash sessions: the receipt, refusals before the first byte,
// never-interleaved concurrent writers, bracketed paste, ack timeout and exit after the write;
// plus the composer tracker (InputLineBuffer) on its own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { InputLineBuffer } from '../../../../supervisor/sessions/inputLineBuffer.js';
import { clampAckTimeout, commandText } from '../../../../supervisor/sessions/submission.js';
import { call, idleShell, outputUntil, startHarness } from './sessionHarness.js';
import type { Answer, Harness } from './sessionHarness.js';

const RECEIPT_KEYS = ['acknowledged', 'composer_state', 'retry_safe', 'submission_id', 'submitted', 'turn_epoch', 'write_state'];

function feed(buffer: InputLineBuffer, text: string): number {
  return buffer.feed(Buffer.from(text, 'utf8'));
}

describe('InputLineBuffer (composer tracking)', () => {
  it('typed bytes make a partial line; Enter submits and empties it', () => {
    const b = new InputLineBuffer();
    assert.equal(b.state, 'empty');
    assert.equal(feed(b, 'ls -l'), 0);
    assert.equal(b.state, 'partial');
    assert.equal(b.text, 'ls -l');
    assert.equal(feed(b, '\r'), 1);
    assert.equal(b.state, 'empty');
    assert.equal(feed(b, 'a\rb\n'), 2, 'each Enter counts');
  });

  it('Ctrl-U and Ctrl-C clear; backspace and Ctrl-W edit (UTF-8 aware)', () => {
    const b = new InputLineBuffer();
    feed(b, 'echo héllo wörld');
    feed(b, '\x7f');
    assert.equal(b.text, 'echo héllo wörl');
    feed(b, '\x17');
    assert.equal(b.text, 'echo héllo ');
    feed(b, '\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f');
    assert.equal(b.state, 'empty', 'backspacing everything empties the line');
    feed(b, 'abc\x15');
    assert.equal(b.state, 'empty');
    feed(b, 'abc\x03');
    assert.equal(b.state, 'empty');
  });

  it('history recall, completion and search make the line unknown; cursor moves do not', () => {
    const b = new InputLineBuffer();
    feed(b, '\x1b[D\x1b[C\x1b[H');
    assert.equal(b.state, 'empty');
    feed(b, '\x1b[A');
    assert.equal(b.state, 'unknown');
    feed(b, '\x15');
    assert.equal(b.state, 'empty');
    feed(b, '\t');
    assert.equal(b.state, 'unknown');
    feed(b, '\r');
    feed(b, '\x12');
    assert.equal(b.state, 'unknown');
    feed(b, '\x1bOB');
    assert.equal(b.state, 'unknown');
  });

  it('a bracketed paste is text, newlines included, even when split across writes', () => {
    const b = new InputLineBuffer();
    assert.equal(feed(b, '\x1b[200~line one\nline'), 0, 'a newline inside a paste does not submit');
    assert.equal(feed(b, ' two\x1b[20'), 0);
    assert.equal(feed(b, '1~'), 0);
    assert.equal(b.text, 'line one\nline two');
    assert.equal(feed(b, '\r'), 1);
    assert.equal(b.state, 'empty');
  });

  it('clear() is the framed submit: empty and known again', () => {
    const b = new InputLineBuffer();
    feed(b, '\x1b[Apartial');
    b.clear();
    assert.equal(b.state, 'empty');
  });
});

describe('submit helpers', () => {
  it('clampAckTimeout: default 3000, clamped to 250..10000', () => {
    assert.equal(clampAckTimeout(undefined), 3000);
    assert.equal(clampAckTimeout(0), 3000);
    assert.equal(clampAckTimeout(-5), 3000);
    assert.equal(clampAckTimeout('100'), 3000);
    assert.equal(clampAckTimeout(1), 250);
    assert.equal(clampAckTimeout(4000), 4000);
    assert.equal(clampAckTimeout(10_001), 10_000);
  });

  it('commandText drops the trailing newlines submit adds itself', () => {
    assert.equal(commandText('ls\n'), 'ls');
    assert.equal(commandText('a\nb\r\n'), 'a\nb');
    assert.equal(commandText('\n'), '');
  });
});

describe('session action=submit', () => {
  let h: Harness;
  before(() => {
    h = startHarness();
  });
  after(() => h.stop());

  const submit = (sessionId: string, input: string, extra: Record<string, unknown> = {}): Promise<Answer> =>
    call(h.session, { action: 'submit', session_id: sessionId, input, ...extra });
  const waitIdle = (sessionId: string): Promise<Answer> => call(h.session, { action: 'wait', session_id: sessionId, until: 'idle', timeout_ms: 20_000 });

  it('an idle bash gets the command in one call: a complete, acknowledged receipt; turn_epoch advances once per submit', async () => {
    const id = await idleShell(h);
    const r = await submit(id, 'echo sub-$((6*7))');
    assert.deepEqual(Object.keys(r).sort(), [...RECEIPT_KEYS, 'acknowledgement'].sort(), JSON.stringify(r));
    assert.match(r.submission_id, /^[0-9a-f-]{36}$/);
    assert.equal(r.submitted, true);
    assert.equal(r.write_state, 'complete');
    assert.equal(r.acknowledged, true);
    assert.equal(r.retry_safe, false, 'bytes were written: a blind retry could run it twice');
    assert.equal(r.turn_epoch, 1);
    assert.equal(r.composer_state, 'cleared');
    assert.ok(r.acknowledgement.output_offset > r.acknowledgement.enter_offset, JSON.stringify(r.acknowledgement));
    await outputUntil(h, id, (d) => d.includes('sub-42'), 'submitted command output');
    assert.equal((await waitIdle(id)).met, true);
    const second = await submit(id, 'echo sub-$((7*7))', { timeout_ms: 5000 });
    assert.equal(second.turn_epoch, 2, 'exactly one advance per complete submit');
    await outputUntil(h, id, (d) => d.includes('sub-49'), 'second command output');
  });

  it('refuses before the first byte while the composer holds typed input, and submits once it is cleared', async () => {
    const id = await idleShell(h);
    await call(h.session, { action: 'input', session_id: id, input: 'abc' });
    await waitIdle(id);
    const before = h.sessions.get(id).total_written;
    const r = await submit(id, 'echo never-$((6*7))');
    assert.deepEqual(Object.keys(r).sort(), [...RECEIPT_KEYS, 'reason'].sort());
    assert.equal(r.submitted, false);
    assert.equal(r.write_state, 'not_started');
    assert.equal(r.retry_safe, true);
    assert.equal(r.acknowledged, false);
    assert.equal(r.reason, 'composer_partial');
    assert.equal(r.composer_state, 'partial');
    assert.equal(h.sessions.get(id).total_written, before, 'nothing was written: no echo came back');
    await call(h.session, { action: 'input', session_id: id, special_key: 'ctrl+u' });
    await waitIdle(id);
    const ok = await submit(id, 'echo after-$((6*7))');
    assert.equal(ok.acknowledged, true, JSON.stringify(ok));
    const out = await outputUntil(h, id, (d) => d.includes('after-42'), 'command after clearing the line');
    assert.equal(out.data.includes('never-42'), false, 'the refused command never ran');
  });

  it('refuses while a command runs: just submitted, busy output, or a silent foreground job', async () => {
    const id = await idleShell(h);
    const first = await submit(id, 'sleep 30');
    assert.equal(first.acknowledged, true, JSON.stringify(first));
    const during = await submit(id, 'echo never-$((6*7))');
    assert.equal(during.submitted, false);
    assert.equal(during.retry_safe, true);
    assert.ok(['turn_in_flight', 'shell_busy', 'foreground_job_running'].includes(during.reason), during.reason);
    // Output goes quiet while sleep runs: only the foreground job says the shell is not at its prompt.
    await new Promise<void>((resolve) => {
      const check = () => {
        if (h.sessions.get(id).shell_state === 'idle' && !h.sessions.inputOf(h.sessions.get(id)).claimed) return (resolve(), true);
        return false;
      };
      if (check()) return;
      const sub = h.sessions.onShellState(() => {
        if (check()) sub.dispose();
      });
    });
    const silent = await submit(id, 'echo never-$((6*7))');
    assert.equal(silent.reason, 'foreground_job_running', JSON.stringify(silent));
    assert.equal(silent.retry_safe, true);
    await call(h.session, { action: 'input', session_id: id, special_key: 'ctrl+c' });
    assert.equal((await waitIdle(id)).met, true);
    const ok = await submit(id, 'echo done-$((6*7))');
    assert.equal(ok.acknowledged, true, JSON.stringify(ok));
    const out = await outputUntil(h, id, (d) => d.includes('done-42'), 'command after the job ended');
    assert.equal(out.data.includes('never-42'), false);
  });

  it('concurrent submits never interleave: one is written whole, the other refuses without writing', async () => {
    const id = await idleShell(h);
    const [a, b] = await Promise.all([submit(id, 'echo one-$((6*7))'), submit(id, 'echo two-$((7*7))')]);
    assert.deepEqual([a.submitted, b.submitted], [true, false], JSON.stringify([a, b]));
    assert.equal(b.retry_safe, true);
    assert.equal(b.write_state, 'not_started');
    assert.ok(['turn_in_flight', 'shell_busy'].includes(b.reason), b.reason);
    const out = await outputUntil(h, id, (d) => d.includes('one-42'), 'the winning command');
    assert.equal(out.data.includes('two-49'), false, 'the refused command never ran');
  });

  it('the claim holds a session that echoes nothing: a peer submit refuses although output is quiet', async () => {
    // No echo: between Enter and the program's answer, nothing but the claim says a turn is running.
    const record = await h.sessions.create({
      cwd: h.work,
      shell: '/bin/sh',
      args: ['-c', 'stty -echo; echo ready; while read line; do sleep 0.2; echo "got-$line-$((6*7))"; done'],
    });
    assert.equal((await waitIdle(record.session_id)).met, true);
    const [a, b] = await Promise.all([submit(record.session_id, 'one'), submit(record.session_id, 'two')]);
    assert.equal(a.acknowledged, true, JSON.stringify(a));
    assert.equal(b.reason, 'turn_in_flight', JSON.stringify(b));
    assert.equal(b.retry_safe, true);
    await outputUntil(h, record.session_id, (d) => d.includes('got-one-42'), 'the claimed line');
    assert.equal((await waitIdle(record.session_id)).met, true, 'the claim ends at the next idle');
    const out = await call(h.session, { action: 'output', session_id: record.session_id });
    assert.equal(out.data.includes('got-two'), false, 'the refused line was never written');
    const c = await submit(record.session_id, 'three');
    assert.equal(c.acknowledged, true, JSON.stringify(c));
    await outputUntil(h, record.session_id, (d) => d.includes('got-three-42'), 'a later submit');
  });

  it('a raw input racing a submit queues behind the whole framed write', async () => {
    const id = await idleShell(h);
    const [r] = await Promise.all([submit(id, 'echo whole-$((6*7))'), call(h.session, { action: 'input', session_id: id, input: 'xyz' })]);
    assert.equal(r.acknowledged, true);
    const out = await outputUntil(h, id, (d) => d.includes('whole-42'), 'the submitted command');
    const commandLine = out.data.split('\n').find((l: string) => l.includes('echo whole-'));
    assert.ok(commandLine?.endsWith('echo whole-$((6*7))'), `the command line is intact: ${JSON.stringify(commandLine)}`);
    assert.equal(h.sessions.inputOf(h.sessions.get(id)).composer.state, 'partial', 'the raw text landed after Enter, in the next line');
  });

  it('multi-line input goes as one bracketed paste and runs every line', async () => {
    const id = await idleShell(h);
    const r = await submit(id, 'echo ml-a$((1+1))\necho ml-b$((2+1))\n');
    assert.equal(r.acknowledged, true, JSON.stringify(r));
    assert.equal(r.turn_epoch, 1);
    await outputUntil(h, id, (d) => d.includes('ml-a2') && d.includes('ml-b3'), 'both lines ran');
  });

  it('ack_timeout: a written submit whose terminal never moves is unacknowledged and not retry-safe', async () => {
    const id = await idleShell(h);
    // Paused: the host reads nothing, so nothing moves after Enter.
    await call(h.session, { action: 'pause', session_id: id });
    const r = await submit(id, 'echo late-$((6*7))', { timeout_ms: 250, pty_description: 'late job' });
    assert.deepEqual(
      { submitted: r.submitted, write_state: r.write_state, acknowledged: r.acknowledged, retry_safe: r.retry_safe, reason: r.reason },
      { submitted: true, write_state: 'complete', acknowledged: false, retry_safe: false, reason: 'ack_timeout' },
    );
    assert.equal('acknowledgement' in r, false);
    assert.equal(h.sessions.get(id).pty_description, 'late job', 'a written submit applies pty_description');
    await call(h.session, { action: 'resume', session_id: id });
    await outputUntil(h, id, (d) => d.includes('late-42'), 'the command ran once output resumed');
  });

  it('session exit after the complete write: unacknowledged, not retry-safe, the reason says so', async () => {
    // A program that reads a line without echo and exits: nothing moves after Enter except the exit.
    const record = await h.sessions.create({ cwd: h.work, shell: '/bin/sh', args: ['-c', 'stty -echo; echo ready; read line; exit 5'] });
    assert.equal((await waitIdle(record.session_id)).met, true);
    const r = await submit(record.session_id, 'anything', { timeout_ms: 10_000 });
    assert.equal(r.submitted, true, JSON.stringify(r));
    assert.equal(r.acknowledged, false);
    assert.equal(r.retry_safe, false);
    assert.equal(r.reason, 'session_exited_after_write');
    assert.equal((await call(h.session, { action: 'output', session_id: record.session_id })).exit_code, 5);
  });

  it('refuses unknown, exited and unconfirmed sessions without writing; input must be a non-empty command', async () => {
    const unknown = await submit('no-such-session', 'ls');
    assert.equal(unknown.reason, 'session_not_found');
    assert.equal(unknown.retry_safe, true);
    assert.equal(unknown.submitted, false);

    // A program that prints nothing gives the host no output to judge: its state stays unknown.
    const silent = await h.sessions.create({ cwd: h.work, shell: '/bin/sh', args: ['-c', 'exec sleep 30'] });
    const early = await submit(silent.session_id, 'echo early');
    assert.equal(early.reason, 'shell_state_unconfirmed', JSON.stringify(early));
    assert.equal(early.retry_safe, true);
    await h.sessions.kill(silent.session_id);

    const created = await call(h.session, { action: 'create', cwd: h.work });

    await waitIdle(created.session_id);
    await h.sessions.write(created.session_id, Buffer.from('exit 0\r'));
    await call(h.session, { action: 'wait', session_id: created.session_id, until: 'exited', timeout_ms: 20_000 });
    const exited = await submit(created.session_id, 'ls');
    assert.equal(exited.reason, 'session_exited');
    assert.equal(exited.retry_safe, true);

    assert.deepEqual(await call(h.session, { action: 'submit', session_id: created.session_id }), {
      error: "Action 'submit' requires a non-empty 'input' (the command)",
      code: 'invalid_input',
      field: 'input',
    });
    assert.deepEqual(await call(h.session, { action: 'submit', session_id: created.session_id, input: '\n' }), {
      error: "Action 'submit' requires a non-empty 'input' (the command)",
      code: 'invalid_input',
      field: 'input',
    });
    assert.deepEqual(await call(h.session, { action: 'submit', input: 'ls' }), {
      error: "Action 'submit' requires 'session_id'",
      code: 'invalid_input',
      field: 'session_id',
    });
    assert.deepEqual(await call(h.session, { action: 'submit', session_id: created.session_id, input: ['ls'] }), {
      error: "'input' must be a string",
      code: 'invalid_input',
      field: 'input',
    });
  });
});
