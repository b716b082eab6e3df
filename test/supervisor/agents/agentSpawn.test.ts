/**
 * agent action=spawn end to end (issue 17): a parent MCP client spawns the scripted fake agent
 * (a stand-in for a paid agent) in a real PTY, gets its state_change mail (awaiting_input,
 * completed, exited) and follows its task handle to completed / failed; a prefill-only agent that
 * never becomes ready trips the prompt watchdog (shortened by TUIC_PROMPT_WATCHDOG_MS here).
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { FAKE_AGENT_JS, fakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const ESC = '\x1b';

describe('agent spawn', { timeout: 90_000 }, () => {
  let t: Tuicd;
  const dirs: string[] = [];
  before(async () => {
    t = await Tuicd.start({ env: { SHELL: '/bin/sh', TUIC_PROMPT_WATCHDOG_MS: '1500' } });
  });
  after(async () => {
    await t?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });

  async function client(): Promise<(name: string, args: Record<string, unknown>) => Promise<{ isError: boolean; value: any }>> {
    const init = await t.socket(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'parent', version: '1' } },
      }),
      {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
    );
    const id = init.headers['mcp-session-id'] as string;
    return async (name, args) => {
      const r = await t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }), {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': id,
      });
      const result = r.json().result;
      const text = result.content[0].text as string;
      return { isError: result.isError === true, value: result.isError ? text : JSON.parse(text) };
    };
  }

  /** Waits for mail until `pred` holds over everything received; returns the state_change payloads. */
  async function mailUntil(
    call: Awaited<ReturnType<typeof client>>,
    pred: (states: Array<Record<string, unknown>>) => boolean,
  ): Promise<Array<Record<string, unknown>>> {
    const payloads: Array<Record<string, unknown>> = [];
    const end = Date.now() + 30_000;
    while (!pred(payloads)) {
      if (Date.now() > end) throw new Error(`no such mail: ${JSON.stringify(payloads)}`);
      const r = await call('agent', { action: 'wait', timeout_ms: 5_000 });
      for (const m of r.value.messages as Array<{ id: string; content: string }>) {
        assert.match(m.id, /^tuic-auto-/);
        payloads.push(JSON.parse(m.content));
      }
    }
    return payloads;
  }

  it('a child that asks, then finishes: awaiting_input, completed, exited mail; the task goes input_required, then completed with exit code 0', async () => {
    const call = await client();
    const parent = (await call('agent', { action: 'register', name: 'boss' })).value;
    const child = fakeAgent('claude', [
      { out: `${ESC}[2J${ESC}[HDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No\r\n\r\nEsc to cancel\r\n` },
      { read: '1' },
      { out: `${ESC}[2J${ESC}[H⏺ Done.\r\n⏺ suggest: [ Review it | Ship it ]\r\n` },
      { sleep: 3_500 },
      { exit: 0 },
    ]);
    dirs.push(dirname(child.scriptPath));
    const spawned = (
      await call('agent', {
        action: 'spawn',
        prompt: 'refactor the parser',
        binary_path: join(child.binDir, 'claude'),
        args: [FAKE_AGENT_JS, child.scriptPath],
        name: 'worker',
        cwd: dirname(child.scriptPath),
      })
    ).value;
    assert.equal(spawned.name, 'worker');
    assert.equal(spawned.parent_session_id, parent.tuic_session);
    assert.equal(spawned.poll_interval_ms, 1000);
    assert.equal(typeof spawned.server_ts, 'number');
    assert.equal(spawned.warning, undefined);
    // The prompt reached the agent as its last argument, with where to report.
    const argv = await (async () => {
      for (let i = 0; i < 50; i++) {
        try {
          return JSON.parse(readFileSync(`${child.scriptPath}.argv`, 'utf8')) as string[];
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      throw new Error('the agent never started');
    })();
    assert.match(argv.at(-1)!, new RegExp(`^refactor the parser\\n\\n\\[TUIC\\] Your parent agent is ${parent.tuic_session}\\.`));
    assert.deepEqual(argv.slice(0, -1), ['--dangerously-load-development-channels', 'server:tuicommander'], 'a Claude child can take channel pushes');
    // It has an inbox at once, listed under its name.
    const peers = (await call('agent', { action: 'list_peers' })).value.peers;
    assert.ok(peers.some((p: { name: string; session_id?: string }) => p.name === 'worker' && p.session_id === spawned.session_id));

    await mailUntil(call, (s) => s.some((p) => p['state'] === 'awaiting_input'));
    assert.equal((await call('task', { action: 'get', task_id: spawned.task_id })).value.status, 'input_required');
    const w = await t.socket('POST', `/sessions/${spawned.session_id}/write`, JSON.stringify({ data: '1' }));
    assert.equal(w.status, 200);
    const mail = await mailUntil(call, (s) => s.some((p) => p['state'] === 'exited'));
    const states = mail.map((p) => p['state']);
    assert.ok(states.indexOf('completed') >= 0 && states.indexOf('completed') < states.indexOf('exited'), states.join(','));
    assert.deepEqual(
      mail.find((p) => p['state'] === 'exited'),
      { type: 'state_change', state: 'exited', session_id: spawned.session_id, exit_code: 0 },
    );
    const task = (await call('task', { action: 'get', task_id: spawned.task_id })).value;
    assert.equal(task.status, 'completed');
    assert.deepEqual(task.result, { session_id: spawned.session_id, exit_code: 0 });
  });

  it('a failing child ends its task failed with its exit code; an unregistered caller gets a warning, not a parent link', async () => {
    const call = await client();
    const child = fakeAgent('claude', [{ out: 'boom\r\n' }, { exit: 3 }]);
    dirs.push(dirname(child.scriptPath));
    const spawned = (
      await call('agent', { action: 'spawn', prompt: 'fail', binary_path: join(child.binDir, 'claude'), args: [FAKE_AGENT_JS, child.scriptPath] })
    ).value;
    assert.equal(spawned.parent_session_id, undefined);
    assert.match(spawned.warning, /not registered/);
    let task;
    for (let i = 0; i < 100; i++) {
      task = (await call('task', { action: 'get', task_id: spawned.task_id })).value;
      if (task.status !== 'working') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(task.status, 'failed');
    assert.deepEqual(task.result, { session_id: spawned.session_id, exit_code: 3 });
    // Registering afterwards links the child and delivers the lifecycle mail kept meanwhile.
    const reg = (await call('agent', { action: 'register', name: 'late-parent' })).value;
    assert.equal(reg.linked_children, 1);
    const inbox = (await call('agent', { action: 'inbox', since: 0 })).value;
    const events = inbox.messages.map((m: { content: string }) => JSON.parse(m.content));
    assert.deepEqual(events.at(-1), { type: 'state_change', state: 'exited', session_id: spawned.session_id, exit_code: 3 });
    assert.equal((await call('agent', { action: 'register' })).value.linked_children, 0, 'linked once');
  });

  it("an idle orchestrator in a terminal gets its children's lifecycle typed as a summary, not a pointer to the inbox", async () => {
    const ready = `${ESC}[2J${ESC}[H⏺ Ready.\r\n\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n`;
    // Like an orchestrator, it answers each typed notice with a short turn, then is ready again.
    const turns = Array.from({ length: 4 }, () => [{ read: '\r' }, { out: '⏺ Noted.\r\n' }, { sleep: 200 }, { out: ready }]).flat();
    const boss = fakeAgent('claude', [{ out: ready }, ...turns, { read: 'quit' }, { exit: 0 }]);
    const worker = fakeAgent('claude', [{ out: 'working\r\n' }, { sleep: 300 }, { exit: 0 }]);
    dirs.push(dirname(boss.scriptPath), dirname(worker.scriptPath));
    const shell = (await t.socket('POST', '/sessions', JSON.stringify({ cwd: dirname(boss.scriptPath), shell: '/bin/sh' }))).json();
    await t.socket('POST', `/sessions/${shell.session_id}/write`, JSON.stringify({ data: `${boss.command}\n` }));
    for (let i = 0; i < 100; i++) {
      const st = ((await t.socket('GET', '/sessions')).json() as Array<{ session_id: string; state: { agent_state?: string } }>).find(
        (r) => r.session_id === shell.session_id,
      )?.state;
      if (st?.agent_state === 'idle') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const init = await t.socket(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'boss', version: '1' } },
      }),
      {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'x-tuic-session': shell.tuic_session,
      },
    );
    const mcp = init.headers['mcp-session-id'] as string;
    const agent = async (args: Record<string, unknown>) =>
      JSON.parse(
        (
          await t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'agent', arguments: args } }), {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'Mcp-Session-Id': mcp,
          })
        ).json().result.content[0].text,
      );
    assert.equal((await agent({ action: 'register', orchestrator: true })).orchestrator, true);
    const spawned = await agent({ action: 'spawn', prompt: 'go', binary_path: join(worker.binDir, 'claude'), args: [FAKE_AGENT_JS, worker.scriptPath] });
    let typed = '';
    for (let i = 0; i < 150 && !typed.includes('exited (exit 0)\r'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      try {
        typed = readFileSync(`${boss.scriptPath}.typed`, 'utf8');
      } catch {
        // not typed into yet
      }
    }
    assert.match(typed, new RegExp(`\\[TUIC\\] [^\\r]*child agent ${spawned.session_id.slice(0, 8)} exited \\(exit 0\\)\\r`));
    assert.doesNotMatch(typed, /message available/, 'only lifecycle mail: no generic pointer');
    // A summary counts as read once acknowledged, i.e. once the agent's reply to it was seen: wait
    // for a reply to every typed notice before reading, or the read races the acknowledgement.
    const notices = typed.split('[TUIC]').length - 1;
    for (let i = 0; i < 100; i++) {
      const out = (await t.socket('GET', `/sessions/${shell.session_id}/output?limit=65536`)).json() as { data: string };
      if (out.data.split('Noted.').length - 1 >= notices) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Acknowledged: the inbox read from the stored cursor has nothing left.
    assert.equal((await agent({ action: 'inbox' })).count, 0);
  });

  it('a prefill-only agent that never shows a ready screen: one prompt_delivery_failed to the parent; the prompt is not on its command line', async () => {
    const call = await client();
    await call('agent', { action: 'register', name: 'boss2' });
    // Always working: its status line animates, so it is never idle.
    const steps = Array.from({ length: 16 }, (_, i) => [{ out: `${ESC}[1;1H• Working (${i}s • esc to interrupt)` }, { sleep: 250 }]).flat();
    const child = fakeAgent('codex', [...steps, { exit: 0 }]);
    dirs.push(dirname(child.scriptPath));
    const spawned = (
      await call('agent', { action: 'spawn', prompt: 'typed later', binary_path: join(child.binDir, 'codex'), args: [FAKE_AGENT_JS, child.scriptPath] })
    ).value;
    const mail = await mailUntil(call, (s) => s.some((p) => p['type'] === 'prompt_delivery_failed'));
    assert.equal(mail.filter((p) => p['type'] === 'prompt_delivery_failed').length, 1);
    assert.deepEqual(
      JSON.parse(readFileSync(`${child.scriptPath}.argv`, 'utf8')),
      ['--ask-for-approval', 'never'],
      'a prefill-only TUI gets the prompt typed, not as an argument; a direct Codex gets the approval-bypass default',
    );
    await t.socket('DELETE', `/sessions/${spawned.session_id}`);
  });

  it('spawn options: env reaches the child, keep_open keeps its terminal, print_mode and output_format shape argv, run configs are authoritative', async () => {
    const call = await client();
    const argvOf = (scriptPath: string) => JSON.parse(readFileSync(`${scriptPath}.argv`, 'utf8')) as string[];
    const until = async <T>(probe: () => Promise<T | undefined>): Promise<T> => {
      for (let i = 0; i < 150; i++) {
        const v = await probe();
        if (v !== undefined) return v;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('timed out');
    };

    // env and keep_open: a plain program prints its variable and exits; the session stays listed.
    const shown = (
      await call('agent', {
        action: 'spawn',
        prompt: 'ignored',
        binary_path: '/bin/sh',
        args: ['-c', 'printf "V=%s\\n" "$SPAWN_VAR"; exit 0'],
        env: { SPAWN_VAR: 'from-env' },
        keep_open: true,
      })
    ).value;
    assert.equal(shown.launch_warning, undefined);
    const row = await until(async () => {
      const r = ((await t.socket('GET', '/sessions')).json() as Array<Record<string, any>>).find((s) => s.session_id === shown.session_id);
      return r?.['exit'] ? r : undefined;
    });
    assert.equal(row['keep_open'], true);
    assert.match((await t.socket('GET', `/sessions/${shown.session_id}/output`)).json().data, /V=from-env/);
    await t.socket('DELETE', `/sessions/${shown.session_id}`);
    assert.equal((await t.socket('GET', `/sessions/${shown.session_id}/output`)).status, 404, 'closing a kept terminal forgets it');

    // print_mode: Claude's one-shot form, no channel flag; the prompt stays last.
    const printer = fakeAgent('claude', [{ out: '{"result":"ok"}\r\n' }, { exit: 0 }]);
    dirs.push(dirname(printer.scriptPath));
    await call('agent', {
      action: 'spawn',
      prompt: 'summarize',
      binary_path: join(printer.binDir, 'claude'),
      args: [FAKE_AGENT_JS, printer.scriptPath],
      print_mode: true,
      output_format: 'json',
    });
    assert.deepEqual(
      await until(async () => {
        try {
          return argvOf(printer.scriptPath);
        } catch {
          return undefined;
        }
      }),
      ['-p', '--output-format', 'json', 'summarize'],
    );

    // A run config named by agent_type (case-insensitive) wins over binary names; its argv is left as written.
    const wrapped = fakeAgent('codex', [{ exit: 0 }]);
    dirs.push(dirname(wrapped.scriptPath));
    writeFileSync(
      join(t.configDir, 'agents.json'),
      JSON.stringify({
        agents: {
          codex: {
            run_configs: [
              { name: 'codex-wrap', command: join(wrapped.binDir, 'codex'), args: [FAKE_AGENT_JS, wrapped.scriptPath, '--profile', 'ci', '{prompt}'] },
            ],
          },
        },
      }),
    );
    const viaConfig = (await call('agent', { action: 'spawn', prompt: 'do it', agent_type: 'Codex-Wrap' })).value;
    assert.match(viaConfig.launch_warning, /cannot check the flags/);
    assert.deepEqual(
      await until(async () => {
        try {
          return argvOf(wrapped.scriptPath);
        } catch {
          return undefined;
        }
      }),
      ['--profile', 'ci', 'do it'],
      'no approval flag added, the prompt where {prompt} was, not deferred',
    );

    const err = async (args: Record<string, unknown>) => JSON.parse((await call('agent', { action: 'spawn', prompt: 'x', ...args })).value).error as string;
    assert.match(await err({ binary_path: '/bin/sh', env: { TUIC_SESSION: 'x' } }), /env may not set TUIC_SESSION/);
    assert.match(await err({ binary_path: '/bin/sh', env: { '1BAD': 'x' } }), /env name/);
    assert.match(await err({ binary_path: '/bin/sh', env: ['A=1'] }), /env must be an object/);
    assert.equal(await err({ binary_path: '/bin/sh', output_format: 'json' }), "'output_format' needs print_mode=true");
    assert.match(await err({ binary_path: '/bin/sh', print_mode: true }), /print_mode is known for claude, codex and gemini; not for 'sh'/);
    assert.match(await err({ binary_path: join(wrapped.binDir, 'codex'), print_mode: true, output_format: 'xml' }), /output_format 'xml'/);
    assert.match(await err({ binary_path: '/bin/sh', connection_id: 'remote-1' }), /runs agents on this machine only/);
    assert.match(await err({ binary_path: '/bin/sh', keep_open: 'yes' }), /'keep_open' must be a boolean/);
  });

  it('errors: missing prompt, relative or missing binary, unknown agent type', async () => {
    const call = await client();
    const err = async (args: Record<string, unknown>) => {
      const r = await call('agent', { action: 'spawn', ...args });
      assert.equal(r.isError, true, JSON.stringify(r.value));
      return JSON.parse(r.value).error as string;
    };
    assert.equal(await err({}), "Action 'spawn' requires 'prompt'");
    assert.equal(await err({ prompt: 'x', binary_path: 'bin/claude' }), 'binary_path must be an absolute path');
    assert.equal(await err({ prompt: 'x', binary_path: '/nonexistent/claude' }), "Agent binary '/nonexistent/claude' not found");
    assert.equal(await err({ prompt: 'x', agent_type: 'no-such-agent-here' }), "Agent binary 'no-such-agent-here' not found");
    assert.equal(await err({ prompt: 'x', agent_type: 'claude', name: '  ' }), "'name' must not be empty");
  });
});
