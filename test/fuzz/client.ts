/**
 * A raw HTTP/1.1 client over a net socket (the unix socket or 127.0.0.1 only): it sends exactly the
 * bytes a case describes (odd methods, duplicate headers, broken framing) and reads whatever comes
 * back, telling an answer from a dropped connection, a hang and a truncated body. Also speaks just
 * enough WebSocket (RFC 6455 client frames, masked or not) and SSE to fuzz the stream routes.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';

export type Target = { socketPath: string } | { port: number };

export interface WsFrameSpec {
  fin?: boolean;
  rsv?: number;
  opcode: number;
  payload: Buffer;
  /** Default true (clients must mask). */
  masked?: boolean;
  /** Claim this payload length in the header instead of the real one. */
  claimLength?: number;
  /** Wait this long before sending the frame. */
  delayMs?: number;
}

export interface WsPlan {
  frames: WsFrameSpec[];
  /** How long to read after the last frame. */
  readMs: number;
  /** Send a close frame at the end (else just drop the connection). */
  closeAtEnd: boolean;
}

export interface WsOutcome {
  framesIn: number;
  bytesIn: number;
  /** The code of the server's close frame, if it sent one. */
  closeCode?: number;
  closeReason?: string;
  closedByServer: boolean;
}

export interface Answer {
  /** answer: a complete HTTP answer; dropped: closed before any answer; truncated: closed mid-answer; timeout; error: could not connect. */
  kind: 'answer' | 'dropped' | 'truncated' | 'timeout' | 'error';
  status: number;
  headers: Record<string, string>;
  /** Decoded (decompressed) body; for a stream, what was read before we hung up. */
  body: Buffer;
  /** Why a body could not be decoded, or the socket error. */
  note?: string;
  /** An SSE stream that opened (200 text/event-stream): body is what arrived in the read window. */
  stream?: boolean;
  ws?: WsOutcome;
  ms: number;
}

export interface SendOptions {
  timeoutMs: number;
  /** HEAD: the answer has no body whatever its headers say. */
  head: boolean;
  /** For 200 text/event-stream answers: read this long, then hang up. */
  sseReadMs?: number;
  ws?: WsPlan;
}

const CRLF2 = Buffer.from('\r\n\r\n');

function parseHead(text: string): { status: number; headers: Record<string, string> } | null {
  const lines = text.split('\r\n');
  const m = /^HTTP\/\d\.\d (\d{3})/.exec(lines[0] ?? '');
  if (!m) return null;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const k = line.slice(0, i).trim().toLowerCase();
    const v = line.slice(i + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  return { status: Number(m[1]), headers };
}

/** Parses a chunked body; null until the terminating chunk has arrived. */
function dechunk(buf: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', pos);
    if (eol < 0) return null;
    const size = parseInt(buf.subarray(pos, eol).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isFinite(size)) return Buffer.concat(parts); // malformed: take what we have
    const start = eol + 2;
    if (size === 0) return Buffer.concat(parts);
    if (buf.length < start + size + 2) return null;
    parts.push(buf.subarray(start, start + size));
    pos = start + size + 2;
  }
}

function decode(body: Buffer, encoding: string | undefined): { body: Buffer; note?: string } {
  if (!encoding || body.length === 0) return { body };
  try {
    if (encoding.includes('br')) return { body: brotliDecompressSync(body) };
    if (encoding.includes('gzip')) return { body: gunzipSync(body) };
    if (encoding.includes('deflate')) {
      try {
        return { body: inflateSync(body) };
      } catch {
        return { body: inflateRawSync(body) };
      }
    }
    return { body, note: `unknown content-encoding ${encoding}` };
  } catch (err) {
    return { body, note: `could not decode ${encoding}: ${(err as Error).message}` };
  }
}

export function encodeFrame(f: WsFrameSpec): Buffer {
  const masked = f.masked ?? true;
  const len = f.claimLength ?? f.payload.length;
  const b0 = (f.fin === false ? 0 : 0x80) | ((f.rsv ?? 0) << 4) | (f.opcode & 0x0f);
  let head: Buffer;
  if (len < 126) head = Buffer.from([b0, (masked ? 0x80 : 0) | len]);
  else if (len < 65536) {
    head = Buffer.alloc(4);
    head[0] = b0;
    head[1] = (masked ? 0x80 : 0) | 126;
    head.writeUInt16BE(len, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = b0;
    head[1] = (masked ? 0x80 : 0) | 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  if (!masked) return Buffer.concat([head, f.payload]);
  const key = randomBytes(4);
  const body = Buffer.from(f.payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= key[i & 3]!;
  return Buffer.concat([head, key, body]);
}

/** Reads server frames (unmasked) from a buffer: returns the count, and a close frame's code. */
function readFrames(buf: Buffer, out: WsOutcome): Buffer {
  let pos = 0;
  while (buf.length - pos >= 2) {
    const opcode = buf[pos]! & 0x0f;
    let len = buf[pos + 1]! & 0x7f;
    let at = pos + 2;
    if (len === 126) {
      if (buf.length - pos < 4) break;
      len = buf.readUInt16BE(pos + 2);
      at = pos + 4;
    } else if (len === 127) {
      if (buf.length - pos < 10) break;
      len = Number(buf.readBigUInt64BE(pos + 2));
      at = pos + 10;
    }
    if (buf[pos + 1]! & 0x80) at += 4; // a masked server frame is a protocol error, but skip the key
    if (buf.length < at + len) break;
    out.framesIn++;
    if (opcode === 0x8) {
      if (len >= 2) out.closeCode = buf.readUInt16BE(at);
      if (len > 2)
        out.closeReason = buf
          .subarray(at + 2, at + len)
          .toString('utf8')
          .slice(0, 200);
    }
    pos = at + len;
  }
  return buf.subarray(pos);
}

/**
 * Sends `request` (bytes, written in order; a chunk list lets a body follow its head in pieces)
 * and reads the answer. Never half-closes (uWS takes a half-close for a hang-up).
 */
export function send(target: Target, request: Buffer[], opts: SendOptions): Promise<Answer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const sock: Socket = 'socketPath' in target ? connect({ path: target.socketPath }) : connect({ host: '127.0.0.1', port: target.port });
    let buf: Buffer = Buffer.alloc(0);
    let head: { status: number; headers: Record<string, string> } | null = null;
    let bodyStart = 0;
    let settled = false;
    let connected = false;
    let sseTimer: NodeJS.Timeout | undefined;
    let wsDone: Promise<WsOutcome> | null = null;
    let writeError = '';

    const finish = (a: Omit<Answer, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (sseTimer) clearTimeout(sseTimer);
      sock.destroy();
      resolve({ ...a, ms: Date.now() - started });
    };
    const timer = setTimeout(() => {
      if (wsDone) return; // the WebSocket plan has its own clock
      if (head)
        finish({
          kind: 'timeout',
          status: head.status,
          headers: head.headers,
          body: buf.subarray(bodyStart),
          note: 'answer head arrived, body did not complete',
        });
      else finish({ kind: 'timeout', status: 0, headers: {}, body: Buffer.alloc(0) });
    }, opts.timeoutMs);

    const complete = (body: Buffer) => {
      const d = decode(body, head!.headers['content-encoding']);
      finish({ kind: 'answer', status: head!.status, headers: head!.headers, body: d.body, ...(d.note ? { note: d.note } : {}) });
    };

    const tryParse = () => {
      if (settled || wsDone) return;
      while (!head) {
        const end = buf.indexOf(CRLF2);
        if (end < 0) return;
        const parsed = parseHead(buf.subarray(0, end).toString('latin1'));
        if (!parsed) {
          finish({ kind: 'answer', status: 0, headers: {}, body: buf, note: 'not an HTTP answer' });
          return;
        }
        if (parsed.status >= 100 && parsed.status < 200 && parsed.status !== 101) {
          buf = buf.subarray(end + 4); // 100 Continue and friends: the real answer follows
          continue;
        }
        head = parsed;
        bodyStart = end + 4;
      }
      const h = head;
      if (h.status === 101 && opts.ws) {
        const leftover = buf.subarray(bodyStart);
        wsDone = runWs(sock, leftover, opts.ws);
        void wsDone.then((ws) => finish({ kind: 'answer', status: 101, headers: h.headers, body: Buffer.alloc(0), ws }));
        return;
      }
      if (opts.head || h.status === 204 || h.status === 304 || h.status === 101) return complete(Buffer.alloc(0));
      const rest = buf.subarray(bodyStart);
      if (h.status === 200 && (h.headers['content-type'] ?? '').includes('text/event-stream')) {
        if (!sseTimer)
          sseTimer = setTimeout(
            () => finish({ kind: 'answer', status: 200, headers: h.headers, body: buf.subarray(bodyStart), stream: true }),
            opts.sseReadMs ?? 150,
          );
        return;
      }
      if ((h.headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked')) {
        const body = dechunk(rest);
        if (body) complete(body);
        return;
      }
      const cl = h.headers['content-length'];
      if (cl !== undefined) {
        const n = Number(cl);
        if (rest.length >= n) complete(rest.subarray(0, n));
      }
      // No length: the body runs to the close.
    };

    sock.on('connect', () => {
      connected = true;
      for (const chunk of request) if (!sock.destroyed) sock.write(chunk);
    });
    sock.on('data', (d: Buffer) => {
      if (wsDone) return;
      buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
      tryParse();
    });
    sock.on('error', (err: NodeJS.ErrnoException) => {
      if (settled || wsDone) return;
      if (!connected) finish({ kind: 'error', status: 0, headers: {}, body: Buffer.alloc(0), note: `${err.code ?? ''} ${err.message}` });
      // EPIPE/ECONNRESET after connecting: the close handler reports what arrived.
      else writeError = err.code ?? err.message;
    });
    sock.on('close', () => {
      if (settled || wsDone) return;
      if (!head) {
        tryParse();
        if (settled) return;
        const why = buf.length > 0 ? 'closed after a partial answer head' : 'connection closed with no answer';
        return finish({
          kind: connected ? 'dropped' : 'error',
          status: 0,
          headers: {},
          body: buf,
          note: writeError ? `${why} (${writeError}: the server closed while the request was still being sent)` : why,
        });
      }
      const rest = buf.subarray(bodyStart);
      if (sseTimer) return finish({ kind: 'answer', status: head.status, headers: head.headers, body: rest, stream: true });
      const chunked = (head.headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked');
      const cl = head.headers['content-length'];
      if (chunked) {
        const body = dechunk(rest);
        if (body) return complete(body);
        return finish({ kind: 'truncated', status: head.status, headers: head.headers, body: rest, note: 'chunked body ended early' });
      }
      if (cl !== undefined && rest.length < Number(cl)) {
        return finish({ kind: 'truncated', status: head.status, headers: head.headers, body: rest, note: `content-length ${cl}, got ${rest.length}` });
      }
      complete(cl !== undefined ? rest.subarray(0, Number(cl)) : rest);
    });
  });
}

/** Runs a WebSocket plan on an upgraded socket. */
function runWs(sock: Socket, leftover: Buffer, plan: WsPlan): Promise<WsOutcome> {
  return new Promise((resolve) => {
    const out: WsOutcome = { framesIn: 0, bytesIn: 0, closedByServer: false };
    let pending: Buffer = Buffer.alloc(0);
    let done = false;
    const take = (d: Buffer) => {
      out.bytesIn += d.length;
      pending = readFrames(pending.length === 0 ? d : Buffer.concat([pending, d]), out);
    };
    if (leftover.length > 0) take(leftover);
    sock.removeAllListeners('data');
    sock.on('data', take);
    sock.on('error', () => undefined);
    const end = () => {
      if (done) return;
      done = true;
      resolve(out);
    };
    sock.on('close', () => {
      out.closedByServer = out.closedByServer || !done;
      end();
    });
    void (async () => {
      for (const f of plan.frames) {
        if (done || sock.destroyed) break;
        if (f.delayMs) await new Promise((r) => setTimeout(r, f.delayMs));
        if (sock.destroyed) break;
        sock.write(encodeFrame(f));
      }
      await new Promise((r) => setTimeout(r, plan.readMs));
      if (!sock.destroyed && plan.closeAtEnd) {
        sock.write(encodeFrame({ opcode: 0x8, payload: Buffer.from([0x03, 0xe8]) }));
        await new Promise((r) => setTimeout(r, 50));
      }
      end();
    })();
  });
}
