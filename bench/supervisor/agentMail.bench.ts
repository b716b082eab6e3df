/**
 * Agent mail (issue 17): how long a message takes to wake its recipient on each delivery path,
 * against the same bytes sent as a plain `POST /sessions/:id/write` and seen echoed by a WebSocket
 * viewer, in the same run; then 200 registered agents under 50 messages/s: the supervisor's
 * event-loop delay (its /metrics gauge), messages lost or duplicated, memory per identity.
 * The terminal-injection path is timed from the send of a message to an agent already idle: the
 * wait for idle before each send (2.5 s of quiet by design) is outside the sample.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

import WebSocket from 'ws';

import { errorText, failedRow, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { percentile, goal } from './sessions/stats.js';
import { createSession, deleteSession, startTuicd, type TuicdUnderTest } from './sessions/tuicd.js';
import { fakeAgent, removeFakeAgent } from '../../test/fixtures/fakeAgent/fakeAgentLauncher.js';

const AgentMailConstants = {
  SAMPLES: 200,
  SAMPLES_QUICK: 40,
  /** Each terminal sample first waits ~2.5 s for the agent to be idle again. */
  TERMINAL_SAMPLES: 10,
  TERMINAL_SAMPLES_QUICK: 3,
  PEERS: 200,
  /** Identities registered for the memory figure: enough that RSS noise (GC, allocator) averages out. */
  MEMORY_PEERS: 1_000,
  MEMORY_MESSAGES_EACH: 10,
  RATE_PER_S: 50,
  LOAD_S: 60,
  LOAD_S_QUICK: 10,
  /** Issue 17: waiter and channel wake within 1.5x of a plain write's. */
  GOAL_RATIO: 1.5,
  GOAL_LOOP_P99_MS: 10,
} as const;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One keep-alive agent per client, so each sample is one request on a warm connection. */
function client(socketPath: string): (method: string, path: string, body?: object, headers?: Record<string, string>) => Promise<Answer> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  return (method, path, body, headers = {}) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = http.request(
        {
          socketPath,
          method,
          path,
          agent,
          headers: {
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
            accept: 'application/json, text/event-stream',
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

type Call = ReturnType<typeof client>;

interface Peer {
  sessionId: string;
  tuic: string;
  agent(args: Record<string, unknown>): Promise<any>;
}

async function peer(call: Call, name: string, headers: Record<string, string> = {}): Promise<Peer> {
  const init = await call(
    'POST',
    '/mcp',
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version: '1' } } },
    headers,
  );
  const sessionId = init.headers['mcp-session-id'] as string;
  const agent = async (args: Record<string, unknown>): Promise<any> => {
    const r = await call(
      'POST',
      '/mcp',
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'agent', arguments: args } },
      { 'mcp-session-id': sessionId },
    );
    const result = JSON.parse(r.body).result;
    if (result.isError) throw new Error(result.content[0].text);
    return JSON.parse(result.content[0].text);
  };
  const reg = await agent({ action: 'register', name });
  return { sessionId, tuic: reg.tuic_session, agent };
}

/** Plain write → echo on a raw WebSocket viewer of a `cat` session: the floor any wake is compared with. */
async function writeEchoSamples(t: TuicdUnderTest, call: Call, n: number): Promise<number[]> {
  const id = await createSession(t.socketPath, '/bin/sh', ['-c', 'stty -icanon; exec cat >/dev/null']);
  const ws = new WebSocket(`ws+unix://${t.socketPath}:/sessions/${id}/stream?encoding=binary`);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  let waiter: (() => void) | undefined;
  let seen = '';
  ws.on('message', (data: Buffer) => {
    seen += data.toString('utf8');
    waiter?.();
  });
  await new Promise((r) => setTimeout(r, 300)); // catch-up of the shell's first bytes
  const samples: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const marker = `m${i}z`;
      const echoed = new Promise<void>((resolve) => {
        waiter = () => {
          if (seen.includes(marker)) resolve();
        };
      });
      const t0 = performance.now();
      await call('POST', `/sessions/${id}/write`, { data: marker });
      await echoed;
      samples.push(performance.now() - t0);
      seen = '';
    }
  } finally {
    ws.close();
    await deleteSession(t.socketPath, id).catch(() => undefined);
  }
  return samples;
}

/** send → the recipient's parked `agent wait` answers. */
async function waiterSamples(sender: Peer, recipient: Peer, n: number): Promise<{ samples: number[]; misrouted: number }> {
  const samples: number[] = [];
  let misrouted = 0;
  for (let i = 0; i < n; i++) {
    const woken = recipient.agent({ action: 'wait', timeout_ms: 10_000 });
    await new Promise((r) => setTimeout(r, 3)); // the wait is parked before the send leaves
    const t0 = performance.now();
    const sent = sender.agent({ action: 'send', to: recipient.tuic, message: `w${i}` });
    await woken;
    const elapsed = performance.now() - t0;
    if ((await sent).delivery_path === 'waiter_and_inbox') samples.push(elapsed);
    else misrouted++;
  }
  return { samples, misrouted };
}

/**
 * send → `notifications/claude/channel` on the recipient's GET /mcp stream. The recipient is a
 * Claude Code client bound to a terminal whose program keeps a status line animating (working).
 */
async function channelSamples(t: TuicdUnderTest, call: Call, sender: Peer, n: number): Promise<{ samples: number[]; misrouted: number }> {
  const spinner =
    'binmode STDOUT, ":utf8"; $| = 1; my $i = 0; while (1) { printf "\\r\\x{2722} Thinking\\x{2026} (%ds)", $i++; select(undef, undef, undef, 0.2) }';
  const res = await call('POST', '/sessions', { shell: 'perl', args: ['-e', spinner], agent_type: 'claude' });
  const { session_id: pty, tuic_session: tuic } = JSON.parse(res.body) as { session_id: string; tuic_session: string };
  const recipient = await peer(call, 'claude-code', { 'x-tuic-session': tuic });
  let buffered = '';
  let waiter: (() => void) | undefined;
  const stream = http.get({ socketPath: t.socketPath, path: '/mcp', headers: { 'mcp-session-id': recipient.sessionId, accept: 'text/event-stream' } }, (r) => {
    r.setEncoding('utf8');
    r.on('data', (d: string) => {
      buffered += d;
      waiter?.();
    });
  });
  try {
    // Working: the status line holds the session busy.
    for (let i = 0; i < 100; i++) {
      const rows = JSON.parse((await call('GET', '/sessions')).body) as Array<{ session_id: string; state: { agent_state?: string } }>;
      if (rows.find((r) => r.session_id === pty)?.state.agent_state === 'working') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const samples: number[] = [];
    let misrouted = 0;
    for (let i = 0; i < n; i++) {
      const marker = `c${i}q`;
      const pushed = new Promise<void>((resolve) => {
        waiter = () => {
          if (buffered.includes(marker)) resolve();
        };
      });
      const t0 = performance.now();
      const sent = await sender.agent({ action: 'send', to: tuic, message: marker });
      if (sent.delivery_path !== 'sse_channel_and_inbox') {
        misrouted++;
        continue;
      }
      await pushed;
      samples.push(performance.now() - t0);
      buffered = '';
    }
    return { samples, misrouted };
  } finally {
    stream.destroy();
    await deleteSession(t.socketPath, pty).catch(() => undefined);
  }
}

const ESC = '\x1b';
/** A fake Claude Code at rest: its input box, nothing running. */
const READY = `${ESC}[2J${ESC}[H⏺ Ready.\r\n\r\n${'─'.repeat(40)}\r\n❯ \r\n${'─'.repeat(40)}\r\n`;

/**
 * send → the `[TUIC]` frame typed into an idle agent's terminal and read by it (it answers "On it."
 * on its screen, seen by a raw viewer). The recipient is the scripted fake Claude Code of the test
 * suite (a real PTY and a real process reading its stdin; only the model is missing).
 */
async function terminalSamples(t: TuicdUnderTest, call: Call, sender: Peer, n: number): Promise<{ samples: number[]; misrouted: number }> {
  const cycle = [
    { read: '[TUIC] Message from' },
    { read: '\r' },
    { out: `${ESC}[2J${ESC}[H⏺ On it.\r\n\r\n✢ Thinking… (1s)\r\n` },
    { sleep: 30 },
    { out: READY },
  ];
  const agent = fakeAgent('claude', [{ out: READY }, ...Array.from({ length: n }, () => cycle).flat(), { read: 'quit' }, { exit: 0 }]);
  const created = await call('POST', '/sessions', { shell: '/bin/sh' });
  const { session_id: pty, tuic_session: tuic } = JSON.parse(created.body) as { session_id: string; tuic_session: string };
  const ws = new WebSocket(`ws+unix://${t.socketPath}:/sessions/${pty}/stream?encoding=binary`);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  let seen = '';
  let waiter: (() => void) | undefined;
  ws.on('message', (data: Buffer) => {
    seen += data.toString('utf8');
    waiter?.();
  });
  const state = async (): Promise<string | undefined> =>
    (JSON.parse((await call('GET', '/sessions')).body) as Array<{ session_id: string; state: { agent_state?: string } }>).find((r) => r.session_id === pty)
      ?.state.agent_state;
  const untilIdle = async () => {
    for (const deadline = performance.now() + 20_000; (await state()) !== 'idle'; ) {
      if (performance.now() > deadline) throw new Error('the fake agent never became idle');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    await call('POST', `/sessions/${pty}/write`, { data: `${agent.command}\n` });
    await peer(call, 'bench-terminal', { 'x-tuic-session': tuic });
    const samples: number[] = [];
    let misrouted = 0;
    for (let i = 0; i < n; i++) {
      await untilIdle();
      seen = '';
      const read = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`message ${i} was never read by the agent`)), 15_000);
        waiter = () => {
          if (seen.includes('On it.')) clearTimeout(timer), resolve();
        };
      });
      const t0 = performance.now();
      const sent = await sender.agent({ action: 'send', to: tuic, message: `t${i}k` });
      if (sent.delivery_path !== 'terminal_or_queued_and_inbox' || sent.recipient_state?.agent_state !== 'idle') {
        misrouted++;
        read.catch(() => undefined);
        continue;
      }
      await read;
      samples.push(performance.now() - t0);
    }
    return { samples, misrouted };
  } finally {
    await call('POST', `/sessions/${pty}/write`, { data: 'quit' }).catch(() => undefined);
    ws.close();
    await deleteSession(t.socketPath, pty).catch(() => undefined);
    removeFakeAgent(agent);
  }
}

async function loadRun(
  t: TuicdUnderTest,
  call: Call,
  seconds: number,
): Promise<{ loopP99: number; sent: number; lost: number; duplicated: number; kbPerIdentity: number }> {
  const rssKb = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${t.pid}/status`, 'utf8'))?.[1] ?? 0);
  const peers: Peer[] = [];
  for (let i = 0; i < AgentMailConstants.PEERS; i++) peers.push(await peer(call, `load${i}`));
  const sender = await peer(call, 'load-sender');
  const sent = new Map<string, number>();
  let loopP99 = 0;
  const metrics = setInterval(() => {
    void call('GET', '/metrics').then((r) => (loopP99 = Math.max(loopP99, Number(JSON.parse(r.body).event_loop_delay_p99_ms ?? 0))));
  }, 2_000);
  const total = AgentMailConstants.RATE_PER_S * seconds;
  const start = performance.now();
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / AgentMailConstants.RATE_PER_S;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const to = peers[i % peers.length]!;
    const content = `load-${i}`;
    sent.set(content, (sent.get(content) ?? 0) + 1);
    inFlight.push(sender.agent({ action: 'send', to: to.tuic, message: content }));
  }
  await Promise.all(inFlight);
  clearInterval(metrics);
  const received = new Map<string, number>();
  for (const p of peers)
    for (const m of (await p.agent({ action: 'inbox', since: 0 })).messages as Array<{ content: string }>)
      received.set(m.content, (received.get(m.content) ?? 0) + 1);
  let lost = 0;
  let duplicated = 0;
  for (const content of sent.keys()) {
    const got = received.get(content) ?? 0;
    if (got === 0) lost++;
    if (got > 1) duplicated += got - 1;
  }
  // Memory: many more identities, each with a protocol session and some mail, against the RSS before any.
  const base = rssKb();
  for (let i = 0; i < AgentMailConstants.MEMORY_PEERS; i++) {
    const p = await peer(call, `mem${i}`);
    await Promise.all(
      Array.from({ length: AgentMailConstants.MEMORY_MESSAGES_EACH }, (_, k) =>
        sender.agent({ action: 'send', to: p.tuic, message: `memory-${i}-${k} ${'x'.repeat(100)}` }),
      ),
    );
  }
  return { loopP99, sent: total, lost, duplicated, kbPerIdentity: (rssKb() - base) / AgentMailConstants.MEMORY_PEERS };
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const group = 'agent mail: send → recipient woken';
  const unit = 'ms (lower is better)';
  let t: TuicdUnderTest | undefined;
  try {
    t = await startTuicd('uws');
    const call = client(t.socketPath);
    const n = ctx.quick ? AgentMailConstants.SAMPLES_QUICK : AgentMailConstants.SAMPLES;
    const sender = await peer(call, 'bench-sender');
    const recipient = await peer(call, 'bench-recipient');
    // Warm-up of both paths (JIT, connections), not recorded.
    await writeEchoSamples(t, call, 10);
    await waiterSamples(sender, recipient, 10);
    const base: number[] = [];
    const paths = {
      waiter: { samples: [] as number[], misrouted: 0 },
      channel: { samples: [] as number[], misrouted: 0 },
      terminal: { samples: [] as number[], misrouted: 0 },
    };
    for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
      base.push(...(await writeEchoSamples(t, call, n)));
      const w = await waiterSamples(sender, recipient, n);
      paths.waiter.samples.push(...w.samples);
      paths.waiter.misrouted += w.misrouted;
      const c = await channelSamples(t, call, sender, n);
      paths.channel.samples.push(...c.samples);
      paths.channel.misrouted += c.misrouted;
      const typed = await terminalSamples(t, call, sender, ctx.quick ? AgentMailConstants.TERMINAL_SAMPLES_QUICK : AgentMailConstants.TERMINAL_SAMPLES);
      paths.terminal.samples.push(...typed.samples);
      paths.terminal.misrouted += typed.misrouted;
    }
    const rows: BenchRow[] = [];
    for (const p of [50, 99] as const) {
      const b = percentile(base, p);
      rows.push(
        withNote(
          row(group, `plain POST /sessions/:id/write → WS echo, p${p}`, ctx, unit, [b]),
          `${base.length} writes to a cat session, echo seen by a raw viewer`,
        ),
      );
      for (const [name, label] of [
        ['waiter', 'agent send → waiting agent wait returns'],
        ['channel', 'agent send → notifications/claude/channel on GET /mcp'],
        ['terminal', 'agent send → [TUIC] frame read by an idle agent in its PTY'],
      ] as const) {
        const series = paths[name];
        if (series.samples.length === 0) {
          rows.push(failedRow(group, `${label}, p${p}`, ctx, unit, `no send took this path (${series.misrouted} went elsewhere)`));
          continue;
        }
        const r = row(group, `${label}, p${p}`, ctx, unit, [percentile(series.samples, p)], { name: `plain write p${p}`, median: b });
        const verdict =
          name === 'terminal'
            ? 'no goal (the agent reads its terminal; the wait for idle is outside the sample)'
            : `goal ≤ ${AgentMailConstants.GOAL_RATIO}×: ${goal((r.ratio ?? Infinity) <= AgentMailConstants.GOAL_RATIO)}`;
        rows.push(withNote(r, `${series.samples.length} sends${series.misrouted ? `, ${series.misrouted} routed elsewhere (left out)` : ''}; ${verdict}`));
      }
    }
    const load = await loadRun(t, call, ctx.quick ? AgentMailConstants.LOAD_S_QUICK : AgentMailConstants.LOAD_S);
    const loadGroup = `agent mail: ${AgentMailConstants.PEERS} peers, ${AgentMailConstants.RATE_PER_S} msg/s`;
    rows.push(
      withNote(
        row(loadGroup, 'supervisor event-loop delay p99 (max of 5–10 s windows)', ctx, 'ms (lower is better)', [load.loopP99]),
        `${load.sent} messages over ${ctx.quick ? AgentMailConstants.LOAD_S_QUICK : AgentMailConstants.LOAD_S} s; lost ${load.lost}, duplicated ${load.duplicated}; goal < ${AgentMailConstants.GOAL_LOOP_P99_MS} ms: ${goal(load.loopP99 < AgentMailConstants.GOAL_LOOP_P99_MS)}`,
      ),
      withNote(
        row(loadGroup, 'supervisor RSS per identity (with its mail)', ctx, 'KB', [load.kbPerIdentity]),
        `RSS growth over ${AgentMailConstants.MEMORY_PEERS} more identities, each an MCP protocol session holding ${AgentMailConstants.MEMORY_MESSAGES_EACH} messages of ~110 bytes`,
      ),
    );
    return rows;
  } catch (err) {
    return [failedRow(group, 'agent mail', ctx, unit, errorText(err))];
  } finally {
    await t?.stop();
  }
};
