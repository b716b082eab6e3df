/**
 * Round-trips/s, MB/s and CPU per round trip of the typed channel against raw transfers of the
 * same bytes, through a real worker thread and a real child process (pipes), 4 KiB and 64 KiB.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

import { type Client, connect } from '../../shared/channel.js';
import { workerTransport } from '../../shared/transports/messagePort.js';
import { streamTransport } from '../../shared/transports/stream.js';
import { type BenchContext, type BenchModule, type BenchRow, median, row } from '../harness.js';
import { EchoProtocol, readRawFrames, writeRawFrame } from './channelBenchProtocol.js';

/** Payload sizes: a typical PTY read (about 90 % of node-pty reads are exactly 4095 bytes) and a 64 KB batch, the size of a catch-up chunk. */
const PAYLOAD_BYTES = [4 * 1024, 64 * 1024];
/** Round trips kept in flight: enough to keep both sides busy, like a stream of PTY batches. */
const WINDOW = 16;
/** Timed window per variant and repetition; quick runs only smoke-test. */
const MEASURE_MS = { full: 1_500, quick: 300 };
/** Untimed lead-in per variant so JIT and pipe buffers settle. */
const WARMUP_MS = { full: 300, quick: 100 };
/** A child that ignores EOF on stdin gets this long before SIGKILL. */
const CHILD_STOP_MS = 2_000;
/** Linux USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on every mainstream kernel. */
const PROC_TICKS_PER_S = 100;

/** One way to send `bytes` and get them back. */
type Echo = (bytes: Uint8Array) => Promise<void>;

interface Peer {
  echo: Echo;
  /** CPU µs the peer has used outside this process so far (a worker's is in ours already). */
  foreignCpuUs(): number;
  stop(): Promise<void>;
}

interface Sample {
  roundTripsPerS: number;
  /** CPU of both sides per round trip, µs: steadier than wall-clock figures on a shared machine. */
  cpuUsPerRoundTrip: number;
}

/** Runs echoes with WINDOW in flight for `ms`. */
async function measure(peer: Peer, bytes: Uint8Array, ms: number): Promise<Sample> {
  let done = 0;
  const started = performance.now();
  const end = started + ms;
  const cpu0 = process.cpuUsage();
  const foreign0 = peer.foreignCpuUs();
  const lane = async (): Promise<void> => {
    while (performance.now() < end) {
      await peer.echo(bytes);
      done++;
    }
  };
  await Promise.all(Array.from({ length: WINDOW }, lane));
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - started) / 1000;
  return { roundTripsPerS: done / seconds, cpuUsPerRoundTrip: (cpu.user + cpu.system + peer.foreignCpuUs() - foreign0) / done };
}

/** FIFO of resolvers: raw echoes carry no id, and both peers answer in order. */
function fifoEcho(send: (bytes: Uint8Array) => void): { echo: Echo; answered: () => void } {
  const waiting: Array<() => void> = [];
  const echo: Echo = (bytes) =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      send(bytes);
    });
  return { echo, answered: () => waiting.shift()?.() };
}

async function channelPeer(client: Client<typeof EchoProtocol>, foreignCpuUs: () => number, stop: () => Promise<void>): Promise<Peer> {
  await client.ready;
  // The bench reuses one buffer, so it is copied, not transferred (the raw baseline copies too).
  const echo: Echo = async (bytes) => {
    const reply = await client.requestWithPayload('echo', {}, { payload: bytes });
    if (reply.payload?.length !== bytes.length) throw new Error('echo lost bytes');
  };
  return { echo, foreignCpuUs, stop: async () => (client.dispose(), stop()) };
}

const workerUrl = new URL('./channelEchoWorker.js', import.meta.url);

async function rawWorker(): Promise<Peer> {
  const worker = new Worker(workerUrl, { workerData: { mode: 'raw' } });
  const { echo, answered } = fifoEcho((bytes) => worker.postMessage(bytes));
  worker.on('message', answered);
  await once(worker, 'online');
  return { echo, foreignCpuUs: () => 0, stop: async () => void (await worker.terminate()) };
}

async function channelWorker(): Promise<Peer> {
  const worker = new Worker(workerUrl, { workerData: { mode: 'channel' } });
  return channelPeer(
    connect(workerTransport(worker), EchoProtocol),
    () => 0,
    async () => void (await worker.terminate()),
  );
}

type PipedChild = ChildProcess & { stdin: NonNullable<ChildProcess['stdin']>; stdout: NonNullable<ChildProcess['stdout']> };

/** The child exits on EOF, so it also goes away when this process dies without cleaning up. */
function startChild(mode: 'raw' | 'channel'): PipedChild {
  const path = new URL('./channelEchoChild.js', import.meta.url).pathname;
  return spawn(process.execPath, [path, mode], { stdio: ['pipe', 'pipe', 'inherit'] }) as PipedChild;
}

function childCpuUs(child: ChildProcess): () => number {
  return () => {
    try {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / PROC_TICKS_PER_S;
    } catch {
      return NaN; // Not Linux, or already gone: the CPU row then says NaN rather than lying.
    }
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.stdin?.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_STOP_MS);
  await exited;
  clearTimeout(timer);
}

async function rawChild(): Promise<Peer> {
  const child = startChild('raw');
  const { echo, answered } = fifoEcho((bytes) => writeRawFrame(child.stdin, bytes));
  readRawFrames(child.stdout, answered);
  await echo(new Uint8Array(1)); // the child is up
  return { echo, foreignCpuUs: childCpuUs(child), stop: () => stopChild(child) };
}

async function channelChild(): Promise<Peer> {
  const child = startChild('channel');
  return channelPeer(connect(streamTransport(child.stdout, child.stdin), EchoProtocol), childCpuUs(child), () => stopChild(child));
}

/** Checks the echo answers once, before anything is timed. */
async function assertEchoes(peer: Peer, bytes: Uint8Array): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('echo peer did not answer')), 10_000)));
  await Promise.race([peer.echo(bytes), timeout]).finally(() => clearTimeout(timer));
}

interface Pair {
  where: string;
  raw: string;
  baseline: Peer;
  ours: Peer;
}

async function measurePair(pair: Pair, size: number, ctx: BenchContext): Promise<BenchRow[]> {
  const measureMs = ctx.quick ? MEASURE_MS.quick : MEASURE_MS.full;
  const warmupMs = ctx.quick ? WARMUP_MS.quick : WARMUP_MS.full;
  const bytes = randomFillSync(new Uint8Array(size));
  await assertEchoes(pair.baseline, bytes);
  await assertEchoes(pair.ours, bytes);
  const raw: Sample[] = [];
  const ours: Sample[] = [];
  for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
    // Alternate which goes first so drift on a shared machine does not favour one side.
    const order: Array<[Peer, Sample[]]> = [
      [pair.baseline, raw],
      [pair.ours, ours],
    ];
    if (rep % 2 === 1) order.reverse();
    for (const [peer, into] of order) {
      await measure(peer, bytes, warmupMs);
      into.push(await measure(peer, bytes, measureMs));
    }
  }
  const group = `channel echo ${size / 1024} KiB, ${pair.where}`;
  const rows: BenchRow[] = [];
  const add = (unit: string, pick: (s: Sample) => number): void => {
    const base = raw.map(pick);
    rows.push(row(group, pair.raw, ctx, unit, base));
    rows.push(row(group, 'tuicd channel', ctx, unit, ours.map(pick), { name: pair.raw, median: median(base) }));
  };
  add('round-trips/s', (s) => s.roundTripsPerS);
  // Payload bytes per second in each direction (an echo moves them both ways).
  add('MB/s each way', (s) => (s.roundTripsPerS * size) / 1e6);
  add('CPU µs/round-trip', (s) => s.cpuUsPerRoundTrip);
  return rows;
}

export const run: BenchModule = async (ctx) => {
  const peers: Peer[] = [];
  const start = async (make: () => Promise<Peer>): Promise<Peer> => {
    const peer = await make();
    peers.push(peer);
    return peer;
  };
  try {
    const pairs: Pair[] = [
      { where: 'worker thread', raw: 'raw postMessage', ours: await start(channelWorker), baseline: await start(rawWorker) },
      { where: 'child process', raw: 'raw framed pipe', ours: await start(channelChild), baseline: await start(rawChild) },
    ];
    const rows: BenchRow[] = [];
    for (const pair of pairs) for (const size of PAYLOAD_BYTES) rows.push(...(await measurePair(pair, size, ctx)));
    return rows;
  } finally {
    await Promise.all(peers.map((p) => p.stop()));
  }
};
