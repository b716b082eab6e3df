/**
 * ACP stream fan-out (issue 30): the scripted ACP agent streams message chunks at 1,000 per second
 * through tuicd to 10 WebSocket viewers of its connection. Per repetition, on a fresh tuicd:
 *
 * - frames/s each viewer receives (median over the viewers) and all viewers together, against the
 *   peer run alongside: the same agent and turn read directly by the SDK's client over its stdio
 *   (what a viewer could get at best);
 * - tuicd's event-loop delay p99 over the run (/metrics, goal < 10 ms), against an idle tuicd
 *   started beside it and read at the same moment (on a loaded machine the delay is mostly the machine's);
 * - prompt → first frame at a viewer, against the agent's own first update (its send time, same
 *   run): the figure is what tuicd adds;
 * - RSS of a full journal per connection: the supervisor's VmRSS growth over 3 connections each
 *   streaming past the journal's bound, divided by 3.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { client, ndJsonStream } from '@agentclientprotocol/sdk';
import WebSocket from 'ws';

import { scriptedAgentExecutable } from '../../test/fixtures/acp/scriptedAgentLauncher.js';
import { failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { cpuSeconds } from '../http/children.js';
import { request, rssKiB, startTuicd, type TuicdUnderTest } from '../supervisor/sessions/tuicd.js';

const VIEWERS = 10;
const RATE = 1000;
/** Five seconds at RATE: the /metrics loop-delay window (the last 5–10 s) then mostly covers the stream. */
const CHUNKS = 5000;
/** A short turn first, so the timed one does not pay tuicd's first-use costs (JIT, the SDK's schemas). */
const WARMUP_CHUNKS = 200;
const CHUNKS_QUICK = 1000;
/** Journals filled for the RSS figure, each past its 10,000-frame bound. */
const RSS_CONNECTIONS = 3;
const RSS_CHUNKS = 10_500;
const TURN_TIMEOUT_MS = 60_000;

interface FanoutRun {
  perViewerFps: number;
  totalFps: number;
  firstFrameMs: number;
  agentFirstMs: number;
  loopLagP99Ms: number;
  /** Median send-to-arrival of a chunk, ms. */
  chunkLatencyMs: number;
  /** The same metric read at the same moment from an idle tuicd beside it: what the machine alone costs. */
  idleLoopLagP99Ms: number;
  /** Supervisor CPU ms per chunk fanned out to every viewer (tuicd only). */
  cpuMsPerChunk: number;
}

async function json<T>(t: TuicdUnderTest, method: string, path: string, body?: object): Promise<T> {
  const r = await request(t.socketPath, method, path, body);
  if (r.status < 200 || r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
  return JSON.parse(r.body) as T;
}

/** One viewer: counts chunk frames and notes when the first and last arrived and when the turn ended. */
class Viewer {
  chunks = 0;
  firstAt = 0;
  lastAt = 0;
  firstSentAtMs = 0;
  /** Send-to-arrival of each chunk, ms (kept by one viewer only). */
  readonly latencies: number[] = [];
  private endSeen!: () => void;
  readonly ended = new Promise<void>((resolve) => (this.endSeen = resolve));

  constructor(
    readonly ws: WebSocket,
    private readonly timed: boolean,
  ) {
    ws.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      if (text.includes('"agent_message_chunk"')) {
        const now = performance.now();
        if (this.timed) this.latencies.push(performance.timeOrigin + now - Number(/"sentAtMs":([\d.]+)/.exec(text)?.[1] ?? 0));
        if (this.chunks++ === 0) {
          this.firstAt = now;
          this.firstSentAtMs = Number(/"sentAtMs":([\d.]+)/.exec(text)?.[1] ?? 0);
        }
        this.lastAt = now;
      } else if (text.includes('"turn_ended"')) this.endSeen();
    });
  }

  static open(socketPath: string, id: string, after: number, timed: boolean): Promise<Viewer> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws+unix://${socketPath}:/acp/connections/${id}/stream?after=${after}`);
      const v = new Viewer(ws, timed);
      ws.once('open', () => resolve(v));
      ws.once('error', reject);
    });
  }
}

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no end within ${TURN_TIMEOUT_MS / 1000} s`)), TURN_TIMEOUT_MS))),
  ]);
}

/**
 * The viewers but one run in a child process of their own, so the timed viewer here (and its
 * latencies) does not queue behind nine sockets' worth of frames in the same event loop.
 */
const VIEWERS_FLAG = '--acp-fanout-viewers';
type ToViewers = { socketPath: string; id: string; after: number; count: number };
type FromViewers = { type: 'ready' } | { type: 'done'; chunks: number[]; fps: number[] };

async function viewersChild(): Promise<void> {
  const { socketPath, id, after, count } = await new Promise<ToViewers>((resolve) => process.once('message', (m) => resolve(m as ToViewers)));
  const viewers = await Promise.all(Array.from({ length: count }, () => Viewer.open(socketPath, id, after, false)));
  process.send!({ type: 'ready' } satisfies FromViewers);
  await Promise.all(viewers.map((v) => v.ended));
  for (const v of viewers) v.ws.close();
  process.send!({
    type: 'done',
    chunks: viewers.map((v) => v.chunks),
    fps: viewers.map((v) => (v.chunks - 1) / ((v.lastAt - v.firstAt) / 1000)),
  } satisfies FromViewers);
  process.disconnect();
}

class ViewersProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly done: Promise<{ chunks: number[]; fps: number[] }>,
  ) {}

  static async start(socketPath: string, id: string, after: number, count: number): Promise<ViewersProcess> {
    const child = fork(fileURLToPath(import.meta.url), [VIEWERS_FLAG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const messages: FromViewers[] = [];
    const waiters: Array<() => void> = [];
    child.on('message', (m) => {
      messages.push(m as FromViewers);
      for (const w of waiters.splice(0)) w();
    });
    const next = async (type: FromViewers['type']): Promise<FromViewers> => {
      for (;;) {
        const found = messages.find((m) => m.type === type);
        if (found) return found;
        if (child.exitCode !== null) throw new Error('the viewers process exited');
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    child.send({ socketPath, id, after, count } satisfies ToViewers);
    await withTimeout(next('ready'), 'the viewers process');
    const done = next('done').then((m) => m as Extract<FromViewers, { type: 'done' }>);
    return new ViewersProcess(child, done);
  }

  stop(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** Waits until no session of the connection runs a turn. */
async function waitForTurns(t: TuicdUnderTest, id: string): Promise<void> {
  const deadline = Date.now() + TURN_TIMEOUT_MS;
  for (;;) {
    const s = await json<{ sessions: Array<{ turnId: string | null }> }>(t, 'GET', `/acp/connections/${id}`);
    if (s.sessions.every((x) => x.turnId === null)) return;
    if (Date.now() > deadline) throw new Error('a turn did not end');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The supervisor's event-loop delay p99 over the last 5–10 s (GET /metrics, JSON). */
async function loopLagP99(t: TuicdUnderTest): Promise<number> {
  const metrics = await json<{ event_loop_delay_p99_ms?: number }>(t, 'GET', '/metrics');
  return metrics.event_loop_delay_p99_ms ?? Number.NaN;
}

async function tuicdRun(agentPath: string, root: string, chunks: number): Promise<{ run: FanoutRun; journalKiB: number; journalTextKiB: number }> {
  const t = await startTuicd();
  const idle = await startTuicd().catch(async (err: unknown) => {
    await t.stop();
    throw err;
  });
  try {
    await json(t, 'PUT', '/config', { ego_executable: agentPath });
    const conn = await json<{ id: string; lastSeq: number }>(t, 'POST', '/acp/connections', { root });
    const { sessionId } = await json<{ sessionId: string }>(t, 'POST', `/acp/connections/${conn.id}/sessions`, {});
    await json(t, 'POST', `/acp/connections/${conn.id}/sessions/${sessionId}/prompt`, { prompt: [{ type: 'text', text: `stream ${WARMUP_CHUNKS} 100000` }] });
    await waitForTurns(t, conn.id);
    const snap = await json<{ lastSeq: number }>(t, 'GET', `/acp/connections/${conn.id}`);
    const timed = await Viewer.open(t.socketPath, conn.id, snap.lastSeq, true);
    const others = await ViewersProcess.start(t.socketPath, conn.id, snap.lastSeq, VIEWERS - 1);
    const cpuBefore = cpuSeconds(t.pid) ?? Number.NaN;
    const t0 = performance.now();
    await json(t, 'POST', `/acp/connections/${conn.id}/sessions/${sessionId}/prompt`, { prompt: [{ type: 'text', text: `stream ${chunks} ${RATE}` }] });
    let rest: { chunks: number[]; fps: number[] };
    try {
      [, rest] = await withTimeout(Promise.all([timed.ended, others.done]), 'the streamed turn');
    } finally {
      others.stop();
    }
    const cpuMsPerChunk = (((cpuSeconds(t.pid) ?? Number.NaN) - cpuBefore) * 1000) / chunks;
    const [loopLagP99Ms, idleLoopLagP99Ms] = await Promise.all([loopLagP99(t), loopLagP99(idle)]);
    timed.ws.close();
    for (const got of [timed.chunks, ...rest.chunks]) if (got !== chunks) throw new Error(`a viewer got ${got} of ${chunks} chunks`);
    const fps = [(timed.chunks - 1) / ((timed.lastAt - timed.firstAt) / 1000), ...rest.fps];
    const t0Epoch = performance.timeOrigin + t0;
    const run: FanoutRun = {
      perViewerFps: median(fps),
      totalFps: fps.reduce((a, b) => a + b, 0),
      firstFrameMs: timed.firstAt - t0,
      agentFirstMs: timed.firstSentAtMs - t0Epoch,
      loopLagP99Ms,
      idleLoopLagP99Ms,
      chunkLatencyMs: median(timed.latencies),
      cpuMsPerChunk,
    };
    await json(t, 'DELETE', `/acp/connections/${conn.id}`);

    // Journal RSS: full journals on a few connections, no viewer.
    const before = rssKiB(t.pid) ?? Number.NaN;
    const ids: string[] = [];
    for (let i = 0; i < RSS_CONNECTIONS; i++) {
      const c = await json<{ id: string }>(t, 'POST', '/acp/connections', { root });
      const s = await json<{ sessionId: string }>(t, 'POST', `/acp/connections/${c.id}/sessions`, {});
      await json(t, 'POST', `/acp/connections/${c.id}/sessions/${s.sessionId}/prompt`, { prompt: [{ type: 'text', text: `stream ${RSS_CHUNKS} 1000000` }] });
      ids.push(c.id);
    }
    for (const id of ids) await waitForTurns(t, id);
    const after = rssKiB(t.pid) ?? Number.NaN;
    const held = await json<{ journal: { chars: number } }>(t, 'GET', `/acp/connections/${ids[0]}`);
    return { run, journalKiB: (after - before) / RSS_CONNECTIONS, journalTextKiB: held.journal.chars / 1024 };
  } finally {
    await Promise.all([t.stop(), idle.stop()]);
  }
}

/** The peer: the same agent and turn, read by the SDK's client directly over its stdio. */
async function directRun(agentPath: string, root: string, chunks: number): Promise<FanoutRun> {
  const child = spawn(agentPath, [], { cwd: root, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
  try {
    let count = 0;
    let firstAt = 0;
    let lastAt = 0;
    let firstSent = 0;
    const latencies: number[] = [];
    const app = client({ name: 'bench' }).onNotification('session/update', ({ params }) => {
      const u = params.update;
      if (u.sessionUpdate !== 'agent_message_chunk') return;
      const now = performance.now();
      const sent = Number((u.content as { _meta?: { sentAtMs?: number } })._meta?.sentAtMs ?? 0);
      latencies.push(performance.timeOrigin + now - sent);
      if (count++ === 0) {
        firstAt = now;
        firstSent = sent;
      }
      lastAt = now;
    });
    const conn = app.connect(
      ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>),
    );
    await conn.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await conn.agent.request('session/new', { cwd: root, mcpServers: [] });
    await conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `stream ${WARMUP_CHUNKS} 100000` }] });
    count = 0;
    latencies.length = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await withTimeout(conn.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `stream ${chunks} ${RATE}` }] }), 'the direct turn');
    const cpu = process.cpuUsage(cpu0);
    conn.close();
    if (count !== chunks) throw new Error(`the direct client got ${count} of ${chunks} chunks`);
    const fps = (count - 1) / ((lastAt - firstAt) / 1000);
    return {
      perViewerFps: fps,
      totalFps: fps,
      firstFrameMs: firstAt - t0,
      agentFirstMs: firstSent - (performance.timeOrigin + t0),
      loopLagP99Ms: Number.NaN,
      idleLoopLagP99Ms: Number.NaN,
      chunkLatencyMs: median(latencies),
      cpuMsPerChunk: (cpu.user + cpu.system) / 1000 / chunks,
    };
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const chunks = ctx.quick ? CHUNKS_QUICK : CHUNKS;
  const group = `ACP stream fan-out (${RATE} chunks/s, ${VIEWERS} viewers)`;
  const agent = scriptedAgentExecutable();
  const root = `${agent.dir}/root`;
  await import('node:fs/promises').then((fs) => fs.mkdir(root, { recursive: true }));
  try {
    const ours: FanoutRun[] = [];
    const peer: FanoutRun[] = [];
    const journal: number[] = [];
    const journalText: number[] = [];
    for (let i = 0; i < ctx.repetitions; i++) {
      const r = await tuicdRun(agent.path, root, chunks);
      ours.push(r.run);
      journal.push(r.journalKiB);
      journalText.push(r.journalTextKiB);
      peer.push(await directRun(agent.path, root, chunks));
    }
    const pick = (runs: FanoutRun[], k: keyof FanoutRun) => runs.map((r) => r[k]);
    const peerName = 'the SDK client on the agent’s stdio';
    const peerFps = row(group, `direct: ${peerName}`, ctx, 'frames/s', pick(peer, 'perViewerFps'));
    const lag = median(pick(ours, 'loopLagP99Ms'));
    const addedMs = ours.map((r) => r.firstFrameMs - r.agentFirstMs);
    return [
      peerFps,
      withNote(
        row(group, 'tuicd: frames/s per viewer', ctx, 'frames/s', pick(ours, 'perViewerFps'), { name: 'direct', median: peerFps.median }),
        `${chunks} chunks, every viewer got all`,
      ),
      row(group, 'tuicd: frames/s, all viewers', ctx, 'frames/s', pick(ours, 'totalFps'), { name: 'direct', median: peerFps.median }),
      row(group, 'direct: client CPU per chunk', ctx, 'ms', pick(peer, 'cpuMsPerChunk')),
      withNote(
        row(group, 'tuicd: supervisor CPU per chunk (to all viewers)', ctx, 'ms', pick(ours, 'cpuMsPerChunk'), {
          name: 'direct',
          median: median(pick(peer, 'cpuMsPerChunk')),
        }),
        'user + system over the turn',
      ),
      row(group, 'idle tuicd beside it: event-loop delay p99', ctx, 'ms', pick(ours, 'idleLoopLagP99Ms')),
      withNote(
        row(group, 'tuicd: event-loop delay p99', ctx, 'ms', pick(ours, 'loopLagP99Ms'), {
          name: 'idle tuicd',
          median: median(pick(ours, 'idleLoopLagP99Ms')),
        }),
        `goal < 10 ms: ${lag < 10 ? 'met' : 'NOT met'} (the idle tuicd beside it shows what the machine alone adds)`,
      ),
      row(group, 'direct: prompt → first update (agent’s own send)', ctx, 'ms', pick(peer, 'firstFrameMs')),
      row(group, 'tuicd: prompt → agent’s own first update', ctx, 'ms', pick(ours, 'agentFirstMs')),
      withNote(
        row(group, 'tuicd: prompt → first frame at a viewer', ctx, 'ms', pick(ours, 'firstFrameMs'), {
          name: 'agent’s own first update',
          median: median(pick(ours, 'agentFirstMs')),
        }),
        `tuicd adds ${median(addedMs).toFixed(2)} ms (median)`,
      ),
      row(group, 'direct: chunk send → arrival (median)', ctx, 'ms', pick(peer, 'chunkLatencyMs')),
      row(group, 'tuicd: chunk send → arrival at a viewer (median)', ctx, 'ms', pick(ours, 'chunkLatencyMs'), {
        name: 'direct',
        median: median(pick(peer, 'chunkLatencyMs')),
      }),
      withNote(
        row(`ACP journal (${RSS_CHUNKS} chunk frames: past the 10,000-frame bound)`, 'tuicd: supervisor RSS per full journal', ctx, 'KiB', journal),
        `VmRSS growth over ${RSS_CONNECTIONS} connections / ${RSS_CONNECTIONS} (garbage not yet returned included)`,
      ),
      row(`ACP journal (${RSS_CHUNKS} chunk frames: past the 10,000-frame bound)`, 'tuicd: JSON text the journal holds', ctx, 'KiB', journalText),
    ];
  } catch (err) {
    return [failedRow(group, 'tuicd', ctx, 'frames/s', (err as Error).message)];
  } finally {
    rmSync(agent.dir, { recursive: true, force: true });
  }
};

if (process.argv.includes(VIEWERS_FLAG)) void viewersChild();
