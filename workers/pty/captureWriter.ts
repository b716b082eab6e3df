/**
 * Raw PTY capture (POST /diagnostics/capture): one append-only `.tcap` file per session, keeping
 * the direction, the original read/write boundaries and a monotonic timestamp of every chunk.
 *
 * Format (all integers big-endian):
 *   header: "TCAP" | u8 version | u64 capture start (epoch ms) | u16 id length | id (UTF-8)
 *   record: u8 direction (0 = in, written to the PTY; 1 = out, read from it)
 *           | u64 ns since capture start (process.hrtime.bigint) | u32 length | bytes
 * A file never passes CAPTURE_MAX_BYTES: the first record that would not fit ends the capture.
 */

import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const CaptureConstants = {
  MAGIC: 'TCAP',
  VERSION: 1,
  /** Per-file cap (512 KiB), header included. */
  MAX_BYTES: 512 * 1024,
  RECORD_HEADER_BYTES: 13,
  FILE_EXTENSION: '.tcap',
} as const;

export type CaptureDirection = 'in' | 'out';

export interface CaptureRecord {
  direction: CaptureDirection;
  /** Nanoseconds since the capture started. */
  ns: bigint;
  bytes: Buffer;
}

export interface CaptureFileStatus {
  session_id: string;
  path: string;
  /** Bytes in the file, header included. */
  bytes: number;
  /** The cap was reached: later chunks were not recorded. */
  full: boolean;
  /** Set when the file could not be opened or written; the session runs on regardless. */
  error?: string;
}

/**
 * Session ids may be caller-chosen: each becomes one harmless file name, and distinct ids stay distinct
 * (`a/b` and `a_b` must not share a file). Bytes outside [A-Za-z0-9._-], `%` included, and a leading
 * dot are written `%XX`, so the mapping is one-to-one and no name is hidden, `.` or `..`.
 */
export function captureFileName(sessionId: string): string {
  let name = '';
  for (const byte of Buffer.from(sessionId, 'utf8')) {
    const safe =
      (byte >= 0x30 && byte <= 0x39) ||
      (byte >= 0x41 && byte <= 0x5a) ||
      (byte >= 0x61 && byte <= 0x7a) ||
      byte === 0x5f ||
      byte === 0x2d ||
      (byte === 0x2e && name !== '');
    name += safe ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return name + CaptureConstants.FILE_EXTENSION;
}

export class CaptureWriter {
  readonly path: string;
  private fd: number | undefined;
  private written = 0;
  private full = false;
  private error: string | undefined;
  private readonly startNs = process.hrtime.bigint();

  /** Opens (truncating: every enable starts a fresh file) `<dir>/<id>.tcap`; a failure is kept as status, never thrown. */
  constructor(
    dir: string,
    readonly sessionId: string,
  ) {
    this.path = join(dir, captureFileName(sessionId));
    try {
      this.fd = openSync(this.path, 'w', 0o600);
      const id = Buffer.from(sessionId, 'utf8');
      const header = Buffer.alloc(4 + 1 + 8 + 2 + id.length);
      header.write(CaptureConstants.MAGIC, 0, 'latin1');
      header.writeUInt8(CaptureConstants.VERSION, 4);
      header.writeBigUInt64BE(BigInt(Date.now()), 5);
      header.writeUInt16BE(id.length, 13);
      id.copy(header, 15);
      this.append(header);
    } catch (err) {
      this.fail(err);
    }
  }

  /** One read or write, as it happened. Synchronous but bounded: the whole file never passes MAX_BYTES. */
  record(direction: CaptureDirection, bytes: Uint8Array): void {
    if (this.fd === undefined || this.full) return;
    const size = CaptureConstants.RECORD_HEADER_BYTES + bytes.length;
    if (this.written + size > CaptureConstants.MAX_BYTES) {
      this.full = true;
      this.close();
      return;
    }
    const head = Buffer.alloc(CaptureConstants.RECORD_HEADER_BYTES);
    head.writeUInt8(direction === 'in' ? 0 : 1, 0);
    head.writeBigUInt64BE(process.hrtime.bigint() - this.startNs, 1);
    head.writeUInt32BE(bytes.length, 9);
    try {
      this.append(head);
      this.append(bytes);
    } catch (err) {
      this.fail(err);
    }
  }

  status(): CaptureFileStatus {
    return { session_id: this.sessionId, path: this.path, bytes: this.written, full: this.full, ...(this.error !== undefined ? { error: this.error } : {}) };
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Nothing left to do with a capture file that will not close.
    }
  }

  private append(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) done += writeSync(this.fd!, bytes, done, bytes.length - done);
    this.written += bytes.length;
  }

  private fail(err: unknown): void {
    this.error = (err as Error).message;
    this.close();
  }
}

/**
 * Reads a capture back. A buffer without the TCAP magic is a legacy `.raw` fixture: one output
 * record holding all of it. A record cut short at the end (a crash mid-write) is dropped.
 */
export function parseCapture(buf: Buffer): { version: number; session_id: string | null; started_ms: number | null; records: CaptureRecord[] } {
  if (buf.length < 15 || buf.toString('latin1', 0, 4) !== CaptureConstants.MAGIC) {
    return { version: 0, session_id: null, started_ms: null, records: buf.length > 0 ? [{ direction: 'out', ns: 0n, bytes: buf }] : [] };
  }
  const version = buf.readUInt8(4);
  const started_ms = Number(buf.readBigUInt64BE(5));
  const idLength = buf.readUInt16BE(13);
  const session_id = buf.toString('utf8', 15, 15 + idLength);
  const records: CaptureRecord[] = [];
  let at = 15 + idLength;
  while (at + CaptureConstants.RECORD_HEADER_BYTES <= buf.length) {
    const direction: CaptureDirection = buf.readUInt8(at) === 0 ? 'in' : 'out';
    const ns = buf.readBigUInt64BE(at + 1);
    const length = buf.readUInt32BE(at + 9);
    const start = at + CaptureConstants.RECORD_HEADER_BYTES;
    if (start + length > buf.length) break;
    records.push({ direction, ns, bytes: buf.subarray(start, start + length) });
    at = start + length;
  }
  return { version, session_id, started_ms, records };
}
