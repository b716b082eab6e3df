// A raw viewer's catch-up from the ring and the live output that arrives meanwhile: every byte is
// sent exactly once, in order, when live output straddles the end of what the ring read returned
// (stored [0,10), live [5,15)) and when a rejoin reads the ring in several CATCH_UP_READ_BYTES pieces.
// A stand-in socket and session service, so the interleaving is the same on every run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { SessionService } from '../../../supervisor/sessions/sessionService.js';
import { RawViewer, ViewerConstants } from '../../../supervisor/streaming/rawViewer.js';
import type { ViewerSocket } from '../../../supervisor/streaming/viewerSocket.js';

const READ = ViewerConstants.CATCH_UP_READ_BYTES;

/** Printable ASCII that differs from its neighbours and repeats only every 94 × 8 bytes: a byte sent twice, skipped or moved shows. */
function byteAt(i: number): number {
  return 0x21 + ((i + (i >> 3) * 11) % 94);
}

function bytes(from: number, to: number): Buffer {
  const b = Buffer.alloc(to - from);
  for (let i = from; i < to; i++) b[i - from] = byteAt(i);
  return b;
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
};

interface Read {
  at: number;
  limit: number | undefined;
  /** What the ring returned: [at, end) of total_written. */
  end: number;
  totalWritten: number;
}

/** One session as the viewer sees it: a ring that holds every byte written so far, and live output the test emits. */
class StandIn {
  /** Bytes written to the session so far: what a ring read returns up to. */
  written = 0;
  buffered = 0;
  readonly reads: Read[] = [];
  /** Runs after the ring was read and before the viewer gets the answer: live output "meanwhile". */
  duringRead: (read: Read, index: number) => void = () => {};
  private readonly frames: Array<{ type: string; data?: string }> = [];
  private readonly binaryOut: Buffer[] = [];
  private live: ((offset: number, bytes: Uint8Array) => void) | undefined;

  constructor(private readonly binary: boolean) {}

  readonly ws = {
    cork: (fn: () => void) => fn(),
    send: (data: string | Uint8Array, isBinary: boolean) => {
      if (isBinary)
        this.binaryOut.push(Buffer.from(data as Uint8Array)); // may be a view the viewer reuses
      else this.frames.push(JSON.parse(String(data)) as { type: string; data?: string });
      return 1;
    },
    getBufferedAmount: () => this.buffered,
  } as unknown as ViewerSocket;

  readonly sessions = {
    // Parser events are not what these tests are about.
    onParsed: () => ({ dispose: () => undefined }),
    onOutput: (_id: string, fn: (offset: number, bytes: Uint8Array) => void) => {
      this.live = fn;
      return { dispose: () => (this.live = undefined) };
    },
    readRaw: async (_ref: string, at: number | undefined, limit: number | undefined) => {
      // A loop that never moves on would read forever: fail it instead of hanging the suite.
      if (this.reads.length >= 50) throw new Error('more than 50 ring reads');
      const from = at ?? 0;
      const end = limit === undefined ? this.written : Math.min(this.written, from + limit);
      const read = { at: from, limit, end, totalWritten: this.written };
      this.reads.push(read);
      const answer = { start: from, total_written: this.written, bytes: bytes(from, end) };
      await new Promise((resolve) => setImmediate(resolve));
      this.duringRead(read, this.reads.length - 1);
      return answer;
    },
    resolve: () => undefined,
  } as unknown as SessionService;

  /** Output [from, to) reaches the viewer live (the session has written at least up to `to`). */
  emit(from: number, to: number): void {
    this.written = Math.max(this.written, to);
    this.live?.(from, bytes(from, to));
  }

  /** Output the session writes now, live, in pieces of `piece` bytes. */
  write(n: number, piece = 64 * 1024): void {
    const end = this.written + n;
    for (let at = this.written; at < end; at += piece) this.emit(at, Math.min(end, at + piece));
  }

  /** Everything the viewer sent as output, in order; no resync or error frame may be among it. */
  received(): Buffer {
    const other = this.frames.filter((f) => f.type !== 'output');
    assert.deepEqual(other, [], 'only output frames');
    return this.binary ? Buffer.concat(this.binaryOut) : Buffer.from(this.frames.map((f) => f.data ?? '').join(''), 'latin1');
  }
}

/** The viewer sent bytes [0, n) exactly once, in order. */
function assertExactlyOnce(got: Buffer, n: number): void {
  const want = bytes(0, n);
  if (got.equals(want)) return;
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  assert.fail(`sent ${got.length} bytes where [0, ${n}) each once was due: they differ from byte ${i} on`);
}

for (const binary of [true, false]) {
  describe(`raw viewer catch-up, ${binary ? 'binary' : 'JSON text'} frames`, () => {
    it('live output that straddles the end of the ring read is sent once: stored [0,10), live [5,15)', async () => {
      const s = new StandIn(binary);
      s.written = 10;
      // While the whole-ring read is in flight, [5,15) comes live: [5,8) all inside what the read
      // returned, [8,15) across its end.
      s.duringRead = () => {
        s.emit(5, 8);
        s.emit(8, 15);
      };
      const viewer = new RawViewer(s.ws, s.sessions, 's1', undefined, binary);
      try {
        await settle();
        assert.deepEqual(
          s.reads.map((r) => [r.at, r.limit, r.end]),
          [[0, undefined, 10]],
          'one read of the whole ring',
        );
        assertExactlyOnce(s.received(), 15);
        s.emit(15, 20); // and live from there on
        assertExactlyOnce(s.received(), 20);
      } finally {
        viewer.dispose();
      }
    });

    it('a rejoin reads the ring in several pieces and sends every byte once, live output straddling the last piece', async () => {
      const s = new StandIn(binary);
      s.written = 100;
      const viewer = new RawViewer(s.ws, s.sessions, 's1', undefined, binary);
      try {
        await settle();
        assertExactlyOnce(s.received(), 100);
        // The socket backs up: the next live batch goes out, then the viewer lags and drops live output.
        s.buffered = ViewerConstants.HIGH_WATER_BYTES + 1;
        s.emit(100, 110);
        s.write(2 * READ + 1000); // the ring has it; the viewer does not take it live
        assertExactlyOnce(s.received(), 110);

        // The rejoin reads READ bytes at a time. During each read the session writes on; during the
        // one that reaches the end, live output runs across the end of what it returned.
        const firstRejoinRead = s.reads.length;
        let straddled = -1;
        s.duringRead = (read) => {
          if (read.end < read.totalWritten) {
            s.write(300, 100); // lands after what this read returned: queued, read again later
            return;
          }
          straddled = read.end;
          s.emit(read.end - 30, read.end - 20); // wholly inside what the read returned
          s.emit(read.end - 20, read.end + 10); // across its end
        };
        s.buffered = 0;
        viewer.onDrain();
        await settle();
        s.duringRead = () => {};
        s.emit(straddled + 10, straddled + 25); // live again
        assertExactlyOnce(s.received(), straddled + 25);

        const rejoin = s.reads.slice(firstRejoinRead);
        assert.ok(rejoin.length >= 3, `the rejoin read the ring in several pieces: ${JSON.stringify(rejoin)}`);
        assert.equal(rejoin[0]!.at, 110, 'from the first byte the viewer had not sent');
        for (const [i, r] of rejoin.entries()) {
          assert.equal(r.limit, READ, `read ${i} asks for CATCH_UP_READ_BYTES`);
          if (i > 0) assert.equal(r.at, rejoin[i - 1]!.end, `read ${i} starts where read ${i - 1} ended`);
        }
        assert.equal(rejoin.at(-1)!.end, straddled, 'the last read reached the end of the ring');
      } finally {
        viewer.dispose();
      }
    });
  });
}
