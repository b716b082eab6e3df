/**
 * The pty host's leg of hot path 1: bytes/s a supervisor receives as `data` events vs a bare
 * node-pty Buffer read of the same command in the same run, and keystroke echo latency both ways.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';

import { spawn as spawnPty } from '@lydell/node-pty';

import { type Client, connect } from '../../../shared/channel.js';
import { PtyProtocol, type PtyProtocolT } from '../../../shared/protocol/pty.js';
import { streamTransport } from '../../../shared/transports/stream.js';
import { OutputAcks } from '../../../supervisor/hosts/outputAcks.js';
import { type BenchContext, type BenchModule, type BenchRow, median, row } from '../../harness.js';

/** Bytes each flood produces before the PTY's \n → \r\n; the 200 MB would take minutes over all runs. */
const FLOOD_BYTES = { full: 64 * 1024 * 1024, quick: 8 * 1024 * 1024 };
/** Echo samples per repetition, and the pause between them: longer than the coalescing window, so each is "first after idle". */
const ECHO_SAMPLES = { full: 300, quick: 50 };
const ECHO_GAP_MS = 10;
const HOST_MAIN = new URL('../../../workers/pty/main.js', import.meta.url).pathname;

const FLOODS = [
  { name: 'urandom|base64 (producer-bound)', script: (n: number) => `head -c ${n} /dev/urandom | base64` },
  { name: 'zero|tr (reader-bound)', script: (n: number) => `head -c ${n} /dev/zero | tr '\\0' a` },
];

const env = (): Record<string, string> => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8', PS1: '$ ' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Host {
  client: Client<PtyProtocolT>;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startHost(): Promise<Host> {
  const child = spawn(process.execPath, [HOST_MAIN], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
  const exited = once(child, 'exit');
  const sock = child.stdio[3] as Socket;
  const client = connect(streamTransport(sock, sock), PtyProtocol);
  await client.ready;
  return {
    client,
    child,
    stop: async () => {
      client.dispose();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * MB/s of a bare node-pty read in this process, from spawn to the last byte (not to the exit
 * event: the host reports exit ~200 ms after the last byte, see ptySession.ts's header).
 */
async function bareFlood(script: string): Promise<number> {
  const started = performance.now();
  let last = started;
  const pty = spawnPty('/bin/sh', ['-c', script], { name: 'xterm-256color', cwd: tmpdir(), env: env(), rows: 24, cols: 80, encoding: null });
  let bytes = 0;
  const onData = (chunk: Buffer): void => {
    bytes += chunk.length;
    last = performance.now();
  };
  pty.onData(onData as unknown as (data: string) => void);
  await new Promise((resolve) => pty.onExit(resolve));
  return bytes / 1e6 / ((last - started) / 1000);
}

/**
 * MB/s of the same command through the pty host, as the supervisor receives it, to the last byte;
 * checks the count. Handled output is acked as tuicd acks it: the host holds a session's output
 * once PtyConstants.UNACKED_OUTPUT_BYTES are unacked, so without acks a flood stops there.
 */
async function hostFlood(host: Host, script: string): Promise<number> {
  const id = randomUUID();
  const acks = new OutputAcks(host.client);
  let bytes = 0;
  let resolveExit: (total: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (resolveExit = resolve));
  let last = 0;
  const onData = host.client.on('data', (e, payload) => {
    if (e.session_id !== id) return;
    bytes += payload?.length ?? 0;
    last = performance.now();
    acks.add(id, e.offset, payload?.length ?? 0);
  });
  const onExit = host.client.on('exit', (e) => {
    if (e.session_id === id) resolveExit(e.total_written);
  });
  const started = performance.now();
  await host.client.request('spawn', { session_id: id, shell: '/bin/sh', args: ['-c', script], cwd: tmpdir(), env: env(), rows: 24, cols: 80 });
  const total = await exited;
  const seconds = (last - started) / 1000;
  onData.dispose();
  onExit.dispose();
  await host.client.request('forget', { session_id: id });
  if (total !== bytes) throw new Error(`pty host delivered ${bytes} of ${total} bytes`);
  return bytes / 1e6 / seconds;
}

/** p50 ms from writing one key to seeing its echo, bare node-pty. */
async function bareEcho(samples: number): Promise<number> {
  const pty = spawnPty('/bin/sh', [], { name: 'xterm-256color', cwd: tmpdir(), env: env(), rows: 24, cols: 80, encoding: null });
  let waiting: (() => void) | undefined;
  pty.onData((() => waiting?.()) as unknown as (data: string) => void);
  await sleep(300); // the prompt
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const seen = new Promise<void>((resolve) => (waiting = resolve));
    const t0 = performance.now();
    pty.write('a');
    await seen;
    times.push(performance.now() - t0);
    await sleep(ECHO_GAP_MS);
  }
  pty.kill('SIGKILL');
  return median(times);
}

/** p50 ms of the same through the pty host: write request out, `data` event back. */
async function hostEcho(host: Host, samples: number): Promise<number> {
  const id = randomUUID();
  let waiting: (() => void) | undefined;
  const onData = host.client.on('data', (e) => {
    if (e.session_id === id) waiting?.();
  });
  await host.client.request('spawn', { session_id: id, shell: '/bin/sh', args: [], cwd: tmpdir(), env: env(), rows: 24, cols: 80 });
  await sleep(300);
  const key = Buffer.from('a');
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const seen = new Promise<void>((resolve) => (waiting = resolve));
    const t0 = performance.now();
    void host.client.request('write', { session_id: id }, { payload: key });
    await seen;
    times.push(performance.now() - t0);
    await sleep(ECHO_GAP_MS);
  }
  onData.dispose();
  await host.client.request('kill', { session_id: id, signal: 'SIGKILL' });
  await host.client.request('forget', { session_id: id });
  return median(times);
}

export const run: BenchModule = async (ctx: BenchContext) => {
  const rows: BenchRow[] = [];
  const host = await startHost();
  try {
    const n = ctx.quick ? FLOOD_BYTES.quick : FLOOD_BYTES.full;
    for (const flood of FLOODS) {
      const bare: number[] = [];
      const hosted: number[] = [];
      for (let rep = 0; rep < ctx.repetitions; rep++) {
        // Interleaved, so drift on a shared machine hits both variants alike.
        bare.push(await bareFlood(flood.script(n)));
        hosted.push(await hostFlood(host, flood.script(n)));
      }
      const group = `pty read ${flood.name}`;
      rows.push(row(group, 'bare node-pty', ctx, 'MB/s', bare));
      rows.push(row(group, 'pty host → data events', ctx, 'MB/s', hosted, { name: 'bare node-pty', median: median(bare) }));
    }
    const samples = ctx.quick ? ECHO_SAMPLES.quick : ECHO_SAMPLES.full;
    const bareP50: number[] = [];
    const hostP50: number[] = [];
    for (let rep = 0; rep < ctx.repetitions; rep++) {
      bareP50.push(await bareEcho(samples));
      hostP50.push(await hostEcho(host, samples));
    }
    // Lower is better for latency: report echoes per second of p50 so "higher is better" holds for the ratio.
    const perS = (values: number[]) => values.map((ms) => 1000 / ms);
    rows.push(row('keystroke echo p50', 'bare node-pty', ctx, 'echoes/s at p50', perS(bareP50)));
    rows.push(
      row('keystroke echo p50', 'pty host (write → data)', ctx, 'echoes/s at p50', perS(hostP50), { name: 'bare node-pty', median: median(perS(bareP50)) }),
    );
  } finally {
    await host.stop();
  }
  return rows;
};
