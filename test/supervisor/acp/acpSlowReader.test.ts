/**
 * ACP stream frames past 16 KiB reach a slow reader intact. A raw client on the unix socket stops
 * reading while the agent streams 20 KB chunks, so the server's socket buffers fill and its sends
 * land in backpressure, then reads a little at a time: every message parses, seqs have no holes,
 * and each chunk's text is what the agent said. (uWS 20.30 lost such a frame's payload when its
 * header landed in backpressure; the engine sends it as fragments.)
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { AcpHarness, type Frame, turnEnded } from './acpHarness.js';

const CHUNKS = 200;
const CHUNK_CHARS = 20_000;

/** A WebSocket client written byte for byte: it reads only when told, and reassembles fragments. */
class RawStreamReader {
  readonly messages: Frame[] = [];
  private buf = Buffer.alloc(0);
  private upgraded = false;
  private parts: Buffer[] = [];
  private failure: Error | undefined;
  private waiters: Array<() => void> = [];

  private constructor(private readonly sock: Socket) {
    sock.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      try {
        this.parse();
      } catch (err) {
        this.failure = err as Error;
        sock.destroy();
      }
      this.wake();
    });
    sock.on('close', () => {
      this.failure ??= new Error('the server closed the stream');
      this.wake();
    });
  }

  static open(socketPath: string, path: string): RawStreamReader {
    const sock = connect({ path: socketPath });
    const key = randomBytes(16).toString('base64');
    sock.write(
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    return new RawStreamReader(sock);
  }

  pause(): void {
    this.sock.pause();
  }

  /** Reads again, one small pause after every read: the server sees a slow link. */
  readSlowly(): void {
    this.sock.on('data', () => {
      this.sock.pause();
      setTimeout(() => this.sock.resume(), 1);
    });
    this.sock.resume();
  }

  close(): void {
    this.sock.destroy();
  }

  async waitFor(pred: (f: Frame) => boolean, what: string): Promise<Frame> {
    for (;;) {
      const found = this.messages.find(pred);
      if (found) return found;
      if (this.failure) throw new Error(`${what}: ${this.failure.message} (after ${this.messages.length} messages)`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private parse(): void {
    if (!this.upgraded) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buf.subarray(0, end).toString('latin1');
      if (!head.startsWith('HTTP/1.1 101')) throw new Error(`upgrade refused: ${head.split('\r\n')[0]}`);
      this.buf = this.buf.subarray(end + 4);
      this.upgraded = true;
    }
    for (;;) {
      if (this.buf.length < 2) return;
      const b0 = this.buf[0]!;
      const b1 = this.buf[1]!;
      if (b1 & 0x80) throw new Error('a server frame is masked');
      let len = b1 & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      if (this.buf.length < off + len) return;
      const payload = this.buf.subarray(off, off + len);
      this.buf = this.buf.subarray(off + len);
      const opcode = b0 & 0x0f;
      if (opcode === 0x9 || opcode === 0xa) continue; // ping, pong
      if (opcode === 0x8) throw new Error(`closed by the server (${payload.length >= 2 ? payload.readUInt16BE(0) : 'no code'})`);
      if (opcode !== 0x1 && opcode !== 0x0) throw new Error(`unexpected opcode ${opcode}`);
      if ((opcode === 0x0) !== this.parts.length > 0) throw new Error(`opcode ${opcode} out of place (${this.parts.length} fragments pending)`);
      this.parts.push(payload);
      if ((b0 & 0x80) === 0) continue;
      const text = Buffer.concat(this.parts).toString('utf8');
      this.parts = [];
      try {
        this.messages.push(JSON.parse(text) as Frame);
      } catch {
        throw new Error(`message ${this.messages.length + 1} is not JSON: ${JSON.stringify(text.slice(0, 60))}…`);
      }
    }
  }
}

describe('ACP stream: frames past 16 KiB to a slow reader', () => {
  let h: AcpHarness;
  before(async () => {
    h = await AcpHarness.start();
  });
  after(async () => {
    await h.stop();
  });

  it('arrive whole and in order while the socket is in backpressure', async () => {
    const id = (await h.connect()).id;
    const sid = await h.newSession(id);
    const { lastSeq } = await h.ok<{ lastSeq: number }>('GET', `/acp/connections/${id}`);
    const raw = RawStreamReader.open(h.tuicd.socketPath, `/acp/connections/${id}/stream?after=${lastSeq}`);
    // Stalled from the start: the turn's frames fill the socket, then it reads slowly.
    raw.pause();
    const fast = await h.stream(id, lastSeq);
    const turn = await h.prompt(id, sid, `big ${CHUNKS} ${CHUNK_CHARS}`);
    await fast.waitFor(turnEnded(turn.turnId), 'the turn end on a fast reader');
    fast.close();
    raw.readSlowly();
    try {
      const ended = await raw.waitFor(turnEnded(turn.turnId), 'the turn end on the slow reader');
      const frames = raw.messages.filter((f) => f.seq <= ended.seq);
      for (const [i, f] of frames.entries()) assert.equal(f.seq, lastSeq + 1 + i, `message ${i + 1}`);
      const said = frames
        .filter((f) => f.event?.type === 'session_update' && f.event['notification'].update.sessionUpdate === 'agent_message_chunk')
        .map((f) => f.event['notification'].update.content.text as string);
      assert.equal(said.length, CHUNKS);
      for (const [i, text] of said.entries()) assert.ok(text === `${i + 1}:${'y'.repeat(CHUNK_CHARS)}`, `chunk ${i + 1} differs (${text.length} chars)`);
    } finally {
      raw.close();
    }
  });
});
