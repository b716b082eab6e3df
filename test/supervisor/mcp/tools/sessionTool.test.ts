// session tool actions against real bash sessions on a real pty host: list, create, input, output,
// status, resize, pause/resume, close, kill, process_stats, the three addresses, the loopback guard.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { waitFor } from '../../../helpers/poll.js';
import { SPECIAL_KEYS, translateSpecialKey } from '../../../../supervisor/mcp/tools/specialKeys.js';
import { call, caller, idleShell, LOCAL, outputUntil, REMOTE, startHarness } from './sessionHarness.js';
import type { Harness } from './sessionHarness.js';

/** True when no value anywhere in `v` is null (optional fields are omitted, never null). */
function hasNoNull(v: unknown): boolean {
  if (v === null) return false;
  if (Array.isArray(v)) return v.every(hasNoNull);
  if (typeof v === 'object') return Object.values(v as object).every(hasNoNull);
  return true;
}

describe('session tool', () => {
  let h: Harness;
  before(() => {
    h = startHarness();
  });
  after(() => h.stop());

  it('test_translate_special_key: every listed key has its bytes; an unknown key is named in the error', () => {
    assert.deepEqual(translateSpecialKey('enter'), Buffer.from('\r'));
    assert.deepEqual(translateSpecialKey('Ctrl+C'), Buffer.from([0x03]));
    assert.deepEqual(translateSpecialKey('up'), Buffer.from('\x1b[A'));
    assert.deepEqual(translateSpecialKey('delete'), Buffer.from('\x1b[3~'));
    assert.equal(Object.keys(SPECIAL_KEYS).length, 21, '21 special keys');
    assert.throws(() => translateSpecialKey('F13'), /^Error: Unknown special key: F13$/);
    assert.throws(() => translateSpecialKey('constructor'), /Unknown special key: constructor/);
  });

  it('create answers {session_id} only; list omits shell_state before the first observation and never serializes null', async () => {
    // A program that prints nothing is never observed: its shell_state stays omitted. (A bash prompt
    // can arrive between two awaited calls, so a silent program is what makes this deterministic.)
    const silentShell = join(h.work, 'silent.sh');
    writeFileSync(silentShell, '#!/bin/sh\nexec sleep 600\n', { mode: 0o755 });
    const silent = await call(h.session, { action: 'create', cwd: h.work, shell: silentShell });
    const fresh = (await call(h.session, { action: 'list' })).find((e: { session_id: string }) => e.session_id === silent.session_id);
    assert.ok(fresh, 'the new session is listed');
    assert.equal('shell_state' in fresh, false, 'shell_state omitted before the first observation');
    await call(h.session, { action: 'kill', session_id: silent.session_id });

    const created = await call(h.session, { action: 'create', cwd: h.work, rows: 30, cols: 100 });
    assert.deepEqual(Object.keys(created), ['session_id']);
    await call(h.session, { action: 'wait', session_id: created.session_id, until: 'idle', timeout_ms: 20_000 });
    const list = await call(h.session, { action: 'list' });
    assert.ok(hasNoNull(list), JSON.stringify(list));
    const entry = list.find((e: { session_id: string }) => e.session_id === created.session_id);
    assert.equal(entry.is_caller, false);
    assert.equal(entry.shell_state, 'idle', 'session_list_includes_shell_state_per_entry');
    assert.equal(entry.display_name, 'bash');
    assert.equal(entry.cwd, h.work);
    assert.equal(entry.foreground_process, 'bash');
    assert.equal(entry.tuic_session, created.session_id);
    // The prefix comes from the cwd name: a random temp dir can put digits in it (tms5go-1).
    assert.match(entry.alias, /^[a-z0-9]+-\d+$/);
    assert.equal('pty_description' in entry, false, 'absent description omitted');
    assert.equal('child_pid' in entry || 'foreground_pgid' in entry, false);
  });

  it('is_caller marks the session the caller is bound to (by bound PTY, or by its tuic identity)', async () => {
    const record = await h.sessions.create({ cwd: h.work, shell: '/bin/bash', tuic_session: 'agent-identity-1' });
    const byBinding = await call(h.session, { action: 'list' }, caller({ boundSessionId: record.session_id }));
    assert.deepEqual(
      byBinding.filter((e: { is_caller: boolean }) => e.is_caller).map((e: { session_id: string }) => e.session_id),
      [record.session_id],
    );
    const byIdentity = await call(h.session, { action: 'list' }, caller({ tuicSession: 'agent-identity-1' }));
    assert.deepEqual(
      byIdentity.filter((e: { is_caller: boolean }) => e.is_caller).map((e: { session_id: string }) => e.session_id),
      [record.session_id],
    );
  });

  it('create refuses bad sizes, a bad cwd and more than max sessions, each with a clear error', async () => {
    assert.deepEqual(await call(h.session, { action: 'create', rows: 0 }), {
      error: 'rows must be between 1 and 500, got 0',
      code: 'invalid_input',
      field: 'rows',
    });
    assert.deepEqual(await call(h.session, { action: 'create', cols: 501 }), {
      error: 'cols must be between 1 and 500, got 501',
      code: 'invalid_input',
      field: 'cols',
    });
    const missing = join(h.work, 'no-such-dir');
    assert.deepEqual(await call(h.session, { action: 'create', cwd: missing }), {
      error: `Working directory does not exist: ${missing}`,
      code: 'invalid_input',
    });
    const file = join(h.work, 'a-file');
    writeFileSync(file, 'x');
    assert.deepEqual(await call(h.session, { action: 'create', cwd: file }), { error: `Working directory is not a directory: ${file}`, code: 'invalid_input' });
    h.limits.maxSessions = h.sessions.liveCount;
    try {
      assert.deepEqual(await call(h.session, { action: 'create', cwd: h.work }), { error: 'Max concurrent sessions reached', code: 'busy' });
    } finally {
      h.limits.maxSessions = 50;
    }
  });

  it('accepts all three address forms: session id, tuic_session and alias', async () => {
    const record = await h.sessions.create({ cwd: h.work, shell: '/bin/bash', tuic_session: 'agent-identity-2' });
    for (const ref of [record.session_id, 'agent-identity-2', record.alias]) {
      const waited = await call(h.session, { action: 'wait', session_id: ref, until: 'idle', timeout_ms: 20_000 });
      assert.equal(waited.met, true, `wait via ${ref}`);
      const status = await call(h.session, { action: 'status', session_id: ref });
      assert.equal(status.session_id, record.session_id, `status via ${ref}`);
      assert.equal(
        (await call(h.session, { action: 'input', session_id: ref, input: `echo via-$((40+${ref === record.alias ? 3 : 2}))`, special_key: 'enter' })).ok,
        true,
      );
      const out = await call(h.session, { action: 'output', session_id: ref });
      assert.equal(typeof out.cursor, 'number', `output via ${ref}`);
    }
    await outputUntil(h, record.alias, (d) => d.includes('via-42') && d.includes('via-43'), 'commands sent through every address');
  });

  it('refuses write and lifecycle actions to a remote caller; read actions stay open', async () => {
    const id = await idleShell(h);
    for (const action of ['create', 'submit', 'input', 'kill', 'close', 'pause', 'resume']) {
      assert.deepEqual(
        await call(h.session, { action, session_id: id, input: 'echo no' }, REMOTE),
        { error: 'This session action is restricted to localhost connections', code: 'forbidden' },
        action,
      );
    }
    assert.ok(Array.isArray(await call(h.session, { action: 'list' }, REMOTE)));
    assert.equal((await call(h.session, { action: 'status', session_id: id }, REMOTE)).session_id, id);
    assert.equal(typeof (await call(h.session, { action: 'output', session_id: id }, REMOTE)).cursor, 'number');
    assert.equal((await call(h.session, { action: 'wait', session_id: id, timeout_ms: 5000 }, REMOTE)).met, true);
    assert.equal(h.sessions.get(id).exit, null, 'the remote kill/close did nothing');
  });

  it('input writes text and keys; validates its arguments before writing', async () => {
    const id = await idleShell(h);
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id, input: 'echo in-$((6*7))' }), { ok: true });
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id, special_key: 'enter' }), { ok: true });
    await outputUntil(h, id, (d) => d.includes('in-42'), 'computed marker');
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id }), {
      error: "Action 'input' requires 'input' (text), 'special_key', or 'pty_description'",
      code: 'invalid_input',
      field: 'input',
    });
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id, input: 'echo never', special_key: 'F13' }), {
      error: 'Unknown special key: F13',
      code: 'invalid_input',
      field: 'special_key',
    });
    assert.deepEqual(await call(h.session, { action: 'input' }), {
      error: "Action 'input' requires 'session_id'",
      code: 'invalid_input',
      field: 'session_id',
    });
    assert.deepEqual(await call(h.session, { action: 'input', session_id: 'no-such-session', input: 'x' }), {
      error: 'Session not found',
      code: 'not_found',
    });
    assert.equal(h.sessions.inputOf(h.sessions.get(id)).composer.state, 'empty', 'the refused text never reached the composer');
  });

  it('pty_description: a string sets it, omitted keeps it, null or "" clears it; each change is published', async () => {
    const id = await idleShell(h);
    const describe = async () => (await call(h.session, { action: 'list' })).find((e: { session_id: string }) => e.session_id === id);
    const changes = () =>
      h.events.filter((e) => e.name === 'pty-description-changed' && (e.payload as { session_id: string }).session_id === id).map((e) => e.payload);
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id, pty_description: 'review the parser' }), { ok: true });
    assert.equal((await describe()).pty_description, 'review the parser');
    await call(h.session, { action: 'input', session_id: id, special_key: 'ctrl+l' });
    assert.equal((await describe()).pty_description, 'review the parser', 'omitted keeps');
    await call(h.session, { action: 'input', session_id: id, pty_description: '' });
    assert.equal('pty_description' in (await describe()), false, '"" clears');
    await call(h.session, { action: 'input', session_id: id, pty_description: 'again' });
    await call(h.session, { action: 'input', session_id: id, pty_description: null });
    assert.equal('pty_description' in (await describe()), false, 'null clears');
    assert.deepEqual(changes(), [
      { session_id: id, pty_description: 'review the parser' },
      { session_id: id },
      { session_id: id, pty_description: 'again' },
      { session_id: id },
    ]);
    assert.deepEqual(await call(h.session, { action: 'input', session_id: id, pty_description: 7 }), {
      error: "'pty_description' must be a string or null",
      code: 'invalid_input',
      field: 'pty_description',
    });
  });

  it('output: text with a cursor, since_cursor deltas, from_line ranges, raw bytes, and argument errors', async () => {
    const id = await idleShell(h);
    await call(h.session, { action: 'input', session_id: id, input: 'echo first-$((6*7))', special_key: 'enter' });
    // The shell prints the marker and the next prompt in separate writes; a tail read that never shows the
    // unfinished prompt line after the marker times out here.
    const endsWithPrompt = (d: string) => /[#$]\s*$/.test(d.split('\n').at(-1) ?? '');
    const first = await outputUntil(h, id, (d) => d.includes('first-42') && endsWithPrompt(d), 'first marker, then the unfinished prompt line');
    assert.equal(typeof first.cursor, 'number', 'session_output_includes_cursor_field');
    assert.equal(first.total_written, first.cursor);
    assert.equal(first.data_length, first.data.length);
    assert.equal(first.exited, false);
    assert.equal('exit_code' in first, false, 'session_output_omits_unknown_exit_code');
    assert.equal(typeof first.scrollback_lines, 'number');
    assert.equal(first.oldest_offset, 0);
    assert.equal(first.data.includes('\x1b'), false, 'text mode is ANSI-stripped');

    await h.sessions.write(id, Buffer.from('echo second-$((7*7))\r'));
    const delta = await (async () => {
      for (;;) {
        const d = await call(h.session, { action: 'output', session_id: id, since_cursor: first.cursor });
        if (d.data.includes('second-49')) return d;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    assert.equal(delta.data.includes('first-42'), false, 'session_output_since_cursor_returns_delta: old lines are not repeated');
    assert.doesNotMatch(delta.data.split('\n').at(-1) ?? '', /[#$]\s*$/, 'a delta carries no screen row (the prompt)');
    assert.ok(delta.cursor > first.cursor);
    const none = await call(h.session, { action: 'output', session_id: id, since_cursor: delta.cursor });
    assert.equal(none.data, '', 'nothing new since the last cursor');
    // A delta capped by limit resumes right after its last line: nothing is skipped.
    const capped = await call(h.session, { action: 'output', session_id: id, since_cursor: 0, limit: 1 });
    assert.equal(capped.cursor, 1, 'the cursor follows the one line returned, not the end of the log');
    assert.ok(delta.cursor > 1, 'the log has more lines than the capped read returned');
    const next = await call(h.session, { action: 'output', session_id: id, since_cursor: capped.cursor, limit: 1 });
    assert.equal(next.cursor, 2);
    const whole = await call(h.session, { action: 'output', session_id: id, since_cursor: 0 });
    assert.deepEqual([capped.data, next.data], whole.data.split('\n').slice(0, 2), 'capped deltas read the log line by line');

    const range = await call(h.session, { action: 'output', session_id: id, from_line: 0, limit: 1 });
    assert.equal(range.data.split('\n')[0].includes('second-49'), false, 'from_line reads from the start');
    // The shell draws its prompt after the output: read once it has, or the two reads below could straddle it.
    const lastRow = async () => (await h.sessions.readScreen(id)).rows.filter((r) => r !== '').at(-1) ?? '';
    await waitFor(async () => /[#$]\s*$/.test(await lastRow()), 'the prompt after second-49');
    const limited = await call(h.session, { action: 'output', session_id: id, limit: 1 });
    // A tail read is limit scrollback lines, then the non-empty rows of the current screen.
    const screenRows = (await h.sessions.readScreen(id)).rows.filter((r) => r !== '');
    const limitedRows = limited.data.split('\n');
    assert.deepEqual(limitedRows.slice(-screenRows.length), screenRows, 'the tail ends with the screen rows');
    assert.ok(limitedRows.length <= 1 + screenRows.length, 'limit counts scrollback lines (the screen comes on top)');

    const raw = await call(h.session, { action: 'output', session_id: id, format: 'raw' });
    assert.deepEqual(Object.keys(raw).sort(), ['data', 'data_length', 'exited', 'total_written']);
    assert.ok(raw.data.includes('second-49'));
    assert.ok(raw.data.includes('\x1b['), 'raw keeps escape sequences (bash turns bracketed paste on at each prompt)');
    const rawSmall = await call(h.session, { action: 'output', session_id: id, format: 'raw', limit: 5 });
    assert.equal(rawSmall.data_length, 5);
    assert.equal(rawSmall.total_written, h.sessions.get(id).total_written);

    assert.deepEqual(await call(h.session, { action: 'output', session_id: id, format: 'html' }), {
      error: "'format' must be 'raw' or 'text', got 'html'",
      code: 'invalid_input',
      field: 'format',
    });
    assert.deepEqual(await call(h.session, { action: 'output', session_id: id, limit: 0 }), {
      error: "'limit' must be an integer >= 1, got 0",
      code: 'invalid_input',
      field: 'limit',
    });
    assert.deepEqual(await call(h.session, { action: 'output', session_id: id, from_line: 'top' }), {
      error: '\'from_line\' must be an integer >= 0, got "top"',
      code: 'invalid_input',
      field: 'from_line',
    });
    assert.deepEqual(await call(h.session, { action: 'output', session_id: 'no-such-session' }), {
      error: 'Session not found',
      code: 'not_found',
      reason: 'session_not_found_or_reaped',
    });
  });

  it('tombstoned_session_output_returns_last_buffer_and_exit_code; status and list follow the exit', async () => {
    const id = await idleShell(h);
    await h.sessions.write(id, Buffer.from('echo bye-$((6*7)); exit 3\r'));
    const waited = await call(h.session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: 20_000 });
    assert.deepEqual(waited, { met: true, timed_out: false, until: 'exited', shell_state: 'idle', exit_code: 3 });
    const out = await call(h.session, { action: 'output', session_id: id });
    assert.equal(out.exited, true);
    assert.equal(out.exit_code, 3);
    assert.ok(out.data.includes('bye-42'), 'the last buffer stays readable');
    const raw = await call(h.session, { action: 'output', session_id: id, format: 'raw' });
    assert.equal(raw.exit_code, 3);
    const status = await call(h.session, { action: 'status', session_id: id });
    assert.equal(status.exit_code, 3);
    assert.equal(
      (await call(h.session, { action: 'list' })).some((e: { session_id: string }) => e.session_id === id),
      false,
      'list shows live sessions',
    );
    const exited = await call(h.session, { action: 'input', session_id: id, input: 'x' });
    assert.match(exited.error, /^Session has exited/);
    assert.equal(exited.code, 'conflict');
  });

  it('status: the session row with optional fields omitted; an unknown id is named', async () => {
    const id = await idleShell(h);
    const status = await call(h.session, { action: 'status', session_id: id });
    assert.equal(status.session_id, id);
    for (const flag of ['background_work', 'awaiting_input', 'rate_limited', 'delivery_uncertain', 'standby']) assert.equal(status[flag], false, flag);
    assert.equal(status.shell_state, 'idle');
    assert.equal(typeof status.last_activity_ms, 'number');
    assert.equal(typeof status.idle_since_ms, 'number');
    assert.equal('busy_duration_ms' in status || 'exit_code' in status, false);
    assert.ok(hasNoNull(status));
    assert.deepEqual(await call(h.session, { action: 'status', session_id: 'nope' }), { error: "Session 'nope' not found", code: 'not_found' });
    assert.deepEqual(await call(h.session, { action: 'status' }), {
      error: "Action 'status' requires 'session_id'",
      code: 'invalid_input',
      field: 'session_id',
    });
  });

  it('resize sets the size the program sees; pause and resume answer ok; unknown sessions and missing sizes are errors', async () => {
    const id = await idleShell(h);
    assert.deepEqual(await call(h.session, { action: 'resize', session_id: id, rows: 33, cols: 101 }), { ok: true });
    await h.sessions.write(id, Buffer.from('echo size-$(stty size | tr " " x)\r'));
    await outputUntil(h, id, (d) => d.includes('size-33x101'), 'stty size');
    assert.deepEqual(await call(h.session, { action: 'resize', session_id: id, rows: 10 }), {
      error: 'cols is required',
      code: 'invalid_input',
      field: 'cols',
    });
    assert.deepEqual(await call(h.session, { action: 'resize', session_id: id, rows: 0, cols: 10 }), {
      error: 'rows must be between 1 and 500, got 0',
      code: 'invalid_input',
      field: 'rows',
    });
    assert.deepEqual(await call(h.session, { action: 'resize', session_id: 'nope', rows: 10, cols: 10 }), { error: 'Session not found', code: 'not_found' });
    assert.deepEqual(await call(h.session, { action: 'pause', session_id: id }), { ok: true });
    assert.equal(h.sessions.get(id).paused, true);
    assert.deepEqual(await call(h.session, { action: 'resume', session_id: id }), { ok: true });
    assert.equal(h.sessions.get(id).paused, false);
    assert.deepEqual(await call(h.session, { action: 'pause', session_id: 'nope' }), { error: 'Session not found', code: 'not_found' });
    assert.deepEqual(await call(h.session, { action: 'resume', session_id: 'nope' }), { error: 'Session not found', code: 'not_found' });
  });

  it("close: refuses the caller's own session by any address, publishes session-closed (closed), is idempotent", async () => {
    const id = await idleShell(h);
    const alias = h.sessions.get(id).alias;
    const self = caller({ boundSessionId: id });
    for (const ref of [id, alias]) {
      assert.deepEqual(await call(h.session, { action: 'close', session_id: ref }, self), {
        error: 'Cannot close own session. Use exit to terminate yourself.',
        code: 'forbidden',
      });
    }
    assert.equal(h.sessions.get(id).exit, null);
    assert.deepEqual(await call(h.session, { action: 'close', session_id: alias }, LOCAL), { ok: true });
    const closed = h.events.find((e) => e.name === 'session-closed' && (e.payload as { session_id: string }).session_id === id);
    assert.deepEqual(closed?.payload, { session_id: id, reason: 'closed' });
    assert.deepEqual(await call(h.session, { action: 'close', session_id: id }), { ok: true }, 'closing again is fine');
    assert.deepEqual(await call(h.session, { action: 'close', session_id: 'never-existed' }), { ok: true }, 'closing nothing is fine');
    assert.equal((await call(h.session, { action: 'wait', session_id: id, until: 'exited', timeout_ms: 20_000 })).met, true);
  });

  it('kill: SIGKILL with session-closed (killed) and exit status 137; self-kill refused; unknown is Session not found', async () => {
    const id = await idleShell(h);
    assert.deepEqual(await call(h.session, { action: 'kill', session_id: id }, caller({ boundSessionId: id })), {
      error: 'Cannot kill own session. Use exit to terminate yourself.',
      code: 'forbidden',
    });
    assert.deepEqual(await call(h.session, { action: 'kill', session_id: 'nope' }), { error: 'Session not found', code: 'not_found' });
    assert.deepEqual(await call(h.session, { action: 'kill', session_id: id }), { ok: true });
    const closed = h.events.find((e) => e.name === 'session-closed' && (e.payload as { session_id: string }).session_id === id);
    assert.deepEqual(closed?.payload, { session_id: id, reason: 'killed' });
    // The tombstone learns the status when the host reports the exit: 128 + SIGKILL.
    const out = await (async () => {
      for (;;) {
        const o = await call(h.session, { action: 'output', session_id: id });
        if ('exit_code' in o) return o;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    assert.equal(out.exit_code, 137);
    assert.equal(out.exited, true);
    assert.deepEqual(await call(h.session, { action: 'kill', session_id: id }), { ok: true }, 'killing an exited session is a no-op');
  });

  it("process_stats lists each live session's shell with its memory", async () => {
    const id = await idleShell(h);
    const stats = await call(h.session, { action: 'process_stats' });
    const row = stats.processes.find((p: { session_id: string }) => p.session_id === id);
    assert.ok(row, JSON.stringify(stats));
    assert.deepEqual(Object.keys(row).sort(), ['cpu_pct', 'name', 'pid', 'rss_kb', 'session_id']);
    assert.equal(row.pid, h.sessions.get(id).pid);
    assert.equal(row.name, 'bash');
    assert.ok(row.rss_kb > 0);
    assert.equal(
      stats.processes.some((p: { session_id: string }) => h.sessions.resolve(p.session_id)?.exit !== null),
      false,
      'exited sessions are not listed',
    );
  });

  it('unknown and missing actions list the available ones', async () => {
    assert.match(
      (await call(h.session, { action: 'explode' })).error,
      /^Unknown action 'explode' for tool 'session'\. Available: list, create, submit, input, output, status, wait, resize, close, kill, pause, resume, process_stats$/,
    );
    assert.match((await call(h.session, {})).error, /^Missing required 'action' for tool 'session'/);
  });
});
