/**
 * The wire format, and the only importer of msgpackr: the channel envelope (a small msgpack
 * array) and the length-prefixed framing used on byte streams. Bulk payloads never enter msgpack.
 */

import { Packr } from 'msgpackr';

import { ErrorCode, SupervisorError, type WireError } from './errors.js';

const packr = new Packr({
  // Record structures are state shared by both ends; a restarted peer would decode garbage.
  // Envelopes are arrays, so plain maps only cost key bytes inside params and results.
  useRecords: false,
  // Only JSON-like data crosses; no Map/Set/RegExp/Error extensions decoded from a peer.
  moreTypes: false,
  // Timestamps and byte counts above 2^32 come back as numbers, so `Type.Number()` accepts them.
  int64AsType: 'number',
  mapsAsObjects: true,
});

/** Envelope kinds: the first element of every header. */
export const Kind = {
  Hello: 0,
  Request: 1,
  Result: 2,
  Error: 3,
  Event: 4,
  Cancel: 5,
} as const;

/**
 * Every control message. Requests carry the caller's timeout so the handler knows its deadline;
 * a binary payload, when present, travels beside the header, never in it.
 */
export type Envelope =
  | [kind: typeof Kind.Hello, protocol: string, version: number]
  | [kind: typeof Kind.Request, id: number, method: string, params: unknown, timeoutMs: number]
  | [kind: typeof Kind.Result, id: number, result: unknown]
  | [kind: typeof Kind.Error, id: number, error: WireError]
  | [kind: typeof Kind.Event, name: string, data: unknown]
  | [kind: typeof Kind.Cancel, id: number];

function invalid(message: string, cause?: unknown): SupervisorError {
  const detail = cause instanceof Error ? `: ${cause.message}` : '';
  return new SupervisorError(ErrorCode.INVALID_MESSAGE, `${message}${detail}`);
}

/**
 * Encodes one envelope. The result is a view into msgpackr's arena: valid until dropped (the arena
 * is never rewritten), but its `.buffer` is shared, so never transfer it.
 */
export function encodeEnvelope(envelope: Envelope): Uint8Array {
  try {
    return packr.pack(envelope);
  } catch (err) {
    throw invalid('message cannot be encoded', err);
  }
}

const isId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

function isWireError(v: unknown): v is WireError {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return typeof e.code === 'string' && typeof e.message === 'string';
}

/** Checks the envelope's shape by hand: it is the hottest check there is, and tiny. */
function isEnvelope(v: unknown): v is Envelope {
  if (!Array.isArray(v)) return false;
  switch (v[0]) {
    case Kind.Hello:
      return v.length === 3 && typeof v[1] === 'string' && typeof v[2] === 'number';
    case Kind.Request:
      return v.length === 5 && isId(v[1]) && typeof v[2] === 'string' && typeof v[4] === 'number' && v[4] > 0;
    case Kind.Result:
      return v.length === 3 && isId(v[1]);
    case Kind.Error:
      return v.length === 3 && isId(v[1]) && isWireError(v[2]);
    case Kind.Event:
      return v.length === 3 && typeof v[1] === 'string';
    case Kind.Cancel:
      return v.length === 2 && isId(v[1]);
    default:
      return false;
  }
}

/** Decodes and shape-checks one header; throws INVALID_MESSAGE (the connection should close). */
export function decodeEnvelope(header: Uint8Array): Envelope {
  let value: unknown;
  try {
    value = packr.unpack(header);
  } catch (err) {
    throw invalid('undecodable message header', err);
  }
  if (!isEnvelope(value)) throw invalid('malformed message envelope');
  return value;
}

// ---------------------------------------------------------------------------------------------
// Stream framing: MAGIC u8 | headerLength u32 BE | payloadLength u32 BE | header | payload

/**
 * First byte of every frame. 0xC1 is the one byte msgpack never uses and is invalid in UTF-8, so
 * a stray `console.log` on a child's stdout is caught at its first byte, not as a huge length.
 */
const FRAME_MAGIC = 0xc1;
/** Bytes before the header: magic + two u32 lengths. */
export const FRAME_PREFIX_BYTES = 9;
/** Headers are control data; anything near this is a desynchronised stream, not a message. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;
/** Above the 16 MiB stdio line limit with room for a batch; larger means corruption. */
const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;

/** Writes the 9-byte prefix for a frame at `offset` of `target`. */
export function writeFramePrefix(target: Uint8Array, offset: number, headerBytes: number, payloadBytes: number): void {
  target[offset] = FRAME_MAGIC;
  writeU32(target, offset + 1, headerBytes);
  writeU32(target, offset + 5, payloadBytes);
}

/** Big-endian u32 by byte arithmetic rather than a DataView per frame: this runs for every PTY chunk. */
export function writeU32(target: Uint8Array, at: number, value: number): void {
  target[at] = value >>> 24;
  target[at + 1] = (value >>> 16) & 0xff;
  target[at + 2] = (value >>> 8) & 0xff;
  target[at + 3] = value & 0xff;
}

export const readU32 = (source: Uint8Array, at: number): number =>
  ((source[at]! << 24) | (source[at + 1]! << 16) | (source[at + 2]! << 8) | source[at + 3]!) >>> 0;

/** Below this, a frame split across reads is assembled in Node's Buffer pool (cheaper to allocate). */
const UNPOOLED_BODY_MIN_BYTES = 4 * 1024;
/**
 * A split frame up to this size gets its buffer when its prefix arrives. A bigger one keeps its
 * pieces until the last arrives and is copied once then: a prefix alone (a corrupt one, or a peer
 * that dies mid-frame) never costs the up-to-256 MiB it claims.
 */
const EAGER_BODY_MAX_BYTES = 1024 * 1024;

/** Big frames get an unpooled exact-sized buffer, so their payload owns it and may be moved on. */
function allocateBody(bytes: number): Uint8Array {
  return bytes >= UNPOOLED_BODY_MIN_BYTES ? Buffer.allocUnsafeSlow(bytes) : Buffer.allocUnsafe(bytes);
}

export type FrameListener = (header: Uint8Array, payload: Uint8Array | undefined) => void;

/**
 * Splits a byte stream into frames. A frame inside one chunk is handed out as views (no copy);
 * a frame split across chunks is assembled once into a buffer of its exact size, so a 64 MiB
 * frame arriving in 64 KiB reads costs one copy, not a quadratic series of concatenations.
 * `push` throws INVALID_MESSAGE on a bad prefix; the decoder is then dead (the caller closes).
 */
export class FrameDecoder {
  private readonly prefix = new Uint8Array(FRAME_PREFIX_BYTES);
  private prefixFilled = 0;
  private body: Uint8Array | undefined;
  /** Pieces of a frame above EAGER_BODY_MAX_BYTES, while `body` is not allocated yet. */
  private pieces: Uint8Array[] | undefined;
  private bodyLength = 0;
  private bodyFilled = 0;
  private headerBytes = 0;
  private failed = false;

  constructor(private readonly onFrame: FrameListener) {}

  push(chunk: Uint8Array): void {
    if (this.failed) return;
    let off = 0;
    while (off < chunk.length) {
      if (this.inBody()) {
        off = this.fillBody(chunk, off);
        continue;
      }
      if (this.prefixFilled === 0 && chunk.length - off >= FRAME_PREFIX_BYTES) {
        const [h, p] = this.readPrefix(chunk, off);
        const end = off + FRAME_PREFIX_BYTES + h + p;
        if (end <= chunk.length) {
          this.emit(chunk.subarray(off + FRAME_PREFIX_BYTES, end), h);
          off = end;
          continue;
        }
        this.startBody(h, p);
        off += FRAME_PREFIX_BYTES;
      } else {
        const n = Math.min(FRAME_PREFIX_BYTES - this.prefixFilled, chunk.length - off);
        this.prefix.set(chunk.subarray(off, off + n), this.prefixFilled);
        this.prefixFilled += n;
        off += n;
        if (this.prefixFilled < FRAME_PREFIX_BYTES) return;
        const [h, p] = this.readPrefix(this.prefix, 0);
        this.prefixFilled = 0;
        this.startBody(h, p);
      }
    }
  }

  private inBody(): boolean {
    return this.body !== undefined || this.pieces !== undefined;
  }

  private readPrefix(src: Uint8Array, off: number): [number, number] {
    if (src[off] !== FRAME_MAGIC) {
      const byte = src[off] ?? 0;
      const shown = byte >= 0x20 && byte < 0x7f ? ` ('${String.fromCharCode(byte)}')` : '';
      this.fail(`bad frame: expected magic 0xc1, got 0x${byte.toString(16).padStart(2, '0')}${shown}; did the peer write text to its channel stream?`);
    }
    const h = readU32(src, off + 1);
    const p = readU32(src, off + 5);
    if (h === 0 || h > MAX_HEADER_BYTES) this.fail(`bad frame: header length ${h} outside 1..${MAX_HEADER_BYTES}`);
    if (p > MAX_PAYLOAD_BYTES) this.fail(`bad frame: payload length ${p} above ${MAX_PAYLOAD_BYTES}`);
    return [h, p];
  }

  private startBody(h: number, p: number): void {
    this.headerBytes = h;
    this.bodyLength = h + p;
    this.bodyFilled = 0;
    if (this.bodyLength > EAGER_BODY_MAX_BYTES) this.pieces = [];
    else this.body = allocateBody(this.bodyLength);
  }

  private fillBody(chunk: Uint8Array, off: number): number {
    const n = Math.min(this.bodyLength - this.bodyFilled, chunk.length - off);
    const piece = chunk.subarray(off, off + n);
    // Pieces are views: a stream hands out a fresh Buffer per read, so holding them is safe.
    if (this.pieces !== undefined) this.pieces.push(piece);
    else this.body!.set(piece, this.bodyFilled);
    this.bodyFilled += n;
    if (this.bodyFilled === this.bodyLength) {
      let body = this.body;
      if (this.pieces !== undefined) {
        body = allocateBody(this.bodyLength);
        let at = 0;
        for (const p of this.pieces) {
          body.set(p, at);
          at += p.length;
        }
      }
      this.body = undefined;
      this.pieces = undefined;
      this.emit(body!, this.headerBytes);
    }
    return off + n;
  }

  private emit(body: Uint8Array, h: number): void {
    this.onFrame(body.subarray(0, h), body.length > h ? body.subarray(h) : undefined);
  }

  private fail(message: string): never {
    this.failed = true;
    throw invalid(message);
  }
}
