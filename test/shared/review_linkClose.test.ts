/**
 * A link closed by one side must reach the other side at once, over the real transports:
 * a worker thread's parentPort (the Worker object has no 'close' event of its own) and a
 * child's duplex socket on fd 3 (the pty host's link), where the last frames must still arrive.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { connect } from '../../shared/channel.js';
import { ErrorCode, type SupervisorError } from '../../shared/errors.js';
import { workerTransport } from '../../shared/transports/messagePort.js';
import { streamTransport } from '../../shared/transports/stream.js';
import { TestProtocol } from '../fixtures/channelProtocol.js';

/** Requests wait 60 s by default; failing well under this proves the close ended them. */
const FAIL_FAST_MS = 3_000;

const moduleUrl = (relative: string): string => new URL(relative, import.meta.url).href;

/**
 * A worker serving TestProtocol on parentPort that stays alive after its channel closes (as the
 * hub does while it stops its upstreams). A 'note' with text 'close yourself' makes it dispose
 * its server and keeps running; a close it did not start makes it exit with code 7.
 */
function startWorker(): Worker {
  const code = `
    import { parentPort } from 'node:worker_threads';
    import { messagePortTransport } from ${JSON.stringify(moduleUrl('../../shared/transports/messagePort.js'))};
    import { serveTest } from ${JSON.stringify(moduleUrl('../fixtures/channelProtocol.js'))};
    const keepAlive = setInterval(() => {}, 1_000);
    let selfClosed = false;
    const server = serveTest(messagePortTransport(parentPort));
    server.on('note', (e) => {
      if (e.text !== 'close yourself') return;
      selfClosed = true;
      server.dispose();
    });
    server.onClose(() => {
      if (selfClosed) return; // stays alive: the parent must learn of the close from the link itself
      clearInterval(keepAlive);
      process.exit(7);
    });
  `;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`));
}

test('worker: the worker closing its side of the channel fails the parent pending requests at once', async (t) => {
  const worker = startWorker();
  t.after(() => worker.terminate());
  const client = connect(workerTransport(worker), TestProtocol);
  await client.ready;
  const closed = new Promise<SupervisorError>((resolve) => client.onClose(resolve));
  const pending = client.request('sleep', { ms: 60_000 });
  await client.request('add', { a: 1, b: 1 }); // the sleep is running on the worker now
  const closedAt = Date.now();
  client.emit('note', { text: 'close yourself' });
  await assert.rejects(pending, (err: SupervisorError) => err.code === ErrorCode.CHANNEL_CLOSED && /'sleep' failed/.test(err.message));
  assert.ok(Date.now() - closedAt < FAIL_FAST_MS, `took ${Date.now() - closedAt} ms`);
  const reason = await closed;
  assert.equal(reason.code, ErrorCode.CHANNEL_CLOSED);
  assert.match(reason.message, /peer closed/);
  // A closed channel refuses, rather than posting into a port nobody reads.
  await assert.rejects(client.request('add', { a: 1, b: 1 }), { code: ErrorCode.CHANNEL_CLOSED });
});

test('worker: the parent closing its side is heard by the worker, which can then stop', async (t) => {
  const worker = startWorker();
  t.after(() => worker.terminate());
  const exited = once(worker, 'exit');
  const client = connect(workerTransport(worker), TestProtocol);
  await client.ready;
  client.dispose();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    exited.then(([code]) => `exit ${code}`),
    new Promise((resolve) => (timer = setTimeout(resolve, FAIL_FAST_MS, 'still running'))),
  ]);
  clearTimeout(timer);
  assert.equal(outcome, 'exit 7', 'the worker server heard the close and exited');
});

test('child over a duplex socket: frames written just before close, a big one included, reach the parent intact', async (t) => {
  const bigBytes = 8 * 1024 * 1024;
  const code = `
    import { Socket } from 'node:net';
    import { streamTransport } from ${JSON.stringify(moduleUrl('../../shared/transports/stream.js'))};
    const sock = new Socket({ fd: 3, readable: true, writable: true });
    const link = streamTransport(sock, sock);
    for (let i = 0; i < 100; i++) link.send(new Uint8Array([1, i]));
    const big = new Uint8Array(${bigBytes});
    for (let i = 0; i < big.length; i++) big[i] = i % 251;
    link.send(new Uint8Array([2]), big);
    link.send(new Uint8Array([3]));
    link.close();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
  const exited = once(child, 'exit');
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const sock = child.stdio[3] as Socket;
  const link = streamTransport(sock, sock);
  const kinds: number[] = [];
  let big: Uint8Array | undefined;
  link.onMessage((header, payload) => {
    kinds.push(header[0]!);
    if (header[0] === 2) big = payload && new Uint8Array(payload);
  });
  const reason = await new Promise<SupervisorError>((resolve) => link.onClose(resolve));
  assert.equal(reason.code, ErrorCode.CHANNEL_CLOSED);
  assert.deepEqual(kinds, [...Array.from({ length: 100 }, () => 1), 2, 3], 'every frame, in order');
  assert.equal(big?.length, bigBytes);
  let corrupt = -1;
  for (let i = 0; i < bigBytes && corrupt < 0; i++) if (big![i] !== i % 251) corrupt = i;
  assert.equal(corrupt, -1, `payload byte ${corrupt} corrupted`);
  const [exitCode] = await exited;
  assert.equal(exitCode, 0, 'the child ended once its link was flushed');
});
