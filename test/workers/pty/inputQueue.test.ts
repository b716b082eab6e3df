/**
 * workers/pty/inputQueue.ts on a real PTY: input the program is not reading yet waits in the queue
 * without blocking the loop (libuv's own tty write would spin until the program reads), arrives
 * byte-exact and in order once it reads, and is dropped after close.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { InputQueue } from '../../../workers/pty/inputQueue.js';
import { spawn, type IPty } from '../../../workers/pty/nodePty.js';
import { baseEnv, waitFor } from './ptyHostHarness.js';

const fdOf = (pty: IPty): number => (pty as unknown as { fd: number }).fd;

describe('InputQueue', () => {
  let dir: string;
  const ptys: IPty[] = [];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-inputq-'));
  });
  after(() => {
    for (const p of ptys) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** A raw, silent terminal whose program reads nothing for `delayS`, then copies its input to `out`. */
  function program(out: string, delayS: number, bytes: number): IPty {
    const pty = spawn('/bin/sh', ['-c', `stty raw -echo; sleep ${delayS}; exec head -c ${bytes} > '${out}'`], {
      cols: 80,
      rows: 24,
      cwd: dir,
      env: baseEnv(),
      encoding: null,
    });
    ptys.push(pty);
    return pty;
  }

  test('3 MB written before the program reads: the loop keeps turning, then every byte arrives in order', async () => {
    const out = join(dir, 'copy');
    const size = 3 * 1024 * 1024;
    const pty = program(out, 1, size);
    await new Promise((r) => setTimeout(r, 300)); // stty ran
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4) data.writeUInt32LE(i, i);
    const queue = new InputQueue(fdOf(pty));
    // In pieces, as frames arrive: the order across writes matters as much as within one.
    for (let at = 0; at < size; at += 100_000) queue.write(data.subarray(at, Math.min(at + 100_000, size)));
    // A timer fires while most of it still waits: the writes returned without waiting for the program.
    const backlogWhileAsleep = await new Promise<number>((r) => setTimeout(() => r(queue.backlogBytes), 20));
    assert.ok(backlogWhileAsleep > size - 64 * 1024, `only ${backlogWhileAsleep} bytes queued: the kernel cannot have taken the rest`);
    await waitFor(
      () => queue.backlogBytes === 0,
      20_000,
      () => `${queue.backlogBytes} bytes still queued`,
    );
    await waitFor(
      () => {
        try {
          return readFileSync(out).length === size;
        } catch {
          return false;
        }
      },
      20_000,
      () => 'the copy to be complete',
    );
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    assert.equal(digest(readFileSync(out)), digest(data));
  });

  test('close() drops what waits and never touches the fd again', async () => {
    const pty = program(join(dir, 'never'), 30, 1);
    await new Promise((r) => setTimeout(r, 300));
    const queue = new InputQueue(fdOf(pty));
    queue.write(Buffer.alloc(1024 * 1024, 0x61));
    assert.ok(queue.backlogBytes > 0);
    queue.close();
    assert.equal(queue.backlogBytes, 0);
    queue.write(Buffer.from('after close'));
    assert.equal(queue.backlogBytes, 0, 'writes after close are dropped');
  });
});
