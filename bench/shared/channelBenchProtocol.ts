/** Echo contract for the channel benchmark, and the raw length-prefixed framing of its baseline. */

import type { Readable, Writable } from 'node:stream';

import { Type } from 'typebox';

import { defineProtocol } from '../../shared/protocol/defineProtocol.js';

export const EchoProtocol = defineProtocol({
  name: 'bench-echo',
  version: 1,
  requests: {
    /** Answers with the payload it got. */
    echo: { params: Type.Object({}), result: Type.Null() },
  },
  events: {},
});

/** Baseline framing: u32 length + bytes, written the way a careful hand-rolled pump would. */
export function writeRawFrame(out: Writable, bytes: Uint8Array): void {
  const prefix = Buffer.allocUnsafe(4);
  prefix.writeUInt32BE(bytes.length, 0);
  out.cork();
  out.write(prefix);
  out.write(bytes);
  process.nextTick(() => out.uncork());
}

/** Calls `onFrame` for each u32-length-prefixed frame on `input`. */
export function readRawFrames(input: Readable, onFrame: (bytes: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  input.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let off = 0;
    while (pending.length - off >= 4) {
      const len = pending.readUInt32BE(off);
      if (pending.length - off - 4 < len) break;
      onFrame(pending.subarray(off + 4, off + 4 + len));
      off += 4 + len;
    }
    pending = off === pending.length ? Buffer.alloc(0) : pending.subarray(off);
  });
}
