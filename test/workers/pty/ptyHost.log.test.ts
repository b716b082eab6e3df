/** readLog through the pty host: stripped, redacted lines with a monotonic cursor, readable after exit until forget. */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ErrorCode } from '../../../shared/errors.js';
import { type PtyHostHandle, startPtyHost } from './ptyHostHarness.js';

/** Built at run time so the source holds no token-shaped literal. */
const FAKE_ANTHROPIC_KEY = ['sk', 'ant', 'api03', 'abcdefghijklmnopqrstuvwxyz0123456789ABCD'].join('-');

describe('pty host: readLog', () => {
  let host: PtyHostHandle;
  before(async () => {
    host = await startPtyHost();
  });
  after(() => host.stop());

  test('after exit: escapes stripped, UTF-8 intact, secrets redacted, the last unfinished line completed', async () => {
    const script = `printf 'alpha\\n\\033[1;32mgreen\\033[0m\\n€😀é漢\\nkey ${FAKE_ANTHROPIC_KEY}\\nno newline'; exit 4`;
    const { id } = await host.spawnSession({ args: ['-c', script] });
    assert.equal((await host.waitForExit(id)).exit_code, 4);
    const log = await host.client.request('readLog', { session_id: id, offset: 0 });
    assert.deepEqual(log, {
      lines: ['alpha', 'green', '€😀é漢', 'key [REDACTED:anthropic]', 'no newline'],
      offset: 0,
      total_lines: 5,
      oldest_offset: 0,
      partial: '',
    });
    // The raw ring still has the bytes as printed (the raw path is not redacted: it is the terminal itself).
    const raw = await host.client.requestWithPayload('readRaw', { session_id: id });
    assert.ok(Buffer.from(raw.payload!).toString().includes('\x1b[1;32mgreen'));

    const cursor = await host.client.request('readLog', { session_id: id, offset: 3 });
    assert.deepEqual([cursor.offset, cursor.lines], [3, ['key [REDACTED:anthropic]', 'no newline']]);
    const last = await host.client.request('readLog', { session_id: id, limit: 1 });
    assert.deepEqual([last.offset, last.lines], [4, ['no newline']]);

    await host.client.request('forget', { session_id: id });
    await assert.rejects(host.client.request('readLog', { session_id: id }), { code: ErrorCode.PTY_NOT_FOUND });
  });

  test('while running: completed lines follow the data events, the prompt is the partial line', async () => {
    const { id } = await host.spawnSession();
    await host.waitForText(id, '$ ');
    await host.client.request('write', { session_id: id }, { payload: Buffer.from('for i in 1 2 3; do echo row$i; done\r') });
    await host.waitForText(id, 'row3\r\n$ ');
    // Everything a data event carried is already in the log: no wait needed beyond the data itself.
    const log = await host.client.request('readLog', { session_id: id, offset: 0 });
    assert.deepEqual(log.lines.slice(-3), ['row1', 'row2', 'row3']);
    assert.equal(log.partial.trimEnd(), '$');
    assert.equal(log.total_lines, log.offset + log.lines.length);
    await host.client.request('kill', { session_id: id });
    await host.waitForExit(id);
  });

  test('a long flood keeps the cursor monotonic and the log bounded', async () => {
    const { id } = await host.spawnSession({ args: ['-c', 'seq 1 12000'] });
    await host.waitForExit(id, 30_000);
    const log = await host.client.request('readLog', { session_id: id, offset: 0, limit: 5 });
    assert.equal(log.total_lines, 12_000);
    assert.ok(log.oldest_offset > 0, 'older lines were dropped');
    assert.equal(log.offset, log.oldest_offset, 'offset 0 clamps to the oldest line kept');
    assert.deepEqual(
      log.lines,
      Array.from({ length: 5 }, (_, i) => String(log.oldest_offset + i + 1)),
    );
    const tail = await host.client.request('readLog', { session_id: id, limit: 2 });
    assert.deepEqual(tail.lines, ['11999', '12000']);
  });
});
