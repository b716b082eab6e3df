/** The typed channel's behaviour, run identically over the in-memory pair, a worker thread and a child process. */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';

import { type CancelListener, type Cancellation, CancelSource } from '../../shared/cancellation.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { PEER_KINDS, type Peer, type PeerOptions, startPeer } from './channelPeers.js';

/** A Cancellation that never fires and counts who listens: the channel must unsubscribe when a request settles. */
class CountingCancellation implements Cancellation {
  readonly cancelReason = undefined;
  subscribed = 0;
  everSubscribed = 0;
  onCancel(_listener: CancelListener): () => void {
    this.subscribed++;
    this.everSubscribed++;
    let on = true;
    return () => {
      if (on) this.subscribed--;
      on = false;
    };
  }
}

/** Polls `check` until it holds; the server's view (e.g. "cancel arrived") is only visible through a request. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail('condition not met in time');
    await sleep(10);
  }
}

function hasCode(code: string) {
  return (err: unknown) => {
    assert.ok(err instanceof SupervisorError, `expected a SupervisorError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return true;
  };
}

for (const kind of PEER_KINDS) {
  describe(`channel over ${kind}`, () => {
    async function peer(t: { after: (fn: () => Promise<void>) => void }, options?: PeerOptions): Promise<Peer> {
      const p = await startPeer(kind, options);
      t.after(() => p.stop());
      return p;
    }

    test('request and reply, after the handshake', async (t) => {
      const { client } = await peer(t);
      await client.ready;
      assert.equal(await client.request('add', { a: 2, b: 3 }), 5);
      assert.deepEqual(await client.request('echo', { text: 'héllo' }), { text: 'héllo' });
      const many = await Promise.all(Array.from({ length: 200 }, (_, i) => client.request('add', { a: i, b: 1 })));
      assert.deepEqual(
        many,
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
    });

    test('requests sent before the hello wait for it', async (t) => {
      const { client } = await peer(t);
      assert.equal(await client.request('add', { a: 1, b: 1 }), 2);
    });

    test('errors cross the wire with their code and data', async (t) => {
      const { client } = await peer(t);
      await assert.rejects(client.request('fail', { code: ErrorCode.PTY_NOT_FOUND, message: 'no pty 7' }), (err) => {
        hasCode(ErrorCode.PTY_NOT_FOUND)(err);
        assert.equal((err as SupervisorError).message, 'no pty 7');
        assert.deepEqual((err as SupervisorError).data, { from: 'server' });
        return true;
      });
      await assert.rejects(client.request('fail', { code: '', message: 'plain boom' }), (err) => {
        hasCode(ErrorCode.HANDLER_FAILED)(err);
        assert.equal((err as SupervisorError).message, 'plain boom');
        return true;
      });
    });

    test('events from server to client arrive in order, before the reply', async (t) => {
      const { client } = await peer(t);
      const seen: number[] = [];
      t.after(() => sub.dispose());
      const sub = client.on('tick', (e) => seen.push(e.n));
      await client.request('ticks', { count: 500 });
      assert.deepEqual(
        seen,
        Array.from({ length: 500 }, (_, i) => i),
      );
    });

    test("onResult runs as the reply is read, before the server's later events (a continuation would run after them)", async (t) => {
      const { client } = await peer(t);
      await client.ready;
      const seen: string[] = [];
      const sub = client.on('note', (e) => seen.push(e.text));
      t.after(() => sub.dispose());
      const atResult: string[][] = [];
      const reply = client.request('add', { a: 1, b: 2 }, { onResult: () => atResult.push([...seen]) });
      // The server answers, then echoes the note; this process stops reading meanwhile, so over a
      // stream both frames come in one read.
      client.emit('note', { text: 'after the reply' });
      setImmediate(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200));
      assert.equal(await reply, 3);
      await eventually(async () => seen.length === 1);
      assert.deepEqual(atResult, [[]]);

      let called = false;
      await assert.rejects(client.request('fail', { code: '', message: 'no' }, { onResult: () => (called = true) }));
      assert.equal(called, false, 'an error reply is no result');
    });

    test('events from client to server, with a payload both ways', async (t) => {
      const { client } = await peer(t);
      const bytes = randomBytes(70 * 1024);
      const echoed = new Promise<[string, Uint8Array | undefined]>((resolve) => {
        const sub = client.on('note', (e, payload) => {
          sub.dispose();
          resolve([e.text, payload]);
        });
      });
      client.emit('note', { text: 'hi' }, { payload: bytes });
      const [text, payload] = await echoed;
      assert.equal(text, 'echo:hi');
      assert.ok(payload !== undefined && Buffer.from(payload).equals(bytes));
      assert.deepEqual((await client.request('stats', {})).notes, ['hi']);
    });

    for (const size of [0, 1, 4 * 1024, 64 * 1024, 1024 * 1024 + 3]) {
      test(`binary payload of ${size} bytes arrives intact both ways`, async (t) => {
        const { client } = await peer(t);
        const bytes = randomBytes(size);
        const copied = await client.requestWithPayload('echoBytes', { transfer: false }, { payload: bytes });
        assert.equal(copied.result.length, size);
        assert.ok(Buffer.from(copied.payload ?? new Uint8Array(0)).equals(bytes));
        // Transferred: a fresh buffer that owns its memory is handed over.
        const mine = new Uint8Array(bytes);
        const moved = await client.requestWithPayload('echoBytes', { transfer: true }, { payload: mine, transfer: true });
        assert.ok(Buffer.from(moved.payload ?? new Uint8Array(0)).equals(bytes));
        // Big payloads are moved as they are; small ones ride copied inside the header's buffer.
        if (kind === 'worker') assert.equal(mine.byteLength, size >= 16 * 1024 ? 0 : size, 'detached only when moved');
      });
    }

    test('a request past its timeout fails with REQUEST_TIMEOUT and the server is told', async (t) => {
      const { client } = await peer(t);
      const started = Date.now();
      await assert.rejects(client.request('sleep', { ms: 30_000 }, { timeout: 50 }), hasCode(ErrorCode.REQUEST_TIMEOUT));
      assert.ok(Date.now() - started < 2_000);
      await eventually(async () => (await client.request('stats', {})).aborted === 1);
    });

    test('aborting the signal cancels the request on both sides', async (t) => {
      const { client } = await peer(t);
      const ac = new AbortController();
      const pending = client.request('sleep', { ms: 30_000 }, { signal: ac.signal });
      await client.request('add', { a: 0, b: 0 }); // the sleep is now running on the server
      ac.abort(new Error('user pressed stop'));
      await assert.rejects(pending, hasCode(ErrorCode.REQUEST_CANCELLED));
      await eventually(async () => (await client.request('stats', {})).aborted === 1);
      await assert.rejects(client.request('add', { a: 1, b: 1 }, { signal: AbortSignal.abort() }), hasCode(ErrorCode.REQUEST_CANCELLED));
    });

    test('a Cancellation cancels the request on both sides; the handler follows its context as one', async (t) => {
      const { client } = await peer(t);
      const source = new CancelSource();
      const pending = client.request('nap', { ms: 30_000 }, { cancellation: source });
      await client.request('add', { a: 0, b: 0 }); // the nap is now running on the server
      source.cancel(new Error('user pressed stop'));
      await assert.rejects(pending, (err: SupervisorError) => err.code === ErrorCode.REQUEST_CANCELLED && /user pressed stop/.test(err.message));
      await eventually(async () => (await client.request('stats', {})).aborted === 1);
      await assert.rejects(client.request('add', { a: 1, b: 1 }, { cancellation: source }), hasCode(ErrorCode.REQUEST_CANCELLED));
      // A request that settled lets go of the caller's Cancellation: nothing stays subscribed.
      const watched = new CountingCancellation();
      assert.deepEqual(await client.request('nap', { ms: 1 }, { cancellation: watched }), { slept: 1 });
      await assert.rejects(client.request('fail', { code: '', message: 'boom' }, { cancellation: watched }));
      assert.equal(watched.subscribed, 0);
      assert.equal(watched.everSubscribed, 2);
    });

    test('a version mismatch fails with PROTOCOL_MISMATCH and the client refuses', async (t) => {
      const { client } = await peer(t, { version: 2 });
      const pending = client.request('add', { a: 1, b: 2 });
      await assert.rejects(client.ready, hasCode(ErrorCode.PROTOCOL_MISMATCH));
      await assert.rejects(pending, hasCode(ErrorCode.PROTOCOL_MISMATCH));
      assert.ok(client.closed);
      // Later requests keep failing with the reason, not a bare "closed".
      await assert.rejects(client.request('add', { a: 1, b: 2 }), hasCode(ErrorCode.PROTOCOL_MISMATCH));
    });

    test('invalid control messages are rejected at the receiving side; the link stays up', async (t) => {
      const { client } = await peer(t);
      await assert.rejects(client.request('add', { a: 'one', b: 2 } as never), (err) => {
        hasCode(ErrorCode.INVALID_MESSAGE)(err);
        assert.match((err as Error).message, /params of 'add' rejected: \/a/);
        return true;
      });
      await assert.rejects(client.request('badResult', {}), hasCode(ErrorCode.INVALID_MESSAGE));
      const errors: SupervisorError[] = [];
      const ticks: unknown[] = [];
      t.after(() => {
        onError.dispose();
        onTick.dispose();
      });
      const onError = client.onError((e) => errors.push(e));
      const onTick = client.on('tick', (e) => ticks.push(e));
      await client.request('badEvent', {});
      assert.deepEqual(ticks, []);
      assert.equal(errors[0]?.code, ErrorCode.INVALID_MESSAGE);
      assert.equal(await client.request('add', { a: 2, b: 2 }), 4);
    });

    test('an unknown method fails with UNKNOWN_METHOD', async (t) => {
      const { client } = await peer(t);
      await assert.rejects(client.request('missing', {}), hasCode(ErrorCode.UNKNOWN_METHOD));
      await assert.rejects(client.request('noSuchMethod' as never, {} as never), hasCode(ErrorCode.UNKNOWN_METHOD));
      assert.equal(await client.request('add', { a: 1, b: 1 }), 2);
    });
  });
}
