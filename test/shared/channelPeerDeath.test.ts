/** A peer that dies or speaks garbage fails every pending request at once; nothing waits for its timeout. */

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';

import { connect } from '../../shared/channel.js';
import { encodeEnvelope, FRAME_PREFIX_BYTES, Kind, writeFramePrefix } from '../../shared/codec.js';
import { ErrorCode, type SupervisorError } from '../../shared/errors.js';
import { createLinkedPair } from '../../shared/transports/inMemory.js';
import { streamTransport } from '../../shared/transports/stream.js';
import { serveTest, TestProtocol } from '../fixtures/channelProtocol.js';
import { PEER_KINDS, startPeer } from './channelPeers.js';

/** Pending requests wait 60 s; failing well under this proves the close, not the timeout, ended them. */
const FAIL_FAST_MS = 3_000;

describe('peer killed mid-request', () => {
  for (const kind of PEER_KINDS) {
    test(`${kind}: every pending request fails at once with CHANNEL_CLOSED`, async (t) => {
      const peer = await startPeer(kind);
      t.after(() => peer.stop());
      const { client } = peer;
      const closed = new Promise<SupervisorError>((resolve) => client.onClose(resolve));
      const pending = Array.from({ length: 5 }, () => client.request('sleep', { ms: 60_000 }, { timeout: 60_000 }));
      const settled = Promise.allSettled(pending);
      // Replies come in order, so once this answers the sleeps are running on the server.
      assert.equal(await client.request('add', { a: 1, b: 1 }), 2);
      const killedAt = Date.now();
      await peer.kill();
      const results = await settled;
      assert.ok(Date.now() - killedAt < FAIL_FAST_MS, `took ${Date.now() - killedAt} ms`);
      for (const r of results) {
        assert.equal(r.status, 'rejected');
        const err = (r as PromiseRejectedResult).reason as SupervisorError;
        assert.equal(err.code, ErrorCode.CHANNEL_CLOSED, err.message);
        assert.match(err.message, /'sleep' failed: channel 'test' closed/);
      }
      assert.equal((await closed).code, ErrorCode.CHANNEL_CLOSED);
      assert.ok(client.closed);
      await assert.rejects(client.request('add', { a: 1, b: 1 }), { code: ErrorCode.CHANNEL_CLOSED });
      // Events after the close are dropped, not thrown.
      client.emit('note', { text: 'into the void' });
    });
  }

  test('in-memory: a server with no hello fails the handshake instead of waiting forever', async () => {
    const [near, far] = createLinkedPair();
    const client = connect(near, TestProtocol, { handshakeTimeout: 50 });
    const pending = client.request('add', { a: 1, b: 1 });
    await assert.rejects(client.ready, { code: ErrorCode.PROTOCOL_MISMATCH });
    await assert.rejects(pending, { code: ErrorCode.PROTOCOL_MISMATCH });
    assert.ok(far.closed);
  });
});

/** Two PassThrough pairs standing in for a child's stdio, with a server on the far side. */
function streamPair() {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const server = serveTest(streamTransport(toServer, toClient));
  const client = connect(streamTransport(toClient, toServer), TestProtocol);
  return { server, client, toClient };
}

describe('corrupted frames on a stream', () => {
  test('text on the stream closes that connection with a clear error; the process survives', async () => {
    const { client, toClient } = streamPair();
    assert.equal(await client.request('add', { a: 1, b: 2 }), 3);
    const closed = new Promise<SupervisorError>((resolve) => client.onClose(resolve));
    const pending = client.request('sleep', { ms: 60_000 });
    toClient.write('hello from console.log\n');
    const reason = await closed;
    assert.equal(reason.code, ErrorCode.INVALID_MESSAGE);
    assert.match(reason.message, /bad frame: expected magic 0xc1, got 0x68 \('h'\)/);
    await assert.rejects(pending, (err: SupervisorError) => err.code === ErrorCode.CHANNEL_CLOSED && /bad frame/.test(err.message));
  });

  test('a well-framed but undecodable header closes the connection', async () => {
    const { client, toClient } = streamPair();
    await client.ready;
    const closed = new Promise<SupervisorError>((resolve) => client.onClose(resolve));
    const junk = new Uint8Array([0xc1, 0xc1, 0xc1]); // 0xc1 is never valid msgpack
    const frame = new Uint8Array(FRAME_PREFIX_BYTES + junk.length);
    writeFramePrefix(frame, 0, junk.length, 0);
    frame.set(junk, FRAME_PREFIX_BYTES);
    toClient.write(frame);
    const reason = await closed;
    assert.equal(reason.code, ErrorCode.INVALID_MESSAGE);
    assert.match(reason.message, /undecodable message header/);
  });

  test('a decodable header with a malformed envelope closes the connection', async () => {
    const { client, toClient } = streamPair();
    await client.ready;
    const closed = new Promise<SupervisorError>((resolve) => client.onClose(resolve));
    const header = encodeEnvelope([Kind.Result, 'not an id', 1] as never);
    const frame = new Uint8Array(FRAME_PREFIX_BYTES + header.length);
    writeFramePrefix(frame, 0, header.length, 0);
    frame.set(header, FRAME_PREFIX_BYTES);
    toClient.write(frame);
    assert.match((await closed).message, /malformed message envelope/);
  });

  test('a child writing text on its stdout: the link closes, the child is told and exits', async (t) => {
    const peer = await startPeer('child', { garbage: true });
    t.after(() => peer.stop());
    const reason = await new Promise<SupervisorError>((resolve) => peer.client.onClose(resolve));
    assert.equal(reason.code, ErrorCode.INVALID_MESSAGE);
    assert.match(reason.message, /expected magic 0xc1, got 0x68 \('h'\); did the peer write text/);
    // Closing ended the child's stdin; its own channel closed and it exited cleanly, unkilled.
    const timer = setTimeout(() => assert.fail('the child did not exit after its link closed'), FAIL_FAST_MS);
    assert.deepEqual(await peer.exited, [0, null]);
    clearTimeout(timer);
  });
});
