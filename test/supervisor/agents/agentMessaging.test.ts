/**
 * Inter-agent messaging end to end (issue 17, first slice): MCP clients bound to real PTY sessions by
 * x-tuic-session (Protocol 0 auto-identity), fake agents in those PTYs, and a headerless peer. Every
 * address form, every delivery path (waiter, channel push on the GET stream, PTY injection now or
 * at the next idle, inbox only), exactly-once under 100 concurrent sends, and the error texts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { fakeAgent, removeFakeAgent } from '../../fixtures/fakeAgent/fakeAgentLauncher.js';
import { sessionSuite } from '../../helpers/sessionSuite.js';
import { SseClient } from '../../helpers/sseClient.js';

const ESC = '\x1b';
const READY = `${ESC}[2J${ESC}[H⏺ Ready.\r\n\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n`;

describe('agent messaging', { timeout: 120_000 }, () => {
  const suite = sessionSuite('tuicd-agent-mail-');

  interface Client {
    id: string;
    call(args: Record<string, unknown>): Promise<any>;
    /** The raw tool result (isError and text) for error checks. */
    raw(args: Record<string, unknown>): Promise<{ isError: boolean; text: string }>;
  }

  async function connect(headers: Record<string, string> = {}, clientName = 'test-agent'): Promise<Client> {
    const init = await suite.t.socket(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: clientName, version: '1' } },
      }),
      { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    );
    const id = init.headers['mcp-session-id'] as string;
    assert.ok(id, init.text);
    const raw = async (args: Record<string, unknown>) => {
      const r = await suite.t.socket(
        'POST',
        '/mcp',
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'agent', arguments: args } }),
        {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': id,
        },
      );
      const result = r.json().result;
      assert.ok(result, r.text);
      return { isError: result.isError === true, text: result.content[0].text as string };
    };
    return {
      id,
      raw,
      async call(args) {
        const r = await raw(args);
        assert.equal(r.isError, false, r.text);
        return JSON.parse(r.text);
      },
    };
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const stateOf = async (id: string): Promise<Record<string, any>> =>
    ((await suite.t.socket('GET', '/sessions')).json() as Array<{ session_id: string; state: Record<string, any> }>).find((r) => r.session_id === id)?.state ??
    {};

  it('peers in two terminals: auto-registered, listed, addressed three ways, woken by wait, typed into when idle, queued while busy', async () => {
    // B: an idle fake claude that reads one [TUIC] line, then works (status line) until told to stop, then reads another.
    const b = fakeAgent('claude', [
      { out: READY },
      { read: '[TUIC] Message from' },
      { read: '\r' },
      {
        out: `${ESC}[2J${ESC}[H⏺ On it.\r\n\r\n✢ Thinking… (1s)\r\n\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n`,
      },
      { read: 'stop' },
      { out: READY },
      { read: '[TUIC] Message from' },
      { read: '\r' },
      { read: 'quit' },
      { exit: 0 },
    ]);
    const sa = await suite.create();
    const sb = await suite.create();
    try {
      await suite.write(sb.session_id, `${b.command}\n`);
      await until('B idle as claude', async () => {
        const st = await stateOf(sb.session_id);
        return st['agent_type'] === 'claude' && st['agent_state'] === 'idle' ? true : undefined;
      });
      const events = suite.sse.events.length;
      const a = await connect({ 'x-tuic-session': sa.tuic_session });
      const bClient = await connect({ 'x-tuic-session': sb.tuic_session });
      const registered = await until('both peer-registered events', () => {
        const ids = suite.sse.events
          .slice(events)
          .filter((e) => e.event === 'peer-registered')
          .map((e) => JSON.parse(e.data).tuic_session as string);
        return ids.length >= 2 ? ids : undefined;
      });
      assert.deepEqual(registered.sort(), [sa.tuic_session, sb.tuic_session].sort());

      const renamed = await a.call({ action: 'register', name: 'alpha', path: suite.work });
      assert.equal(renamed.tuic_session, sa.tuic_session);
      assert.equal(renamed.name, 'alpha');
      assert.equal(renamed.terminal, true);
      assert.equal(renamed.identity_generated, false);
      assert.equal(renamed.mail_wake, 'none', 'a plain shell has no agent lifecycle to wake');
      const peers = (await a.call({ action: 'list_peers' })).peers;
      const bEntry = peers.find((p: { tuic_session: string }) => p.tuic_session === sb.tuic_session);
      assert.equal(bEntry.session_id, sb.session_id);
      assert.equal(bEntry.alias, sb.alias);
      assert.deepEqual(
        (await a.call({ action: 'list_peers', path: suite.work })).peers.map((p: { name: string }) => p.name),
        ['alpha'],
      );

      // Waiter: B waits, A sends by tuic_session.
      const waiting = bClient.call({ action: 'wait', timeout_ms: 10_000 });
      await new Promise((r) => setTimeout(r, 200));
      const viaWaiter = await a.call({ action: 'send', to: sb.tuic_session, message: 'first, for your wait' });
      assert.equal(viaWaiter.delivery_path, 'waiter_and_inbox');
      assert.equal(viaWaiter.delivered, true);
      const woken = await waiting;
      assert.equal(woken.met, true);
      assert.deepEqual(
        woken.messages.map((m: { content: string }) => m.content),
        ['first, for your wait'],
      );
      assert.equal(woken.messages[0].from_name, 'alpha');
      assert.equal(woken.next_since, woken.messages[0].timestamp);

      // PTY injection: B is an idle agent with an empty composer; A sends by session id.
      const viaTerminal = await a.call({ action: 'send', to: sb.session_id, message: 'second,\ntyped into your terminal' });
      assert.equal(viaTerminal.delivery_path, 'terminal_or_queued_and_inbox');
      assert.equal(viaTerminal.delivered, true);
      assert.deepEqual(viaTerminal.recipient_state, { shell_state: 'idle', agent_state: 'idle' });
      const typed = await until('the [TUIC] line reaching the agent', () => {
        try {
          const t = readFileSync(`${b.scriptPath}.typed`, 'utf8');
          return t.includes('\r') ? t : undefined;
        } catch {
          return undefined;
        }
      });
      assert.match(typed, /\[TUIC\] Message from alpha \([0-9a-f]{8}\): second, typed into your terminal\r/);

      // Busy: B shows a status line; a message by alias is queued and typed at its next idle.
      await until('B working', async () => ((await stateOf(sb.session_id))['agent_state'] === 'working' ? true : undefined));
      const queued = await a.call({ action: 'send', to: sb.alias, message: 'third, after your turn' });
      assert.equal(queued.delivery_path, 'terminal_or_queued_and_inbox');
      assert.equal(queued.delivered, false);
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal((readFileSync(`${b.scriptPath}.typed`, 'utf8').match(/\[TUIC\]/g) ?? []).length, 1, 'nothing typed while it works');
      await suite.write(sb.session_id, 'stop\r');
      const typedAgain = await until('the queued line after idle', () => {
        const t = readFileSync(`${b.scriptPath}.typed`, 'utf8');
        return t.includes('third, after your turn\r') ? t : undefined;
      });
      assert.equal((typedAgain.match(/\[TUIC\]/g) ?? []).length, 2, 'each message typed once');

      // The inbox holds all three, once each, in order; the cursor moved past what wait handed out.
      const inbox = await bClient.call({ action: 'inbox' });
      assert.deepEqual(
        inbox.messages.map((m: { content: string }) => m.content),
        ['second,\ntyped into your terminal', 'third, after your turn'],
      );
      const replay = await bClient.call({ action: 'inbox', since: 0 });
      assert.equal(replay.count, 3);
      assert.equal((await bClient.call({ action: 'inbox' })).count, 0, 'a replay never rewinds the cursor');
      await suite.write(sb.session_id, 'quit');
    } finally {
      removeFakeAgent(b);
    }
  });

  it('a working Claude Code recipient holding its GET stream gets notifications/claude/channel', async () => {
    // Claude redraws its spinner and timer continuously while it works.
    const spinner = Array.from({ length: 40 }, (_, i) => [{ out: `${ESC}[1;1H${'✢✳✶✻'[i % 4]} Thinking… (${1 + (i >> 2)}s)` }, { sleep: 250 }]).flat();
    const b = fakeAgent('claude', [{ out: `${ESC}[2J${ESC}[H` }, ...spinner, { read: 'quit' }, { exit: 0 }]);
    const sb = await suite.create();
    let stream: SseClient | undefined;
    try {
      // The shell's first state can be lost to a race with the spawn reply (supervisor bug, issue 17 note);
      // its idle after the prompt is always reported: start the agent from there.
      await until('the shell idle at its prompt', async () => ((await stateOf(sb.session_id))['shell_state'] === 'idle' ? true : undefined));
      await suite.write(sb.session_id, `${b.command}\n`);
      const bClient = await connect({ 'x-tuic-session': sb.tuic_session }, 'claude-code');
      stream = await SseClient.open({ socketPath: suite.t.socketPath, path: '/mcp', headers: { 'Mcp-Session-Id': bClient.id, Accept: 'text/event-stream' } });
      await until('B working', async () => ((await stateOf(sb.session_id))['agent_state'] === 'working' ? true : undefined)).catch(async (err) => {
        throw new Error(`${(err as Error).message}: ${JSON.stringify(await stateOf(sb.session_id))} ${JSON.stringify((await suite.raw(sb.session_id)).data)}`);
      });
      const sender = await connect();
      await sender.call({ action: 'register', name: 'ext' });
      const sent = await sender.call({ action: 'send', to: sb.tuic_session, message: 'pushed' });
      assert.equal(sent.delivery_path, 'sse_channel_and_inbox');
      const pushed = await stream.waitFor((e) => e.data.includes('notifications/claude/channel'));
      const note = JSON.parse(pushed.data);
      assert.equal(note.params.content, 'Message from ext: pushed');
      assert.equal(note.params.meta.message_id, sent.message_id);
      assert.equal(note.params.meta.from_name, 'ext');
      await suite.write(sb.session_id, 'quit');
    } finally {
      stream?.close();
      removeFakeAgent(b);
    }
  });

  it('headerless peers: a generated identity, inbox only, 100 concurrent sends each once and in order, FIFO eviction counted', async () => {
    const c = await connect();
    const reg = await c.call({ action: 'register', name: 'collector' });
    assert.equal(reg.identity_generated, true);
    assert.equal(reg.terminal, false);
    assert.equal(reg.mail_wake, 'none');
    assert.equal((await c.call({ action: 'register' })).tuic_session, reg.tuic_session, 'stable for the protocol session');
    const s = await connect();
    await s.call({ action: 'register', name: 'sender' });
    const instructions = (await suite.t.socket('GET', '/mcp/instructions')).text;
    assert.match(instructions, /Connected peer agents: \d+/, 'initialize tells how many peers are registered');
    const sends = await Promise.all(Array.from({ length: 100 }, (_, i) => s.call({ action: 'send', to: reg.tuic_session, message: `m${i}` })));
    assert.ok(sends.every((r) => r.delivery_path === 'inbox_only' && r.delivered === false && r.recipient_has_terminal === false));
    assert.equal(new Set(sends.map((r) => r.message_id)).size, 100);
    const all = await c.call({ action: 'wait', timeout_ms: 1_000 });
    assert.equal(all.new_messages, 100);
    const stamps = all.messages.map((m: { timestamp: number }) => m.timestamp);
    assert.deepEqual(
      [...stamps].sort((x, y) => x - y),
      stamps,
      'chronological',
    );
    assert.equal(new Set(stamps).size, 100, 'logical ms: no two alike');
    assert.deepEqual(new Set(all.messages.map((m: { content: string }) => m.content)), new Set(sends.map((_, i) => `m${i}`)));
    for (let i = 0; i < 5; i++) await s.call({ action: 'send', to: reg.tuic_session, message: `extra${i}` });
    const inbox = await c.call({ action: 'inbox', since: 0 });
    assert.equal(inbox.count, 100);
    assert.equal(inbox.missed_count, 5);
    assert.equal(inbox.messages.at(-1).content, 'extra4');
    assert.deepEqual(
      (await c.call({ action: 'inbox' })).messages.map((m: { content: string }) => m.content),
      ['extra0', 'extra1', 'extra2', 'extra3', 'extra4'],
    );
    const timedOut = await c.call({ action: 'wait', timeout_ms: 300 });
    assert.deepEqual([timedOut.met, timedOut.timed_out, timedOut.new_messages], [false, true, 0]);
    assert.equal(typeof timedOut.next_since, 'number');
  });

  const typedOf = (scriptPath: string): string => {
    try {
      return readFileSync(`${scriptPath}.typed`, 'utf8');
    } catch {
      return '';
    }
  };

  it('queued commands and peer lines share one FIFO: typed one per idle in acceptance order; clearing takes only commands', async () => {
    const BUSY = `${ESC}[2J${ESC}[H⏺ On it.\r\n\r\n✢ Thinking… (1s)\r\n\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n`;
    const b = fakeAgent('claude', [
      { out: READY },
      { read: 'first command\r' },
      { out: BUSY },
      { read: 'stop' },
      { out: READY },
      { read: 'second command\r' },
      { out: `${ESC}[2J${ESC}[H⏺ Done.\r\n` },
      { out: READY },
      { read: '[TUIC] Message from' },
      { read: '\r' },
      { out: `${ESC}[2J${ESC}[H⏺ Noted.\r\n` },
      { out: READY },
      { read: 'quit' },
      { exit: 0 },
    ]);
    const sb = await suite.create();
    const shell = await suite.create();
    const queue = (id: string, body: object) => suite.t.socket('POST', `/sessions/${id}/queue`, JSON.stringify(body));
    try {
      await suite.write(sb.session_id, `${b.command}\n`);
      await until('B idle as claude', async () => ((await stateOf(sb.session_id))['agent_state'] === 'idle' ? true : undefined));
      const now = await queue(sb.session_id, { text: 'first command', idempotencyKey: 'k1' });
      assert.equal(now.status, 200, now.text);
      assert.deepEqual(
        { ...(now.json() as object), id: undefined },
        { accepted: true, typed: true, queued: false, id: undefined },
        'an idle agent takes it at once',
      );
      assert.deepEqual((await queue(sb.session_id, { text: 'first command', idempotencyKey: 'k1' })).json(), {
        accepted: false,
        typed: false,
        queued: false,
        duplicate: true,
      });
      await until('B working', async () => ((await stateOf(sb.session_id))['agent_state'] === 'working' ? true : undefined));

      const second = (await queue(sb.session_id, { text: 'second command' })).json();
      assert.deepEqual([second.accepted, second.typed, second.queued], [true, false, true]);
      const sender = await connect();
      await sender.call({ action: 'register', name: 'peer' });
      const bClient = await connect({ 'x-tuic-session': sb.tuic_session });
      const sent = await sender.call({ action: 'send', to: sb.session_id, message: 'behind the second command' });
      assert.equal(sent.delivery_path, 'terminal_or_queued_and_inbox');
      const third = (await queue(sb.session_id, { text: 'third command' })).json();
      assert.deepEqual(
        (await suite.t.socket('GET', `/sessions/${sb.session_id}/queue`)).json(),
        [
          { id: second.id, text: 'second command' },
          { id: third.id, text: 'third command' },
        ],
        'only user commands are listed',
      );
      assert.equal((await stateOf(sb.session_id))['queued_commands'], 2);
      assert.equal((await suite.t.socket('DELETE', `/sessions/${sb.session_id}/queue/${third.id}`)).text, 'true');
      assert.equal((await suite.t.socket('DELETE', `/sessions/${sb.session_id}/queue/${third.id}`)).text, 'false');
      assert.equal((await stateOf(sb.session_id))['queued_commands'], 1);

      await suite.write(sb.session_id, 'stop\r');
      await until(
        'the peer line after the second command',
        () => (typedOf(b.scriptPath).includes('behind the second command\r') ? true : undefined),
        20_000,
      ).catch(async (err) => {
        throw new Error(`${(err as Error).message}; typed ${JSON.stringify(typedOf(b.scriptPath))}, state ${JSON.stringify(await stateOf(sb.session_id))}`);
      });
      const typed = typedOf(b.scriptPath);
      assert.ok(
        typed.indexOf('first command') < typed.indexOf('second command') && typed.indexOf('second command') < typed.indexOf('[TUIC] Message from peer'),
        typed,
      );
      assert.equal(typed.split('\u0015second command\r').length - 1, 1, `typed once: ${JSON.stringify(typed)}`);
      assert.ok(!typed.includes('third command'), 'a removed command is never typed');
      assert.equal((await stateOf(sb.session_id))['queued_commands'], undefined, 'omitted when nothing is queued');
      assert.equal((await suite.t.socket('DELETE', `/sessions/${sb.session_id}/queue`)).text, '0');
      assert.equal((await bClient.call({ action: 'inbox' })).count, 1, 'the peer message is in the inbox too');

      assert.equal((await queue(shell.session_id, { text: 'ls' })).status, 400);
      assert.match((await queue(shell.session_id, { text: 'ls' })).text, /Session is not running an agent/);
      assert.equal((await queue(sb.session_id, { text: '  ' })).status, 400);
      assert.equal((await queue(sb.session_id, { text: 'x', idempotencyKey: '' })).status, 400);
      assert.equal((await queue('no-such-session', { text: 'x' })).status, 404);
      assert.equal((await suite.t.socket('GET', '/sessions/no-such-session/queue')).status, 404);
      await suite.write(sb.session_id, 'quit');
    } finally {
      removeFakeAgent(b);
    }
  });

  it('an idle orchestrator: one wake covers later mail; an unacknowledged wake is retried once after 5 s, then silent until a read', async () => {
    // An agent that never reacts to what is typed: every wake is written but unacknowledged.
    const o = fakeAgent('claude', [{ out: READY }, { read: 'never' }, { exit: 0 }]);
    const so = await suite.create();
    try {
      await suite.write(so.session_id, `${o.command}\n`);
      await until('O idle as claude', async () => ((await stateOf(so.session_id))['agent_state'] === 'idle' ? true : undefined));
      const orch = await connect({ 'x-tuic-session': so.tuic_session });
      const reg = await orch.call({ action: 'register', name: 'boss', orchestrator: true });
      assert.equal(reg.mail_wake, 'managed_pty_lifecycle');
      const sender = await connect();
      await sender.call({ action: 'register', name: 'worker' });
      const wakes = () => typedOf(o.scriptPath).split('[TUIC] message available').length - 1;

      const first = await sender.call({ action: 'send', to: so.tuic_session, message: 'secret payload one' });
      assert.equal(first.delivery_path, 'orchestrator_wake_and_inbox');
      const second = await sender.call({ action: 'send', to: so.tuic_session, message: 'secret payload two' });
      assert.equal(second.delivery_path, 'orchestrator_wake_coalesced_and_inbox', 'the pending wake covers it');
      await until('the first wake typed', () => (wakes() === 1 ? true : undefined));
      await until('the retry, once the ambiguous wake expired', () => (wakes() === 2 ? true : undefined), 15_000);
      assert.ok(!typedOf(o.scriptPath).includes('secret payload'), 'payloads are never typed to an orchestrator');
      // The retry is unacknowledged too (3 s): the group's budget is spent.
      await new Promise((r) => setTimeout(r, 3_500));
      const silenced = await sender.call({ action: 'send', to: so.tuic_session, message: 'three' });
      assert.equal(silenced.delivery_path, 'inbox_only');
      await new Promise((r) => setTimeout(r, 6_000));
      assert.equal(wakes(), 2, 'no third attempt for the same unread group');

      const read = await orch.call({ action: 'inbox' });
      assert.deepEqual(
        read.messages.map((m: { content: string }) => m.content),
        ['secret payload one', 'secret payload two', 'three'],
      );
      const after = await sender.call({ action: 'send', to: so.tuic_session, message: 'four' });
      assert.equal(after.delivery_path, 'orchestrator_wake_and_inbox', 'a read starts the budget over');
      await until('a wake for the new group', () => (wakes() === 3 ? true : undefined));
      await suite.write(so.session_id, 'never');
    } finally {
      removeFakeAgent(o);
    }
  });

  it('100 concurrent sends on the waiter, channel and terminal paths: every message reaches its recipient exactly once', async () => {
    const sender = await connect();
    await sender.call({ action: 'register', name: 'flood' });
    const burst = (to: string, tag: string) => Promise.all(Array.from({ length: 100 }, (_, i) => sender.call({ action: 'send', to, message: `${tag}${i}` })));
    const expected = (tag: string) => Array.from({ length: 100 }, (_, i) => `${tag}${i}`).sort();

    // Waiter: the first send wakes it; the rest find no waiter. wait + inbox hand out each once.
    const w = await connect();
    const wReg = await w.call({ action: 'register', name: 'waiter' });
    const waiting = w.call({ action: 'wait', timeout_ms: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    const toWaiter = await burst(wReg.tuic_session, 'w');
    assert.equal(toWaiter.filter((r) => r.delivery_path === 'waiter_and_inbox').length, 1, 'one send woke the waiter');
    const woken = (await waiting).messages.map((m: { content: string }) => m.content);
    const rest = (await w.call({ action: 'inbox' })).messages.map((m: { content: string }) => m.content);
    assert.deepEqual([...woken, ...rest].sort(), expected('w'));

    // Channel: a working Claude Code recipient holding its GET stream gets one notification per message.
    const spinner = Array.from({ length: 60 }, (_, i) => [{ out: `${ESC}[1;1H${'✢✳✶✻'[i % 4]} Thinking… (${1 + (i >> 2)}s)` }, { sleep: 250 }]).flat();
    const c = fakeAgent('claude', [{ out: `${ESC}[2J${ESC}[H` }, ...spinner, { read: 'quit' }, { exit: 0 }]);
    // Terminal: an idle agent that takes a [TUIC] line, works briefly, and is idle again.
    const cycle = [
      { read: '[TUIC] Message from' },
      { read: '\r' },
      { out: `${ESC}[2J${ESC}[H⏺ On it.\r\n\r\n✢ Thinking… (1s)\r\n` },
      { sleep: 30 },
      { out: READY },
    ];
    const t = fakeAgent('claude', [{ out: READY }, ...Array.from({ length: 3 }, () => cycle).flat(), { read: 'quit' }, { exit: 0 }]);
    const sc = await suite.create();
    const st = await suite.create();
    let stream: SseClient | undefined;
    try {
      await until('the shells idle at their prompts', async () =>
        (await stateOf(sc.session_id))['shell_state'] === 'idle' && (await stateOf(st.session_id))['shell_state'] === 'idle' ? true : undefined,
      );
      await suite.write(sc.session_id, `${c.command}\n`);
      await suite.write(st.session_id, `${t.command}\n`);
      const cClient = await connect({ 'x-tuic-session': sc.tuic_session }, 'claude-code');
      stream = await SseClient.open({ socketPath: suite.t.socketPath, path: '/mcp', headers: { 'Mcp-Session-Id': cClient.id, Accept: 'text/event-stream' } });
      await until('C working', async () => ((await stateOf(sc.session_id))['agent_state'] === 'working' ? true : undefined));
      const pushed = await burst(sc.tuic_session, 'c');
      assert.ok(
        pushed.every((r) => r.delivery_path === 'sse_channel_and_inbox'),
        JSON.stringify(pushed.find((r) => r.delivery_path !== 'sse_channel_and_inbox')),
      );
      const notes = () => stream!.events.filter((e) => e.data.includes('notifications/claude/channel')).map((e) => JSON.parse(e.data).params.content as string);
      await until('100 channel notifications', () => (notes().length >= 100 ? true : undefined));
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(
        notes()
          .map((n) => n.replace('Message from flood: ', ''))
          .sort(),
        expected('c'),
        'each pushed once',
      );
      assert.deepEqual((await cClient.call({ action: 'inbox' })).messages.map((m: { content: string }) => m.content).sort(), expected('c'));

      const tClient = await connect({ 'x-tuic-session': st.tuic_session });
      await until('T idle as claude', async () => ((await stateOf(st.session_id))['agent_state'] === 'idle' ? true : undefined));
      const typedPath = await burst(st.tuic_session, 't');
      assert.ok(typedPath.every((r) => r.delivery_path === 'terminal_or_queued_and_inbox'));
      const lines = () => [...typedOf(t.scriptPath).matchAll(/\[TUIC\] Message from flood \([0-9a-f]{8}\): (t\d+)\r/g)].map((m) => m[1]!);
      // One line per idle, and an agent is idle only after AGENT_IDLE_MS of quiet: typing all 100 takes
      // minutes (bench/), so the suite checks the first three against the inbox's acceptance order.
      await until('3 typed lines', () => (lines().length >= 3 ? true : undefined), 30_000).catch((err) => {
        throw new Error(`${(err as Error).message}: ${lines().length} typed`);
      });
      const accepted = (await tClient.call({ action: 'inbox', since: 0 })).messages.map((m: { content: string }) => m.content);
      assert.deepEqual([...accepted].sort(), expected('t'), 'the inbox holds each once');
      const typed = lines();
      assert.deepEqual(typed, accepted.slice(0, typed.length), 'typed once each, in acceptance order, nothing skipped');
      await suite.write(sc.session_id, 'quit');
      await suite.write(st.session_id, 'quit');
    } finally {
      stream?.close();
      removeFakeAgent(c);
      removeFakeAgent(t);
    }
  });

  it('error texts: unregistered sender, unknown recipient, missing fields, oversize message, bad UUIDs, no protocol session', async () => {
    const stranger = await connect();
    const peer = await connect();
    const { tuic_session: target } = await peer.call({ action: 'register', name: 'target' });
    assert.deepEqual(await stranger.raw({ action: 'send', to: target, message: 'hi' }), {
      isError: true,
      text: JSON.stringify({ error: 'You are not registered. Register first with agent action=register', code: 'forbidden' }),
    });
    await stranger.call({ action: 'register' });
    const err = async (args: Record<string, unknown>) => {
      const r = await stranger.raw(args);
      assert.equal(r.isError, true, r.text);
      return JSON.parse(r.text).error as string;
    };
    assert.equal(
      await err({ action: 'send', to: 'nobody-here', message: 'hi' }),
      "Recipient 'nobody-here' is not registered. Use list_peers to find valid targets.",
    );
    assert.match(await err({ action: 'send', message: 'hi' }), /^Action 'send' requires 'to'/);
    assert.equal(await err({ action: 'send', to: target }), "Action 'send' requires 'message'");
    assert.match(await err({ action: 'send', to: target, message: 'x'.repeat(64 * 1024 + 1) }), /65537 bytes; the limit is 65536/);
    assert.match(await err({ action: 'register', tuic_session: 'not-a-uuid' }), /^tuic_session must be a canonical UUID/);
    assert.match(
      await err({ action: 'register', tuic_session: target }),
      /already (registered to another active MCP session|bound to a different peer identity)/,
    );
    const noSession = await suite.t.socket(
      'POST',
      '/mcp',
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'agent', arguments: { action: 'register' } } }),
      {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
    );
    assert.match(noSession.json().result.content[0].text, /Registration needs an MCP protocol session/);
  });
});
