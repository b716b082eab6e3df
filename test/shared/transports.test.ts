/** Transport details the channel relies on: early frames kept, close semantics, foreign values refused. */

import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { test } from 'node:test';
import { MessageChannel } from 'node:worker_threads';

import { connect } from '../../shared/channel.js';
import { encodeEnvelope, FRAME_PREFIX_BYTES, Kind } from '../../shared/codec.js';
import { ErrorCode, type SupervisorError } from '../../shared/errors.js';
import { createLinkedPair } from '../../shared/transports/inMemory.js';
import { messagePortTransport } from '../../shared/transports/messagePort.js';
import { streamTransport } from '../../shared/transports/stream.js';
import { serveTest, TestProtocol } from '../fixtures/channelProtocol.js';

function portPair(t: { after: (fn: () => void) => void }) {
  const { port1, port2 } = new MessageChannel();
  const server = serveTest(messagePortTransport(port2));
  const client = connect(messagePortTransport(port1), TestProtocol);
  t.after(() => {
    client.dispose();
    server.dispose();
  });
  return { port1, port2, server, client };
}

test('MessageChannel: request, payload both ways, and a big payload moved not copied', async (t) => {
  const { client } = portPair(t);
  assert.equal(await client.request('add', { a: 20, b: 22 }), 42);
  const big = new Uint8Array(256 * 1024).fill(7);
  const reply = await client.requestWithPayload('echoBytes', { transfer: true }, { payload: big, transfer: true });
  assert.equal(big.byteLength, 0, 'moved');
  assert.equal(reply.payload?.length, 256 * 1024);
  assert.ok(reply.payload?.every((b) => b === 7));
});

test('MessageChannel: closing one port fails the other side at once', async (t) => {
  const { port2, client } = portPair(t);
  await client.ready;
  const pending = client.request('sleep', { ms: 60_000 });
  await client.request('add', { a: 0, b: 0 });
  port2.close();
  await assert.rejects(pending, { code: ErrorCode.CHANNEL_CLOSED });
});

test('MessageChannel: a foreign value on the port closes the link with INVALID_MESSAGE', async (t) => {
  const { port2, client } = portPair(t);
  await client.ready;
  const closed = new Promise<SupervisorError>((resolve) => client.onClose(resolve));
  // Other code posting on the server's port behind the channel's back: the client sees a non-frame value.
  port2.postMessage({ hello: 'not a frame' });
  const reason = await closed;
  assert.equal(reason.code, ErrorCode.INVALID_MESSAGE);
  assert.match(reason.message, /non-channel value/);
});

test('MessageChannel: frames sent in one turn leave as one message, in order around a big payload', async () => {
  const { port1, port2 } = new MessageChannel();
  const sender = messagePortTransport(port1);
  const receiver = messagePortTransport(port2);
  let posts = 0;
  const post = port1.postMessage.bind(port1);
  port1.postMessage = ((value: unknown, transfer?: ArrayBuffer[]) => {
    posts++;
    post(value, transfer as never);
  }) as typeof port1.postMessage;
  const got: Array<[number, number]> = [];
  const all = new Promise<void>((resolve) =>
    receiver.onMessage((header, payload) => {
      got.push([header[0]!, payload?.length ?? 0]);
      if (got.length === 6) resolve();
    }),
  );
  // Three small frames, a big one (its own message), two small ones, all in one turn.
  sender.send(new Uint8Array([1]));
  sender.send(new Uint8Array([2]), new Uint8Array([9, 9]));
  sender.send(new Uint8Array([3]));
  sender.send(new Uint8Array([4]), new Uint8Array(64 * 1024).fill(1));
  sender.send(new Uint8Array([5]), new Uint8Array(3));
  sender.send(new Uint8Array([6]));
  await all;
  assert.deepEqual(got, [
    [1, 0],
    [2, 2],
    [3, 0],
    [4, 64 * 1024],
    [5, 3],
    [6, 0],
  ]);
  assert.equal(posts, 3, 'a batch of three, the big frame, a batch of two');
  sender.close();
  receiver.close();
});

test('MessageChannel: frames sent just before close still arrive', async () => {
  const { port1, port2 } = new MessageChannel();
  const sender = messagePortTransport(port1);
  const receiver = messagePortTransport(port2);
  const got: number[] = [];
  const closed = new Promise<SupervisorError>((resolve) => receiver.onClose(resolve));
  receiver.onMessage((header) => got.push(header[0]!));
  sender.send(new Uint8Array([1]));
  sender.send(new Uint8Array([2]));
  sender.close();
  assert.equal((await closed).code, ErrorCode.CHANNEL_CLOSED);
  assert.deepEqual(got, [1, 2]);
});

test('MessageChannel: a batch whose record overruns it closes the link with INVALID_MESSAGE', async () => {
  const { port1, port2 } = new MessageChannel();
  const receiver = messagePortTransport(port2);
  const got: number[] = [];
  receiver.onMessage((header) => got.push(header[0]!));
  const closed = new Promise<SupervisorError>((resolve) => receiver.onClose(resolve));
  // Batch mark, one good record (header [7]), then a record claiming 1000 bytes.
  const bad = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 5, 0, 0, 0, 1, 7, 0, 0, 3, 0xe8, 0, 0, 0, 1, 8]);
  port1.postMessage(bad);
  const reason = await closed;
  assert.equal(reason.code, ErrorCode.INVALID_MESSAGE);
  assert.match(reason.message, /overruns/);
  assert.deepEqual(got, [7], 'the records before the bad one were delivered');
  port1.close();
});

test('in-memory: frames sent before anyone listens are kept; close reaches both sides once', async () => {
  const [a, b] = createLinkedPair();
  const got: number[] = [];
  a.send(new Uint8Array([1]));
  a.send(new Uint8Array([2]));
  await new Promise((resolve) => setImmediate(resolve));
  b.onMessage((header) => got.push(header[0]!));
  assert.deepEqual(got, [1, 2]);
  const reasons: string[] = [];
  a.onClose((r) => reasons.push(`a:${r.code}`));
  b.onClose((r) => reasons.push(`b:${r.code}`));
  a.close();
  a.close();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(reasons.sort(), ['a:CHANNEL_CLOSED', 'b:CHANNEL_CLOSED']);
  a.send(new Uint8Array([3])); // dropped, not thrown
  let late = '';
  b.onClose((r) => (late = r.code));
  await Promise.resolve();
  assert.equal(late, ErrorCode.CHANNEL_CLOSED, 'a listener added after the close still hears it');
});

test('client dispose fails pending requests; server handlers see their signal abort', async (t) => {
  const [a, b] = createLinkedPair();
  const server = serveTest(b);
  const client = connect(a, TestProtocol);
  t.after(() => server.dispose());
  const pending = client.request('sleep', { ms: 60_000 });
  await client.request('add', { a: 1, b: 1 });
  client.dispose();
  await assert.rejects(pending, { code: ErrorCode.CHANNEL_CLOSED });
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(server.closed);
});

test('a throwing event listener is reported and does not stop other listeners or the link', async (t) => {
  const [a, b] = createLinkedPair();
  const server = serveTest(b);
  const client = connect(a, TestProtocol);
  t.after(() => {
    client.dispose();
    server.dispose();
  });
  const errors: string[] = [];
  const seen: number[] = [];
  client.onError((e) => errors.push(e.code));
  client.on('tick', () => {
    throw new Error('listener bug');
  });
  client.on('tick', (e) => seen.push(e.n));
  await client.request('ticks', { count: 2 });
  assert.deepEqual(seen, [0, 1]);
  assert.deepEqual(errors, [ErrorCode.HANDLER_FAILED, ErrorCode.HANDLER_FAILED]);
  assert.equal(await client.request('add', { a: 1, b: 2 }), 3);
});

test('stream: frames of one event-loop turn leave together at its check phase, or at once after flush()', async () => {
  const out = new PassThrough();
  const transport = streamTransport(new PassThrough(), out);
  try {
    const header = encodeEnvelope([Kind.Event, 'note', { text: 'a' }]);
    transport.send(header, Buffer.from('xy'));
    assert.equal(out.readableLength, 0, 'held (corked)');
    await new Promise<void>((resolve) => process.nextTick(resolve));
    assert.equal(out.readableLength, 0, 'still held after the tick: other callbacks of this turn may add to the batch');
    // A second callback of the same turn (another session's read) joins the same write.
    transport.send(header, Buffer.from('xy'));
    await new Promise<void>((resolve) => setImmediate(resolve));
    const batched = out.readableLength;
    assert.ok(batched > 0, 'written at the check phase');

    transport.send(header, Buffer.from('xy'));
    transport.flush();
    assert.equal(out.readableLength, batched * 1.5, 'flush() put the third frame on the wire at once');
    transport.flush(); // nothing left: harmless
    transport.send(header);
    assert.equal(out.readableLength, batched * 1.5, 'corked again for the rest of the turn');
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.ok(out.readableLength > batched * 1.5);
  } finally {
    transport.close();
  }
});

test('channel emit with flush: the event is on the wire before the tick ends', () => {
  const out = new PassThrough();
  const server = serveTest(streamTransport(new PassThrough(), out));
  try {
    const before = out.readableLength;
    server.emit('note', { text: 'later' });
    assert.equal(out.readableLength, before, 'a plain emit waits for the end of the tick');
    server.emit('note', { text: 'now' }, { flush: true });
    assert.ok(out.readableLength > before, 'flush: true wrote both frames now, in order');
  } finally {
    server.dispose();
  }
});

/** A byte sink that records how each frame reached it: one write() per chunk, or writev() of several. */
function recordingSink(): { sink: Writable; calls: Array<{ kind: 'write' | 'writev'; chunks: Buffer[] }> } {
  const calls: Array<{ kind: 'write' | 'writev'; chunks: Buffer[] }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      calls.push({ kind: 'write', chunks: [chunk] });
      cb();
    },
    writev(chunks, cb) {
      calls.push({ kind: 'writev', chunks: chunks.map((c) => c.chunk as Buffer) });
      cb();
    },
  });
  return { sink, calls };
}

test('stream: a flushed keystroke-sized frame alone in its turn leaves as one write of one buffer (no cork, no writev)', async () => {
  const { sink, calls } = recordingSink();
  const transport = streamTransport(new PassThrough(), sink);
  try {
    const header = encodeEnvelope([Kind.Event, 'input', { session_id: 's' }]);
    transport.send(header, Buffer.from('x'), false, true);
    assert.deepEqual(
      calls.map((c) => [c.kind, c.chunks.length]),
      [['write', 1]],
    );
    const frame = calls[0]!.chunks[0]!;
    assert.equal(frame.length, FRAME_PREFIX_BYTES + header.length + 1);
    assert.equal(frame.at(-1), 'x'.charCodeAt(0), 'the payload follows the header in the same buffer');
    // Nothing is left for the end of the turn.
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(calls.length, 1);

    // Frames already waiting for the end of the turn go first, together with the flushed one.
    transport.send(header, Buffer.from('a'));
    transport.send(header, Buffer.from('b'), false, true);
    assert.equal(calls.length, 2);
    assert.equal(calls[1]!.kind, 'writev');
    assert.deepEqual(
      calls[1]!.chunks.filter((c) => c.length === 1).map((c) => c.toString()),
      ['a', 'b'],
      'in order, in one writev',
    );

    // A big flushed payload is still never copied: it is written as the very buffer it came in.
    const big = Buffer.alloc(64 * 1024, 1);
    transport.send(header, big, false, true);
    assert.ok(
      calls.slice(2).some((c) => c.chunks.includes(big)),
      'the 64 KiB payload went out as itself',
    );
  } finally {
    transport.close();
  }
});
