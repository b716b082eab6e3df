/**
 * The ai_terminal_* tools' two gates, through a real tuicd: ai_terminal_mcp_enabled (off by default:
 * not listed, a call refused saying how to turn them on; PUT /config turns them on) and the user's
 * confirmation for every write tool (the `mcp-confirm` event on /events, answered with POST
 * /mcp/confirm-response): denied or left unanswered past a short TUIC_CONFIRM_TIMEOUT_MS, nothing
 * is typed, written or run; confirmed, each does its work in a real shell session.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { mcpSocketClient } from '../../helpers/mcpSocket.js';
import { waitFor } from '../../helpers/poll.js';
import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const CONFIRM_WINDOW_MS = 1500;
const TOOLS = [
  'ai_terminal_read_screen',
  'ai_terminal_send_input',
  'ai_terminal_send_key',
  'ai_terminal_wait_for',
  'ai_terminal_get_state',
  'ai_terminal_get_context',
  'ai_terminal_drive_agent',
  'ai_terminal_read_file',
  'ai_terminal_write_file',
  'ai_terminal_edit_file',
  'ai_terminal_list_files',
  'ai_terminal_search_files',
  'ai_terminal_run_command',
];

describe('ai_terminal: off by default, and every write tool waits for the user', () => {
  let sb: GitSandbox;
  let repo: string;
  let t: Tuicd;
  let sse: SseClient;
  let sessionId: string;
  let alias: string;
  let tuicSession: string;

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('proj', { 'README.md': '# proj\n' });
    // Started from inside tmux and a Claude Code terminal: neither may reach what the tools run.
    t = await Tuicd.start({
      env: { ...sb.env, SHELL: '/bin/sh', TUIC_CONFIRM_TIMEOUT_MS: String(CONFIRM_WINDOW_MS), TMUX: '/tmp/tmux-1000/default,1234,0', CLAUDECODE: '1' },
    });
    sse = await SseClient.open({ socketPath: t.socketPath, path: '/events' });
    const r = await t.socket('POST', '/sessions', JSON.stringify({ cwd: repo, shell: '/bin/sh' }));
    assert.equal(r.status, 201, r.text);
    sessionId = r.json().session_id;
    alias = r.json().alias;
    tuicSession = r.json().tuic_session;
  });
  after(async () => {
    sse?.close();
    await t?.stop();
    sb?.cleanup();
  });

  /** One call per write tool, each with the evidence it would leave had it run. */
  const writeCalls = (): Array<{ name: string; args: Record<string, unknown>; untouched: () => void }> => [
    {
      name: 'ai_terminal_send_input',
      args: { session_id: sessionId, command: 'touch typed.txt' },
      untouched: () => assert.equal(existsSync(join(repo, 'typed.txt')), false),
    },
    { name: 'ai_terminal_send_key', args: { session_id: sessionId, key: 'ctrl+c' }, untouched: () => undefined },
    {
      name: 'ai_terminal_drive_agent',
      args: { session_id: sessionId, command: 'touch drove.txt' },
      untouched: () => assert.equal(existsSync(join(repo, 'drove.txt')), false),
    },
    {
      name: 'ai_terminal_write_file',
      args: { session_id: sessionId, file_path: 'written.txt', content: 'x\n' },
      untouched: () => assert.equal(existsSync(join(repo, 'written.txt')), false),
    },
    {
      name: 'ai_terminal_edit_file',
      args: { session_id: sessionId, file_path: 'README.md', old_string: '# proj', new_string: '# edited' },
      untouched: () => assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), '# proj\n'),
    },
    {
      name: 'ai_terminal_run_command',
      args: { session_id: sessionId, command: 'touch ran.txt' },
      untouched: () => assert.equal(existsSync(join(repo, 'ran.txt')), false),
    },
  ];

  /** The confirm a tool's call raised (its title names the tool and the session). */
  const confirmFor = async (tool: string, seenBefore: number) =>
    JSON.parse(
      (await sse.waitFor((e) => e.event === 'mcp-confirm' && sse.events.indexOf(e) >= seenBefore && JSON.parse(e.data).title === `${tool} on ${alias}`)).data,
    );
  const answer = (requestId: string, confirmed: boolean) =>
    t.socket('POST', '/mcp/confirm-response', JSON.stringify({ request_id: requestId, confirmed }), { 'Content-Type': 'application/json' });

  it('with ai_terminal_mcp_enabled off (the default) the tools are not listed and a call is refused saying how to turn them on', async () => {
    const mcp = await mcpSocketClient(t);
    const names = (await mcp.listTools()).map((tool) => tool.name);
    assert.deepEqual(
      names.filter((n) => n.startsWith('ai_terminal_')),
      [],
    );
    for (const name of TOOLS) {
      const r = await mcp.callTool(name, { session_id: sessionId, file_path: 'README.md', command: 'touch off.txt', content: 'x', key: 'enter' });
      assert.equal(r.isError, true, name);
      assert.equal(r.value.code, 'forbidden');
      assert.match(r.value.error, new RegExp(`Tool '${name}' is off: .*ai_terminal_mcp_enabled set to true`));
    }
    assert.equal(existsSync(join(repo, 'off.txt')), false);
  });

  it('PUT /config ai_terminal_mcp_enabled=true lists all thirteen, in order', async () => {
    const put = await t.socket('PUT', '/config', JSON.stringify({ ai_terminal_mcp_enabled: true }), { 'content-type': 'application/json' });
    assert.equal(put.status, 200, put.text);
    const mcp = await mcpSocketClient(t);
    const names = (await mcp.listTools()).map((tool) => tool.name);
    assert.deepEqual(
      names.filter((n) => n.startsWith('ai_terminal_')),
      TOOLS,
    );
    const idle = await mcp.callTool('session', { action: 'wait', session_id: sessionId, until: 'idle', timeout_ms: 20_000 });
    assert.equal(idle.value.met, true, JSON.stringify(idle.value));
  });

  it('denied: every write tool is refused with confirmed:false and has done nothing', async () => {
    const mcp = await mcpSocketClient(t);
    const seen = sse.events.length;
    const calls = writeCalls();
    const pending = calls.map((c) => mcp.callTool(c.name, c.args));
    for (const c of calls) {
      const asked = await confirmFor(c.name, seen);
      assert.equal(asked.origin_session_id !== undefined, true);
      assert.equal((await answer(asked.request_id, false)).status, 200);
    }
    const results = await Promise.all(pending);
    results.forEach((r, i) => {
      assert.equal(r.isError, true, calls[i]!.name);
      assert.deepEqual(
        { code: r.value.code, confirmed: r.value.confirmed, reason: r.value.reason },
        { code: 'forbidden', confirmed: false, reason: 'the user denied it' },
        calls[i]!.name,
      );
      assert.match(r.value.error, new RegExp(`^${calls[i]!.name} was not confirmed \\(the user denied it\\); nothing was done$`));
      calls[i]!.untouched();
    });
  });

  it('unanswered: every write tool is refused once the confirm window ends, having done nothing', async () => {
    const mcp = await mcpSocketClient(t);
    const seen = sse.events.length;
    const calls = writeCalls();
    const results = await Promise.all(calls.map((c) => mcp.callTool(c.name, c.args)));
    for (const c of calls) await confirmFor(c.name, seen);
    results.forEach((r, i) => {
      assert.equal(r.isError, true, calls[i]!.name);
      assert.equal(r.value.code, 'forbidden');
      assert.equal(r.value.confirmed, false);
      assert.equal(r.value.reason, `no answer within ${CONFIRM_WINDOW_MS}ms`);
      calls[i]!.untouched();
    });
  });

  it('arguments are checked before anyone is asked', async () => {
    const mcp = await mcpSocketClient(t);
    const seen = sse.events.filter((e) => e.event === 'mcp-confirm').length;
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['ai_terminal_send_key', { session_id: sessionId, key: 'hyper+q' }, /Unknown special key: hyper\+q/],
      ['ai_terminal_send_input', { session_id: sessionId }, /requires a non-empty 'command'/],
      ['ai_terminal_send_input', { session_id: 'no-such-session', command: 'ls' }, /Session 'no-such-session' not found/],
      ['ai_terminal_write_file', { session_id: sessionId, file_path: '../escape.txt', content: 'x' }, /contains '\.\.'/],
      ['ai_terminal_edit_file', { session_id: sessionId, file_path: 'README.md', old_string: 'absent', new_string: 'y' }, /'old_string' does not occur/],
      ['ai_terminal_run_command', { session_id: sessionId, command: 'rm -rf /' }, /refuses destructive commands/],
      ['ai_terminal_run_command', { session_id: sessionId, command: 'git push --force origin main' }, /refuses destructive commands \(force-pushing/],
      ['ai_terminal_drive_agent', { session_id: sessionId, command: 'ls', wait_pattern: '(' }, /'wait_pattern' is not a usable regular expression/],
    ];
    for (const [name, args, message] of bad) {
      const r = await mcp.callTool(name, args);
      assert.equal(r.isError, true, name);
      assert.match(r.value.error, message, `${name}: ${r.value.error}`);
    }
    assert.equal(sse.events.filter((e) => e.event === 'mcp-confirm').length, seen, 'no confirm was asked for');
  });

  it('confirmed: each write tool does its work', async () => {
    const mcp = await mcpSocketClient(t);
    const confirmed = async (name: string, args: Record<string, unknown>) => {
      const seen = sse.events.length;
      const pending = mcp.callTool(name, args);
      const asked = await confirmFor(name, seen);
      assert.equal((await answer(asked.request_id, true)).status, 200);
      const r = await pending;
      assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.value)}`);
      return { value: r.value, message: asked.message as string };
    };
    const wrote = await confirmed('ai_terminal_write_file', { session_id: sessionId, file_path: 'docs/new.txt', content: 'hello\n' });
    assert.deepEqual(wrote.value, { ok: true, file_path: 'docs/new.txt', bytes: 6 });
    assert.equal(readFileSync(join(repo, 'docs/new.txt'), 'utf8'), 'hello\n');
    assert.match(wrote.message, /Write 6 bytes to docs\/new\.txt/);

    const edited = await confirmed('ai_terminal_edit_file', { session_id: sessionId, file_path: 'README.md', old_string: '# proj', new_string: '# edited' });
    assert.deepEqual(edited.value, { ok: true, file_path: 'README.md', replacements: 1 });
    assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), '# edited\n');

    const ran = await confirmed('ai_terminal_run_command', { session_id: sessionId, command: 'pwd; echo oops >&2; exit 3' });
    assert.deepEqual(ran.value, { exit_code: 3, signal: null, stdout: `${repo}\n`, stderr: 'oops\n', timed_out: false, truncated: false });
    assert.match(ran.message, /Run in \.: pwd; echo oops/);
    // The session's environment: tuicd's TMUX and CLAUDECODE stay out, TUIC_SESSION names the session.
    const env = await confirmed('ai_terminal_run_command', {
      session_id: sessionId,
      command: 'echo "$(printenv TMUX || echo none) $(printenv CLAUDECODE || echo none) $TUIC_SESSION"',
    });
    assert.equal(env.value.stdout, `none none ${tuicSession}\n`);
    // The timeout kills the command's whole process group, a child it started in the background included.
    const slow = await confirmed('ai_terminal_run_command', { session_id: sessionId, command: 'sleep 60 & echo started; wait', timeout_ms: 500 });
    assert.deepEqual(
      { stdout: slow.value.stdout, timed_out: slow.value.timed_out, signal: slow.value.signal },
      { stdout: 'started\n', timed_out: true, signal: 'SIGKILL' },
    );

    // Refused as `session submit` refuses, with its reason: a program runs in the foreground, nothing is typed.
    await mcp.callTool('session', { action: 'input', session_id: sessionId, input: 'sleep 60\r' });
    await waitFor(async () => (await t.socket('GET', `/sessions/${sessionId}/has-foreground`)).json().process === 'sleep', 'sleep in the foreground');
    const refused = await confirmed('ai_terminal_send_input', { session_id: sessionId, command: 'touch refused.txt' });
    assert.equal(refused.value.submitted, false, JSON.stringify(refused.value));
    assert.deepEqual([refused.value.write_state, refused.value.retry_safe], ['not_started', true]);
    assert.ok(['shell_busy', 'foreground_job_running'].includes(refused.value.reason), JSON.stringify(refused.value));
    await mcp.callTool('session', { action: 'input', session_id: sessionId, special_key: 'ctrl+c' });
    await waitFor(async () => (await t.socket('GET', `/sessions/${sessionId}/has-foreground`)).json().process === null, 'back at the prompt');
    await mcp.callTool('session', { action: 'wait', session_id: sessionId, until: 'idle', timeout_ms: 20_000 });
    assert.equal(existsSync(join(repo, 'refused.txt')), false);

    const typed = await confirmed('ai_terminal_send_input', { session_id: sessionId, command: 'touch typed.txt' });
    assert.equal(typed.value.submitted, true, JSON.stringify(typed.value));
    await waitFor(() => existsSync(join(repo, 'typed.txt')), 'the typed command ran in the session');

    const idle = await mcp.callTool('session', { action: 'wait', session_id: sessionId, until: 'idle', timeout_ms: 20_000 });
    assert.equal(idle.value.met, true);
    const driven = await confirmed('ai_terminal_drive_agent', { session_id: sessionId, command: 'echo DRIVEN_$((6*7))', wait_pattern: '^DRIVEN_42$' });
    assert.equal(driven.value.matched, true, JSON.stringify(driven.value));
    assert.equal(driven.value.receipt.submitted, true);
    assert.match(driven.value.screen, /^DRIVEN_42$/m);

    await mcp.callTool('session', { action: 'wait', session_id: sessionId, until: 'idle', timeout_ms: 20_000 });
    await mcp.callTool('session', { action: 'input', session_id: sessionId, input: 'echo KEY_$((1+1))' });
    const key = await confirmed('ai_terminal_send_key', { session_id: sessionId, key: 'Enter' });
    assert.deepEqual(key.value, { ok: true });
    const shown = await mcp.callTool('ai_terminal_wait_for', { session_id: sessionId, pattern: '^KEY_2$', timeout_ms: 20_000 });
    assert.equal(shown.value.matched, true, JSON.stringify(shown.value));
  });

  it('a path that leads out of the sandbox by the time the confirm comes is refused; nothing is written outside', async () => {
    const mcp = await mcpSocketClient(t);
    const outside = mkdtempSync(join(tmpdir(), 'tuicd-ai-outside-'));
    try {
      mkdirSync(join(repo, 'swap'));
      const seen = sse.events.length;
      const pending = mcp.callTool('ai_terminal_write_file', { session_id: sessionId, file_path: 'swap/f.txt', content: 'x\n' });
      const asked = await confirmFor('ai_terminal_write_file', seen);
      // While the user reads the question, the directory becomes a symlink out of the repository.
      rmSync(join(repo, 'swap'), { recursive: true });
      symlinkSync(outside, join(repo, 'swap'));
      assert.equal((await answer(asked.request_id, true)).status, 200);
      const r = await pending;
      assert.equal(r.isError, true, JSON.stringify(r.value));
      assert.match(r.value.error, /outside the session's sandbox/);
      assert.equal(existsSync(join(outside, 'f.txt')), false);
    } finally {
      rmSync(join(repo, 'swap'), { force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
