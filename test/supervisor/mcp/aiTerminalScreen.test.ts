/**
 * The ai_terminal_* read tools against a real tuicd and real /bin/sh sessions: read_screen (tail,
 * delta with since_cursor, redaction, `lines`), wait_for (a pattern, a timeout, the output
 * settling), get_state and get_context (the branch from .git/HEAD, in a repository and in a linked
 * worktree; the exit code once the shell exited). None of them asks for a confirmation.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { mcpSocketClient, type McpSocketClient } from '../../helpers/mcpSocket.js';
import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const FAKE_OPENAI_KEY = ['sk', 'proj', 'Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3'].join('-');

describe('ai_terminal read tools on a real PTY', () => {
  let sb: GitSandbox;
  let repo: string;
  let t: Tuicd;
  let sse: SseClient;
  let mcp: McpSocketClient;
  let sessionId: string;

  const create = async (cwd: string): Promise<string> => {
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd, shell: '/bin/sh' }));
    assert.equal(r.status, 201, r.text);
    const id = r.json().session_id as string;
    const idle = await mcp.callTool('session', { action: 'wait', session_id: id, until: 'idle', timeout_ms: 20_000 });
    assert.equal(idle.value.met, true, JSON.stringify(idle.value));
    return id;
  };
  /** Runs a command in the session (the session tool: no confirmation) and waits for its marker line. */
  const run = async (id: string, command: string, marker: string) => {
    const r = await mcp.callTool('session', { action: 'submit', session_id: id, input: command });
    assert.equal(r.value.submitted, true, JSON.stringify(r.value));
    const seen = await mcp.callTool('ai_terminal_wait_for', { session_id: id, pattern: `^${marker}$`, timeout_ms: 20_000 });
    assert.equal(seen.value.matched, true, JSON.stringify(seen.value));
    await mcp.callTool('session', { action: 'wait', session_id: id, until: 'idle', timeout_ms: 20_000 });
  };

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('screen-proj', { 'a.txt': 'a\n' });
    t = await Tuicd.start({ config: { ai_terminal_mcp_enabled: true }, env: { ...sb.env, SHELL: '/bin/sh' } });
    sse = await SseClient.open({ socketPath: t.socketPath, path: '/events' });
    mcp = await mcpSocketClient(t);
    sessionId = await create(repo);
  });
  after(async () => {
    sse?.close();
    await t?.stop();
    sb?.cleanup();
  });

  it('read_screen shows the tail with the screen, then only newer lines after since_cursor; secrets redacted', async () => {
    await run(sessionId, "printf 'alpha-%s\\nbeta-%s\\n' 1 2", 'beta-2');
    const tail = await mcp.callTool('ai_terminal_read_screen', { session_id: sessionId });
    assert.equal(tail.isError, false, JSON.stringify(tail.value));
    assert.match(tail.value.screen, /^alpha-1\nbeta-2$/m);
    assert.equal(typeof tail.value.cursor, 'number');
    assert.equal(tail.value.shell_state, 'idle');
    assert.equal(tail.value.awaiting_input, false);

    await run(sessionId, `echo "gamma-$((2+1))"; echo "OPENAI_API_KEY=${FAKE_OPENAI_KEY}"`, 'gamma-3');
    const delta = await mcp.callTool('ai_terminal_read_screen', { session_id: sessionId, since_cursor: tail.value.cursor });
    assert.match(delta.value.screen, /^gamma-3$/m);
    assert.doesNotMatch(delta.value.screen, /alpha-1/);
    assert.ok(delta.value.cursor > tail.value.cursor);
    const all = await mcp.callTool('ai_terminal_read_screen', { session_id: sessionId, lines: 500 });
    assert.ok(!all.value.screen.includes(FAKE_OPENAI_KEY), 'the key never leaves redacted');
    assert.match(all.value.screen, /OPENAI_API_KEY=\[REDACTED:\w+\]/);

    const one = await mcp.callTool('ai_terminal_read_screen', { session_id: sessionId, lines: 1 });
    assert.equal(one.value.screen.split('\n').length, 1);
    const tooMany = await mcp.callTool('ai_terminal_read_screen', { session_id: sessionId, lines: 501 });
    assert.equal(tooMany.isError, true);
    assert.match(tooMany.value.error, /'lines' must be an integer between 1 and 500/);
    const unknown = await mcp.callTool('ai_terminal_read_screen', { session_id: 'nope' });
    assert.deepEqual({ code: unknown.value.code, error: unknown.value.error }, { code: 'not_found', error: "Session 'nope' not found" });
  });

  it('wait_for: a pattern that shows, one that never does (timed_out), and quiet output', async () => {
    const pending = mcp.callTool('ai_terminal_wait_for', { session_id: sessionId, pattern: 'LATE-(\\d+)', timeout_ms: 20_000 });
    await mcp.callTool('session', { action: 'submit', session_id: sessionId, input: 'sleep 0.2; echo LATE-$((40+2))' });
    const late = await pending;
    assert.equal(late.value.matched, true, JSON.stringify(late.value));
    assert.equal(late.value.match, 'LATE-42');
    assert.match(late.value.screen, /LATE-42/);
    await mcp.callTool('session', { action: 'wait', session_id: sessionId, until: 'idle', timeout_ms: 20_000 });

    const never = await mcp.callTool('ai_terminal_wait_for', { session_id: sessionId, pattern: 'NEVER-PRINTED', timeout_ms: 300 });
    assert.deepEqual({ matched: never.value.matched, timed_out: never.value.timed_out }, { matched: false, timed_out: true });
    const quiet = await mcp.callTool('ai_terminal_wait_for', { session_id: sessionId, stability_ms: 100, timeout_ms: 20_000 });
    assert.deepEqual({ matched: quiet.value.matched, timed_out: quiet.value.timed_out }, { matched: true, timed_out: false });
    const bad = await mcp.callTool('ai_terminal_wait_for', { session_id: sessionId, pattern: '[' });
    assert.equal(bad.isError, true);
    assert.match(bad.value.error, /'pattern' is not a usable regular expression/);
    // Matched on the supervisor's loop, so a pattern that backtracks exponentially on what is on screen
    // (40 a's then '!') must not freeze it: it answers, unmatched, within its timeout.
    await mcp.callTool('session', { action: 'submit', session_id: sessionId, input: `echo ${'a'.repeat(40)}!` });
    await mcp.callTool('session', { action: 'wait', session_id: sessionId, until: 'idle', timeout_ms: 20_000 });
    const redos = await mcp.callTool('ai_terminal_wait_for', { session_id: sessionId, pattern: '^(a+)+$', timeout_ms: 300 });
    assert.deepEqual({ matched: redos.value.matched, timed_out: redos.value.timed_out }, { matched: false, timed_out: true });
    const backref = await mcp.callTool('ai_terminal_wait_for', { session_id: sessionId, pattern: '(a)\\1' });
    assert.match(backref.value.error, /linear time/, 'a pattern the linear engine cannot run is refused');
  });

  it('get_state and get_context describe the session; the branch comes from .git/HEAD, in a linked worktree too', async () => {
    const state = await mcp.callTool('ai_terminal_get_state', { session_id: sessionId });
    assert.equal(state.isError, false, JSON.stringify(state.value));
    assert.deepEqual(
      { id: state.value.session_id, cwd: state.value.cwd, shell: state.value.shell_state, mode: state.value.terminal_mode, exited: state.value.exited },
      { id: sessionId, cwd: repo, shell: 'idle', mode: 'shell', exited: false },
    );
    const context = await mcp.callTool('ai_terminal_get_context', { session_id: sessionId });
    assert.deepEqual(context.value, { shell_state: 'idle', cwd: repo, git_branch: 'main', last_exit_code: null, agent_type: null, terminal_mode: 'shell' });
    sb.git(repo, 'checkout', '-q', '-b', 'feature/x');
    assert.equal((await mcp.callTool('ai_terminal_get_context', { session_id: sessionId })).value.git_branch, 'feature/x');

    const worktree = join(dirname(repo), 'screen-proj-wt');
    sb.git(repo, 'worktree', 'add', '-q', '-b', 'wt-branch', worktree);
    const inWorktree = await create(join(worktree));
    assert.equal((await mcp.callTool('ai_terminal_get_context', { session_id: inWorktree })).value.git_branch, 'wt-branch');

    await mcp.callTool('session', { action: 'submit', session_id: inWorktree, input: 'exit 7' });
    const exited = await mcp.callTool('session', { action: 'wait', session_id: inWorktree, until: 'exited', timeout_ms: 20_000 });
    assert.equal(exited.value.met, true);
    const after = await mcp.callTool('ai_terminal_get_context', { session_id: inWorktree });
    assert.deepEqual(
      { code: after.value.last_exit_code, mode: after.value.terminal_mode, shell: after.value.shell_state },
      { code: 7, mode: 'exited', shell: 'exited' },
    );
    assert.equal((await mcp.callTool('ai_terminal_get_state', { session_id: inWorktree })).value.exit_code, 7);
    assert.equal((await mcp.callTool('ai_terminal_read_screen', { session_id: inWorktree })).isError, false, 'an exited session stays readable');
    assert.equal(sse.events.filter((e) => e.event === 'mcp-confirm').length, 0, 'no read tool asked for a confirmation');
  });
});
