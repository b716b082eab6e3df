/**
 * The pump against upstreams that flood it (test/fixtures/upstreams/mockUpstream.ts): notifications
 * between a request and its reply, a 20 MB line, a stderr flood. Every answer still reaches its
 * caller, memory stays within the queue limits, and nothing crashes.
 */

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { StdioLimits } from '../../../shared/protocol/proxyStdio.js';
import { DEFAULT_TIMEOUT_MS, echoText, mockParams, sleep, startPump, waitForRespawnWindow } from './pumpHarness.js';

describe('flooding upstreams', { concurrency: true }, () => {
  test('rpc_skips_interleaved_notifications: a flooding server still answers every call, and the queue stays bounded', async (t) => {
    const pump = await startPump(t);
    await pump.start(mockParams('flood', { timeout_ms: DEFAULT_TIMEOUT_MS }));
    for (let n = 0; n < 5; n++)
      assert.equal(echoText(await pump.rpc('tools/call', { name: 'echo', arguments: { text: `one-by-one ${n}` } })), `one-by-one ${n}`);
    const texts = await Promise.all(
      Array.from({ length: 16 }, (_, n) => pump.rpc('tools/call', { name: 'echo', arguments: { text: `together ${n}` } }).then(echoText)),
    );
    assert.deepEqual(
      texts,
      Array.from({ length: 16 }, (_, n) => `together ${n}`),
    );
    for (let n = 0; n < 5; n++) {
      const status = await pump.client.request('status', {});
      assert.equal(status.alive, true);
      assert.ok(status.queued_lines <= StdioLimits.QUEUE_MAX_LINES && status.queued_bytes <= StdioLimits.QUEUE_MAX_BYTES, JSON.stringify(status));
      await sleep(50);
    }
    assert.equal(pump.exited.length, 0);
  });

  test('stderrFlood: calls still work, stderr events are cut to 4 KiB and rate-limited, the surplus is reported', async (t) => {
    const floodStarted = Date.now();
    const pump = await startPump(t);
    await pump.start(mockParams('stderrFlood', { timeout_ms: DEFAULT_TIMEOUT_MS }));
    for (let n = 0; n < 5; n++) assert.equal(echoText(await pump.rpc('tools/call', { name: 'echo', arguments: { text: `loud ${n}` } })), `loud ${n}`);
    await pump.until(() => pump.logs.some((l) => /lines not relayed \(rate limit\)/.test(l.msg)), 5_000, 'the suppression report');
    // Windows of 1 s with 50 lines each: an interval of T seconds touches at most ceil(T) + 1 of them.
    const windows = Math.ceil((Date.now() - floodStarted) / 1000) + 1;
    assert.ok(pump.stderr.length <= windows * 50, `${pump.stderr.length} stderr events within ${windows} windows`);
    assert.ok(pump.stderr.every((line) => Buffer.byteLength(line) <= 4096));
    assert.ok(
      pump.stderr.some((line) => line.length === 4096),
      'the 100 KiB lines arrive cut to 4 KiB',
    );
  });

  test('hugeLine: a 20 MB answer is discarded whole without crashing the pump; after the respawn the next call works', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'tuicd-huge-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const params = mockParams('hugeLine', { timeout_ms: DEFAULT_TIMEOUT_MS, env: { MOCK_MARKER: join(dir, 'sent') } });
    const pump = await startPump(t);
    await pump.start(params);
    const spawnedAt = Date.now();
    const call = pump.rpc('tools/call', { name: 'echo', arguments: { text: 'huge please' } }, { timeout_ms: 10_000 });
    const timedOut = assert.rejects(call, /timed out: no answer to 'tools\/call' within 10000ms/);
    await pump.until(
      () => pump.logs.some((l) => l.level === 'warn' && /over 16777216 bytes; discarded whole/.test(l.msg)),
      10_000,
      'the oversized-line warning',
    );
    const status = await pump.client.request('status', {});
    assert.equal(status.oversized_lines, 1);
    assert.ok(status.queued_bytes <= StdioLimits.QUEUE_MAX_BYTES, JSON.stringify(status));
    await timedOut;
    await waitForRespawnWindow(spawnedAt);
    await pump.start(params);
    assert.equal(echoText(await pump.rpc('tools/call', { name: 'echo', arguments: { text: 'after the respawn' } })), 'after the respawn');
  });
});
