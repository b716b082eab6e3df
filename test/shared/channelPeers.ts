/** Starts a TestProtocol server over each transport and hands back a connected client. */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

import { type Client, type ConnectOptions, connect } from '../../shared/channel.js';
import { createLinkedPair } from '../../shared/transports/inMemory.js';
import { workerTransport } from '../../shared/transports/messagePort.js';
import { streamTransport } from '../../shared/transports/stream.js';
import { serveTest, TestProtocol, TestProtocolV2, type TestProtocolT } from '../fixtures/channelProtocol.js';

export type PeerKind = 'in-memory' | 'worker' | 'child';
export const PEER_KINDS: PeerKind[] = ['in-memory', 'worker', 'child'];

/** A child that ignores its stdin closing gets this long before SIGKILL. */
const CHILD_STOP_MS = 2_000;

export interface PeerOptions {
  /** Protocol version the server speaks (the client always speaks 1). */
  version?: number;
  /** Child only: write text on the channel stream after the hello. */
  garbage?: boolean;
  connect?: ConnectOptions;
}

export interface Peer {
  client: Client<TestProtocolT>;
  /** Kills the serving side abruptly: SIGKILL, worker.terminate(), or dropping the link. */
  kill(): Promise<void>;
  /** Disposes the client and makes sure the peer is gone. */
  stop(): Promise<void>;
  /** Child only: resolves with [exitCode, signal] when the process ends. */
  exited?: Promise<unknown[]>;
}

export async function startPeer(kind: PeerKind, options: PeerOptions = {}): Promise<Peer> {
  const version = options.version ?? 1;
  if (kind === 'in-memory') {
    const [near, far] = createLinkedPair();
    const server = serveTest(far, (version === 2 ? TestProtocolV2 : TestProtocol) as TestProtocolT);
    const client = connect(near, TestProtocol, options.connect);
    return {
      client,
      kill: async () => far.close(),
      stop: async () => {
        client.dispose();
        server.dispose();
      },
    };
  }
  if (kind === 'worker') {
    const worker = new Worker(new URL('../fixtures/channelWorker.js', import.meta.url), { workerData: { version } });
    const client = connect(workerTransport(worker), TestProtocol, options.connect);
    return {
      client,
      kill: async () => void (await worker.terminate()),
      stop: async () => {
        client.dispose();
        await worker.terminate();
      },
    };
  }
  const args = [new URL('../fixtures/channelChild.js', import.meta.url).pathname, '--version', String(version)];
  if (options.garbage) args.push('--garbage');
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const client = connect(streamTransport(child.stdout, child.stdin), TestProtocol, options.connect);
  return {
    client,
    exited,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      client.dispose();
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_STOP_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
