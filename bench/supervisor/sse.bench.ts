/**
 * SSE fan-out (issue #2 item 8): events/s delivered to 100 subscribers over real uWS sockets, with
 * and without one extra subscriber that stops reading. The clients run in a child process (this file).
 */
import { fork, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { benchUws, uwsUnavailable, type BenchUws } from '../http/engines.js';
import { EventBus, type UntypedEvents } from '../../supervisor/events/eventBus.js';
import { openSse, parseSseQuery, type SseStream } from '../../supervisor/http/sse.js';

/** The subscriber count issue #2 sizes the bus for. */
const SUBSCRIBERS = 100;
/** Events published per event-loop turn: a burst like a busy PTY's parsed events, coalesced per tick. */
const BATCH_EVENTS = 32;
/** Publishing window per run; long enough for the stalled subscriber to fill ~4.5 MB of kernel buffers. */
const PUBLISH_MS = 4_000;
const PUBLISH_MS_QUICK = 1_000;
/** Throw-away first run. */
const WARMUP_MS = 300;
/**
 * Upper bound on the stalled variant's publishing window (see `keepGoing`). uWS's 10 s timeout starts
 * at the first write that does not fit, and the 256-event queue overflows within a second of that,
 * so the run stops soon after the timeout clock starts however long this is.
 */
const MAX_STALLED_PUBLISH_MS = 15_000;
/** Give up on a run whose clients have not reported this long after publishing stopped. */
const REPORT_TIMEOUT_MS = 20_000;
const CLIENT_FLAG = '--sse-bench-client';
const STALLED_STREAM = 'bench-stalled';
/** The resumed stalled stream counts as fully read after this long without a byte. */
const STALLED_QUIET_MS = 300;
/** How long the client gets to exit after IPC is closed. */
const CHILD_EXIT_GRACE_MS = 2_000;
/** A typical `pty-parsed` payload (~160 bytes of JSON). */
const PAYLOAD = {
  session_id: '6f1c2d3e-4b5a-4c7d-9e8f-0a1b2c3d4e5f',
  parsed: { type: 'status-line', text: 'Working… (12s · esc to interrupt) ▪ tokens 1.2k' },
};

type ToClient = { type: 'start'; port: number; subscribers: number; stalled: boolean };
type FromClient =
  | { type: 'ready' }
  /** Every reading subscriber has seen `done`: seconds from its first event to `done`. */
  | { type: 'normal'; seconds: number[] }
  /** Sent after `normal` in the stalled variant, once the resumed stalled stream was read. */
  | { type: 'stalled'; figures: StalledFigures };

/** What the client parsed out of the stalled stream once it had read it all. */
interface StalledFigures {
  lagged: number;
  missed: number;
}

interface RunResult {
  /** Median over the reading subscribers of events/s each received. */
  perSubscriber: number;
  /** Events the reading subscribers were told they missed, summed (should be 0). */
  normalMissed: number;
  stalled: StalledFigures | null;
  /**
   * Events delivered to reading subscribers per ms of server CPU (until every one had `done`):
   * steadier than events/s when other processes share the machine.
   */
  eventsPerCpuMs: number;
}

async function runOnce(uws: BenchUws, stalled: boolean, publishMs: number): Promise<RunResult> {
  const bus = new EventBus<UntypedEvents>();
  const streams: SseStream[] = [];
  const app = uws.App().get('/events', (res, req) => {
    const stream = openSse(res, parseSseQuery(req.getQuery() ?? ''), bus);
    if (stream) streams.push(stream);
  });
  const listenSocket = await new Promise<unknown>((resolve, reject) => {
    app.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('uWS listen failed'))));
  });
  const port = uws.us_socket_local_port(listenSocket);
  const child = fork(fileURLToPath(import.meta.url), [CLIENT_FLAG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const next = messages(child);
    child.send({ type: 'start', port, subscribers: SUBSCRIBERS, stalled } satisfies ToClient);
    await expectMessage(next, 'ready');
    let published = 0;
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    // The stalled variant keeps going until that subscriber has overflowed: kernel socket buffers
    // absorb several MB first, which takes longer than the window on a slow or busy machine.
    const keepGoing = (now: number): boolean => now - start < publishMs || (stalled && bus.stats.droppedEvents === 0 && now - start < MAX_STALLED_PUBLISH_MS);
    while (keepGoing(performance.now())) {
      for (let i = 0; i < BATCH_EVENTS; i++) bus.publish('pty-parsed', PAYLOAD);
      published += BATCH_EVENTS;
      // Yield one loop turn so the tick's events go out as one coalesced write per subscriber.
      await new Promise((resolve) => setImmediate(resolve));
    }
    bus.publish('done');
    const report = await expectMessage(next, 'normal');
    if (report.type !== 'normal') throw new Error('unreachable');
    // Server CPU until the reading subscribers are done; the stalled one's late catch-up is not theirs.
    const cpu = process.cpuUsage(cpu0);
    const stalledReport = stalled ? await expectMessage(next, 'stalled') : undefined;
    const stalledFigures = stalledReport?.type === 'stalled' ? stalledReport.figures : null;
    // The bus drops events only behind a lagged notice, so a reading subscriber got `published - missed`.
    const normal = streams.filter((s) => s.streamId !== STALLED_STREAM);
    const normalMissed = normal.reduce((sum, s) => sum + s.subscription.missedTotal, 0);
    const rates = report.seconds.map((seconds) => (seconds > 0 ? (published - normalMissed / normal.length) / seconds : 0));
    const eventsPerCpuMs = (published * normal.length - normalMissed) / ((cpu.user + cpu.system) / 1000);
    return { perSubscriber: median(rates), normalMissed, stalled: stalledFigures, eventsPerCpuMs };
  } finally {
    bus.dispose();
    uws.us_listen_socket_close(listenSocket);
    await stopChild(child);
  }
}

/** Disconnecting IPC makes the client exit on its own; SIGKILL only if it has not after a grace period. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_EXIT_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** Queue of IPC messages from the child, so none is missed between awaits. */
function messages(child: ChildProcess): () => Promise<FromClient> {
  const queue: FromClient[] = [];
  const waiters: Array<{ resolve: (m: FromClient) => void; reject: (e: Error) => void }> = [];
  child.on('message', (m: FromClient) => (waiters.length > 0 ? waiters.shift()!.resolve(m) : queue.push(m)));
  child.on('exit', (code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`SSE bench client exited with ${code}`));
  });
  return () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve, reject) => waiters.push({ resolve, reject })));
}

async function expectMessage(next: () => Promise<FromClient>, type: FromClient['type']): Promise<FromClient> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`SSE bench client sent no "${type}" in ${REPORT_TIMEOUT_MS} ms`)), REPORT_TIMEOUT_MS);
  });
  try {
    const message = await Promise.race([next(), timeout]);
    if (message.type !== type) throw new Error(`expected "${type}" from SSE bench client, got "${message.type}"`);
    return message;
  } finally {
    clearTimeout(timer);
  }
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const group = `SSE fan-out to ${SUBSCRIBERS} subscribers`;
  // The bench serves over uWS, loaded as tuicd loads it; where no build loads there is nothing to measure.
  const loaded = benchUws();
  if (!loaded.ok) return [failedRow(group, 'no stalled subscriber', ctx, 'events/s per subscriber', uwsUnavailable(loaded.why))];
  const uws = loaded.uws;
  const publishMs = ctx.quick ? PUBLISH_MS_QUICK : PUBLISH_MS;
  const withStall: number[] = [];
  const noStall: number[] = [];
  const stalledMissed: number[] = [];
  const stalledLagged: number[] = [];
  const normalMissed: number[] = [];
  const cpuNoStall: number[] = [];
  const cpuWithStall: number[] = [];
  // Discarded warm-up: JIT and the first TCP buffer growth would otherwise land in repetition 1.
  await runOnce(uws, false, WARMUP_MS);
  for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
    // Both variants in every repetition, in alternating order, so drift hits both alike.
    const stalledFirst = rep % 2 === 0;
    const first = await runOnce(uws, stalledFirst, publishMs);
    const second = await runOnce(uws, !stalledFirst, publishMs);
    const [ours, base] = stalledFirst ? [first, second] : [second, first];
    noStall.push(base.perSubscriber);
    withStall.push(ours.perSubscriber);
    normalMissed.push(base.normalMissed + ours.normalMissed);
    stalledMissed.push(ours.stalled?.missed ?? 0);
    stalledLagged.push((ours.stalled?.lagged ?? 0) > 0 ? 1 : 0);
    cpuNoStall.push(base.eventsPerCpuMs);
    cpuWithStall.push(ours.eventsPerCpuMs);
  }
  const baseline = { name: 'no stalled subscriber', median: median(noStall) };
  return [
    withNote(row(group, 'no stalled subscriber', ctx, 'events/s per subscriber', noStall), loaded.label),
    row(group, '+1 stalled subscriber', ctx, 'events/s per subscriber', withStall, baseline),
    row(group, 'events missed by reading subscribers (must be 0)', ctx, 'events', normalMissed),
    row(group, 'stalled subscriber got `lagged` (must be 1, spread 0)', ctx, '1 = yes, per repetition', stalledLagged),
    row(group, 'stalled subscriber: events reported missed', ctx, 'events', stalledMissed),
    row(group, 'server cost, no stalled subscriber', ctx, 'events delivered per server CPU ms', cpuNoStall),
    row(group, 'server cost, +1 stalled subscriber', ctx, 'events delivered per server CPU ms', cpuWithStall, {
      name: 'server cost, no stalled subscriber',
      median: median(cpuNoStall),
    }),
  ];
};

const DONE_EVENT = Buffer.from('event: done\n');
const LAGGED_NOTICE = /event: lagged\ndata: \{"missed":(\d+)\}\n\n/g;
/**
 * `done` is the last event published, so it sits in the last bytes a subscriber reads (at most a
 * drain comment and chunk framing follow it); only this much of the stream's tail is searched.
 */
const TAIL_BYTES = 128;

/**
 * Times one SSE stream on a raw socket with one short native search per read and no HTTP parser,
 * so 100 streams fit in one client core and the server is what gets measured.
 */
class StreamTimer {
  firstAt = 0;
  doneAt = 0;
  private tail: Buffer = Buffer.alloc(0);

  onChunk(chunk: Buffer): void {
    if (this.firstAt === 0) this.firstAt = performance.now();
    const tail = chunk.length >= TAIL_BYTES ? chunk.subarray(chunk.length - TAIL_BYTES) : Buffer.concat([this.tail, chunk]);
    if (this.doneAt === 0 && tail.indexOf(DONE_EVENT) >= 0) this.doneAt = performance.now();
    this.tail = tail.length > TAIL_BYTES ? tail.subarray(tail.length - TAIL_BYTES) : tail;
  }

  get seconds(): number {
    return (this.doneAt - this.firstAt) / 1000;
  }
}

function runClient(): void {
  process.once('message', (m: ToClient) => {
    const timers: StreamTimer[] = [];
    const total = m.subscribers + (m.stalled ? 1 : 0);
    let ready = 0;
    let finished = 0;
    const send = (msg: FromClient): void => void process.send?.(msg);
    // The stalled stream is kept whole and parsed once at the end: one stream, and it is the proof.
    const stalledChunks: Buffer[] = [];
    let stalledSocket: net.Socket | undefined;
    let lastStalledReadAt = 0;
    const stalledTimer = new StreamTimer();
    const onNormalDone = (): void => {
      if (++finished < m.subscribers) return;
      send({ type: 'normal', seconds: timers.map((t) => t.seconds) });
      if (!stalledSocket) return;
      stalledSocket.resume();
      lastStalledReadAt = performance.now();
      const poll = setInterval(() => {
        // `done` itself can be dropped when it lands on a full queue; the server is idle by now,
        // so a quiet stream means everything that will come has come.
        if (stalledTimer.doneAt === 0 && performance.now() - lastStalledReadAt < STALLED_QUIET_MS) return;
        clearInterval(poll);
        const text = Buffer.concat(stalledChunks).toString('latin1');
        const notices = [...text.matchAll(LAGGED_NOTICE)].map((match) => Number(match[1]));
        send({ type: 'stalled', figures: { lagged: notices.length, missed: notices.reduce((sum, n) => sum + n, 0) } });
      }, 5);
    };
    for (let i = 0; i < total; i++) {
      const stalled = i === m.subscribers;
      const timer = stalled ? stalledTimer : new StreamTimer();
      if (!stalled) timers.push(timer);
      const socket = net.connect(m.port, '127.0.0.1');
      socket.write(`GET /events?stream_id=${stalled ? STALLED_STREAM : `bench-${i}`} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      let started = false;
      socket.on('data', (chunk: Buffer) => {
        if (stalled) {
          stalledChunks.push(chunk);
          lastStalledReadAt = performance.now();
        }
        // The first read is the headers and retry line, written before publishing starts.
        if (!started) {
          started = true;
          if (stalled) {
            // The stalled subscriber stops reading here until every other one has seen `done`.
            stalledSocket = socket;
            socket.pause();
          }
          if (++ready === total) send({ type: 'ready' });
          return;
        }
        const wasDone = timer.doneAt > 0;
        timer.onChunk(chunk);
        if (!wasDone && timer.doneAt > 0 && !stalled) onNormalDone();
      });
    }
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.argv.includes(CLIENT_FLAG)) runClient();
