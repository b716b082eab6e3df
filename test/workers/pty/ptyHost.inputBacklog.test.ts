/**
 * Input the program does not read (PtyConstants.INPUT_BACKLOG_BYTES): a client typing into a program
 * that never reads its terminal cannot grow the pty host. Past the limit a `write` is refused with
 * INPUT_BACKLOG_FULL and an `input` event is reported back with its `from` tag; once the program
 * reads again, writes are taken again.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { PtyConstants } from '../../../shared/protocol/pty.js';
import { type PtyHostHandle, startPtyHost, waitFor } from './ptyHostHarness.js';

const LIMIT = PtyConstants.INPUT_BACKLOG_BYTES;
const CHUNK = 1024 * 1024;
/** What the kernel takes before the host has to queue: the PTY's input buffers (tens of KiB). */
const KERNEL_SLACK = 256 * 1024;

/** A program that reads nothing until `flag` exists, then reads everything. */
const readsAfter = (flag: string) => `stty raw -echo; while [ ! -e '${flag}' ]; do sleep 0.05; done; exec cat > /dev/null`;

async function writeUntilRefused(host: PtyHostHandle, id: string): Promise<{ accepted: number; refusal: SupervisorError }> {
  let accepted = 0;
  for (let i = 0; i < 64; i++) {
    try {
      await host.client.request('write', { session_id: id }, { payload: Buffer.alloc(CHUNK, 0x61) });
      accepted += CHUNK;
    } catch (err) {
      return { accepted, refusal: err as SupervisorError };
    }
  }
  throw new Error(`64 MiB written and none refused`);
}

describe('pty host: input the program has not read is bounded', () => {
  let host: PtyHostHandle;
  let dir: string;
  before(async () => {
    host = await startPtyHost();
    dir = mkdtempSync(join(tmpdir(), 'tuicd-backlog-'));
  });
  after(async () => {
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('writes past the limit are refused with INPUT_BACKLOG_FULL; once the program reads, they are taken again', async () => {
    const flag = join(dir, 'read-now');
    const { id } = await host.spawnSession({ args: ['-c', readsAfter(flag)] });
    await new Promise((r) => setTimeout(r, 300)); // stty ran: the terminal is raw and silent
    const { accepted, refusal } = await writeUntilRefused(host, id);
    assert.ok(refusal instanceof SupervisorError, String(refusal));
    assert.equal(refusal.code, ErrorCode.INPUT_BACKLOG_FULL);
    assert.match(refusal.message, new RegExp(`has \\d+ bytes of input its program has not read yet \\(limit ${LIMIT}\\)`));
    assert.ok(accepted >= LIMIT, `refused after only ${accepted} bytes`);
    assert.ok(accepted <= LIMIT + CHUNK + KERNEL_SLACK, `${accepted} bytes taken with a limit of ${LIMIT}`);
    // The unread input stalls nothing else (libuv's blocking tty write froze the whole host here).
    const other = await host.spawnSession({ args: ['-c', 'echo still-streaming'] });
    await host.waitForText(other.id, 'still-streaming', 5000);

    writeFileSync(flag, '');
    // cat drains the backlog; a write is then accepted.
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await host.client.request('write', { session_id: id }, { payload: Buffer.from('more') });
        break;
      } catch (err) {
        assert.equal((err as SupervisorError).code, ErrorCode.INPUT_BACKLOG_FULL);
        if (Date.now() > deadline) throw new Error('the backlog never drained');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await host.client.request('kill', { session_id: id, signal: 'SIGKILL' });
    await host.waitForExit(id);
  });

  test('a refused `input` event is reported with its `from` tag and the backlog size', async () => {
    const refused: { session_id: string; from?: number; backlog_bytes: number }[] = [];
    host.client.on('inputRefused', (e) => refused.push(e));
    const { id } = await host.spawnSession({ args: ['-c', readsAfter(join(dir, 'never'))] });
    await new Promise((r) => setTimeout(r, 300));
    const chunks = Math.ceil(LIMIT / CHUNK) + 3;
    for (let i = 0; i < chunks; i++) host.client.emit('input', { session_id: id, from: 7 }, { payload: Buffer.alloc(CHUNK, 0x62), flush: true });
    await waitFor(
      () => refused.length > 0,
      10_000,
      () => `no inputRefused after ${chunks} MiB`,
    );
    assert.equal(refused[0]!.session_id, id);
    assert.equal(refused[0]!.from, 7);
    assert.ok(refused[0]!.backlog_bytes >= LIMIT - KERNEL_SLACK, `backlog ${refused[0]!.backlog_bytes}`);
    await host.client.request('kill', { session_id: id, signal: 'SIGKILL' });
    await host.waitForExit(id);
  });
});
