/** Byte exactness through the pty host: UTF-8 split across reads, a 1 MB burst, the exit tail, the ring, pause/resume. */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { PtyConstants } from '../../../shared/protocol/pty.js';
import { type PtyHostHandle, sleep, startPtyHost, waitFor } from './ptyHostHarness.js';

const RING = PtyConstants.OUTPUT_RING_BYTES;
/** A batch is at most the batch limit plus the one read that crossed it. */
const MAX_EVENT_BYTES = 2 * PtyConstants.CATCH_UP_CHUNK_BYTES;

/** What the PTY makes of `bytes` written by a child: the line discipline's ONLCR turns \n into \r\n. */
function throughPty(bytes: Buffer): Buffer {
  return Buffer.from(bytes.toString('latin1').replaceAll('\n', '\r\n'), 'latin1');
}

/** Base64 text of `n` random bytes, wrapped at 76 columns like base64(1). */
function base64Text(n: number): Buffer {
  const b64 = randomBytes(n).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 76) lines.push(b64.slice(i, i + 76));
  return Buffer.from(`${lines.join('\n')}\n`);
}

describe('pty host: bytes arrive exactly', () => {
  let host: PtyHostHandle;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-pty-bytes-'));
    host = await startPtyHost();
  });
  after(async () => {
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('UTF-8 3- and 4-byte characters split across many reads arrive intact', async () => {
    const unit = '€😀é漢'; // 3 + 4 + 2 + 3 bytes: reads of 4095 bytes cut through them
    const count = 20_000;
    const { id } = await host.spawnSession({ args: ['-c', `i=0; while [ $i -lt ${count} ]; do printf '${unit}'; i=$((i+1)); done`] });
    const exit = await host.waitForExit(id, 30_000);
    const r = host.record(id);
    const expected = Buffer.from(unit.repeat(count));
    assert.equal(exit.exit_code, 0);
    assert.equal(r.contiguousLength(), expected.length);
    assert.ok(r.bytes.equals(expected), 'bytes differ');
    assert.equal(r.text, unit.repeat(count));
    assert.ok(r.chunks.length > 1, 'expected the output to span several data events');
  });

  test('a 1 MB burst arrives byte-exact through data events with contiguous offsets', async () => {
    const file = join(dir, 'burst.txt');
    const content = base64Text(768 * 1024); // ~1 MiB of text
    writeFileSync(file, content);
    const { id } = await host.spawnSession({ args: ['-c', `cat '${file}'`] });
    const exit = await host.waitForExit(id, 30_000);
    const r = host.record(id);
    const expected = throughPty(content);
    assert.ok(expected.length >= 1_000_000);
    assert.equal(r.contiguousLength(), expected.length);
    assert.equal(exit.total_written, expected.length);
    assert.ok(r.bytes.equals(expected), 'bytes differ');
    assert.equal(r.lateData, 0);
    for (const chunk of r.chunks) assert.ok(chunk.length <= MAX_EVENT_BYTES, `a data event of ${chunk.length} bytes`);
    // Coalescing: fewer events than the PTY's reads (at most 4095 bytes each, so at least 1 per 4 KiB).
    // Not a tighter bound: on a loaded machine a 4 ms window can hold only a read or two (144 events
    // were seen once under a parallel test run).
    assert.ok(r.chunks.length < expected.length / 4096, `${r.chunks.length} data events for ${expected.length} bytes`);
  });

  test('input keeps its order when a paste fills the PTY input buffer and keystrokes follow at once', async () => {
    // The paste overflows the kernel's input buffer, so part of it waits in node-pty's write queue;
    // the keystrokes sent right behind it must queue after it, not jump ahead with a direct write.
    const file = join(dir, 'typed.txt');
    const paste = Buffer.from(randomBytes(192 * 1024).toString('base64'));
    const keys = Array.from({ length: 50 }, (_, i) => Buffer.from(`<${i}>`));
    const expected = Buffer.concat([paste, ...keys]);
    const { id } = await host.spawnSession({ args: ['-c', `stty raw -echo; printf R; head -c ${expected.length} > '${file}'`] });
    await host.waitForText(id, 'R');
    const writes = [paste, ...keys].map((payload) => host.client.request('write', { session_id: id }, { payload }));
    await Promise.all(writes);
    const exit = await host.waitForExit(id, 30_000);
    assert.equal(exit.exit_code, 0);
    const typed = readFileSync(file);
    assert.equal(typed.length, expected.length);
    assert.ok(typed.equals(expected), 'the PTY received the input out of order');
  });

  test('the tail before exit is never lost: `head -c 300000 /dev/urandom | base64; exit 3`, 3 sessions at once', async () => {
    const runs = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const file = join(dir, `tail-${i}.bin`);
        const { id } = await host.spawnSession({ args: ['-c', `head -c 300000 /dev/urandom | tee '${file}' | base64; exit 3`] });
        return { id, file, exit: await host.waitForExit(id, 30_000) };
      }),
    );
    for (const { id, file, exit } of runs) {
      const expected = throughPty(execFileSync('base64', [file]));
      const r = host.record(id);
      assert.equal(readFileSync(file).length, 300_000);
      assert.equal(exit.exit_code, 3);
      assert.equal(exit.total_written, expected.length);
      assert.equal(r.contiguousLength(), expected.length);
      assert.ok(r.bytes.subarray(-4096).equals(expected.subarray(-4096)), 'the last 4 KB differ');
      assert.ok(r.bytes.equals(expected), 'bytes differ');
    }
  });

  test('the ring keeps the last 2 MiB: readRaw from 0 starts at the oldest byte kept', async () => {
    const file = join(dir, 'big.txt');
    const content = base64Text(2 * 1024 * 1024); // ~2.7 MiB of text
    writeFileSync(file, content);
    // The session stays alive: an exited one keeps only its tombstone's tail (ptyHost.tombstone.test.ts).
    const { id } = await host.spawnSession({ args: ['-c', `cat '${file}'; exec sleep 60`] });
    const expected = throughPty(content);
    const record = host.record(id);
    await waitFor(
      () => record.chunks.reduce((n, c) => n + c.length, 0) >= expected.length,
      30_000,
      () => 'the output never arrived whole',
    );
    assert.equal(record.contiguousLength(), expected.length);
    assert.ok(expected.length > RING + 100_000);
    const oldest = expected.length - RING;

    const fromZero = await host.client.requestWithPayload('readRaw', { session_id: id, offset: 0 });
    assert.deepEqual(fromZero.result, { start: oldest, total_written: expected.length });
    assert.ok(Buffer.from(fromZero.payload!).equals(expected.subarray(oldest)), 'ring content differs');

    const whole = await host.client.requestWithPayload('readRaw', { session_id: id });
    assert.equal(whole.result.start, oldest);
    assert.equal(whole.payload?.length, RING);

    const slice = await host.client.requestWithPayload('readRaw', { session_id: id, offset: oldest + 1000, limit: 70_000 });
    assert.equal(slice.result.start, oldest + 1000);
    assert.ok(Buffer.from(slice.payload!).equals(expected.subarray(oldest + 1000, oldest + 71_000)));

    const last = await host.client.requestWithPayload('readRaw', { session_id: id, limit: RING * 2 });
    assert.equal(last.result.start, oldest, 'a limit beyond the ring is clamped to the oldest byte');
    await host.client.request('forget', { session_id: id });
  });

  test('pause stops output (the child blocks), resume continues with nothing lost', async () => {
    // The child prints until told to stop (a file appears), so it cannot finish before the pause
    // lands however late that is on a loaded machine; only a blocked write can hold it.
    const dir = mkdtempSync(join(tmpdir(), 'tuicd-pause-'));
    const stop = join(dir, 'stop');
    try {
      const { id } = await host.spawnSession({ args: ['-c', `i=0; while [ ! -e '${stop}' ]; do echo line$i; i=$((i+1)); done`] });
      const r = host.record(id);
      await host.waitForText(id, 'line500\r\n');
      await host.client.request('pause', { session_id: id });
      await sleep(150); // a batch already read may still be on its way
      const seen = r.bytes.length;
      const ring = (await host.client.requestWithPayload('readRaw', { session_id: id, limit: 0 })).result.total_written;
      await sleep(500);
      assert.equal(r.bytes.length, seen, 'data arrived while paused');
      assert.equal((await host.client.requestWithPayload('readRaw', { session_id: id, limit: 0 })).result.total_written, ring, 'the host read while paused');
      assert.equal(r.exit, undefined, 'the child is blocked, not gone');

      await host.client.request('resume', { session_id: id });
      await waitFor(
        () => r.bytes.length > seen,
        10_000,
        () => 'no output after resume',
      );
      writeFileSync(stop, '');
      const exit = await host.waitForExit(id, 30_000);
      assert.equal(exit.exit_code, 0);
      assert.equal(r.contiguousLength(), r.bytes.length);
      assert.equal(exit.total_written, r.bytes.length, 'every byte written reached the client');
      // Every line from 0 to the last, once each and in order: nothing lost or doubled across the pause.
      const lines = r.text.split('\r\n');
      assert.equal(lines.pop(), '', 'output ends with a whole line');
      assert.ok(Buffer.byteLength(r.text) > seen, 'the child went on after the resume');
      lines.forEach((line, i) => {
        if (line !== `line${i}`) assert.fail(`line ${i} is ${JSON.stringify(line)}`);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a paused session that is killed still delivers what it had written', async () => {
    const { id } = await host.spawnSession({ args: ['-c', 'echo before; sleep 30'] });
    await host.waitForText(id, 'before\r\n');
    await host.client.request('pause', { session_id: id });
    await host.client.request('kill', { session_id: id });
    const exit = await host.waitForExit(id);
    assert.equal(exit.signal, 1);
    await waitFor(
      () => host.record(id).text === 'before\r\n',
      1_000,
      () => host.record(id).text,
    );
  });
});
