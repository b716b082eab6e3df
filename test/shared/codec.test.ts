/** Envelope encoding and stream framing: frames survive any chunking; bad prefixes fail loudly. */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';

import { decodeEnvelope, encodeEnvelope, FRAME_PREFIX_BYTES, FrameDecoder, Kind, writeFramePrefix } from '../../shared/codec.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';

function frame(header: Uint8Array, payload?: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME_PREFIX_BYTES + header.length + (payload?.length ?? 0));
  writeFramePrefix(out, 0, header.length, payload?.length ?? 0);
  out.set(header, FRAME_PREFIX_BYTES);
  if (payload) out.set(payload, FRAME_PREFIX_BYTES + header.length);
  return out;
}

function collect(): { frames: Array<[unknown, Uint8Array | undefined]>; decoder: FrameDecoder } {
  const frames: Array<[unknown, Uint8Array | undefined]> = [];
  return { frames, decoder: new FrameDecoder((h, p) => frames.push([decodeEnvelope(h), p ? Buffer.from(p) : undefined])) };
}

test('envelopes round-trip, including large integers and undefined params', () => {
  const now = Date.now() * 1000;
  assert.deepEqual(decodeEnvelope(encodeEnvelope([Kind.Request, 7, 'spawn', { at: now, name: 'é' }, 5000])), [
    Kind.Request,
    7,
    'spawn',
    { at: now, name: 'é' },
    5000,
  ]);
  assert.deepEqual(decodeEnvelope(encodeEnvelope([Kind.Event, 'exit', undefined])), [Kind.Event, 'exit', undefined]);
  assert.deepEqual(decodeEnvelope(encodeEnvelope([Kind.Error, 1, { code: 'X', message: 'm' }])), [Kind.Error, 1, { code: 'X', message: 'm' }]);
});

test('malformed envelopes are refused with INVALID_MESSAGE', () => {
  for (const bad of [{ a: 1 }, [9, 1], [Kind.Request, 1, 'm', {}, 0], [Kind.Error, 1, { code: 1 }], [Kind.Cancel, 1.5]]) {
    assert.throws(() => decodeEnvelope(encodeEnvelope(bad as never)), { code: ErrorCode.INVALID_MESSAGE });
  }
  assert.throws(() => decodeEnvelope(new Uint8Array([0xc1])), { code: ErrorCode.INVALID_MESSAGE });
});

test('frames split at every possible boundary decode identically', () => {
  const payload = randomBytes(300);
  const stream = Buffer.concat([frame(encodeEnvelope([Kind.Event, 'data', { id: 1 }]), payload), frame(encodeEnvelope([Kind.Cancel, 3]))]);
  for (let cut = 0; cut <= stream.length; cut++) {
    const { frames, decoder } = collect();
    decoder.push(stream.subarray(0, cut));
    decoder.push(stream.subarray(cut));
    assert.equal(frames.length, 2, `cut at ${cut}`);
    assert.deepEqual(frames[0]![0], [Kind.Event, 'data', { id: 1 }]);
    assert.ok(Buffer.from(frames[0]![1]!).equals(payload));
    assert.deepEqual(frames[1], [[Kind.Cancel, 3], undefined]);
  }
});

test('a 3 MiB frame fed byte-ranges of 64 KiB is assembled once, intact', () => {
  const payload = randomBytes(3 * 1024 * 1024);
  const stream = frame(encodeEnvelope([Kind.Result, 1, null]), payload);
  const { frames, decoder } = collect();
  for (let off = 0; off < stream.length; off += 65536) decoder.push(stream.subarray(off, off + 65536));
  assert.equal(frames.length, 1);
  assert.ok(Buffer.from(frames[0]![1]!).equals(payload));
});

test('a frame inside one chunk is handed out without copying', () => {
  const stream = frame(encodeEnvelope([Kind.Result, 1, null]), randomBytes(64));
  let seen: Uint8Array | undefined;
  new FrameDecoder((_h, p) => (seen = p)).push(stream);
  assert.equal(seen?.buffer, stream.buffer);
});

test('bad prefixes throw INVALID_MESSAGE and the decoder stays dead', () => {
  const cases: Array<[Uint8Array, RegExp]> = [
    [Buffer.from('{"jsonrpc":"2.0"}\n'), /expected magic 0xc1, got 0x7b \('\{'\)/],
    [Buffer.from([0xc1, 0, 0, 0, 0, 0, 0, 0, 0]), /header length 0/],
    [Buffer.from([0xc1, 0x7f, 0, 0, 0, 0, 0, 0, 0]), /header length \d+ outside/],
    [Buffer.from([0xc1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]), /payload length \d+ above/],
  ];
  for (const [bytes, message] of cases) {
    const { frames, decoder } = collect();
    assert.throws(
      () => decoder.push(bytes),
      (err: unknown) => err instanceof SupervisorError && err.code === ErrorCode.INVALID_MESSAGE && message.test(err.message),
    );
    decoder.push(frame(encodeEnvelope([Kind.Cancel, 1])));
    assert.equal(frames.length, 0);
  }
});

test('a prefix claiming a huge payload costs only the bytes that arrived; the frame still assembles whole', () => {
  const claimed = 200 * 1024 * 1024;
  const header = encodeEnvelope([Kind.Result, 1, null]);
  const prefix = new Uint8Array(FRAME_PREFIX_BYTES);
  writeFramePrefix(prefix, 0, header.length, claimed);
  const { frames, decoder } = collect();
  const before = process.memoryUsage().arrayBuffers;
  decoder.push(prefix);
  decoder.push(header);
  decoder.push(randomBytes(1024));
  const grown = process.memoryUsage().arrayBuffers - before;
  assert.ok(grown < 32 * 1024 * 1024, `held ${grown} bytes for a frame of which 1 KiB arrived`);
  assert.equal(frames.length, 0);

  // The same path (pieces kept, copied once at the end) for a frame just over the eager limit, fed unevenly.
  const payload = randomBytes(1024 * 1024 + 777);
  const stream = frame(encodeEnvelope([Kind.Result, 2, null]), payload);
  const next = collect();
  for (let off = 0, step = 1; off < stream.length; off += step, step = (step * 7 + 13) % 70_001) next.decoder.push(stream.subarray(off, off + step));
  assert.equal(next.frames.length, 1);
  assert.deepEqual(next.frames[0]![0], [Kind.Result, 2, null]);
  assert.ok(Buffer.from(next.frames[0]![1]!).equals(payload));
});
