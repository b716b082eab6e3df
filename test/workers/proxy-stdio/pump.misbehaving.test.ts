/**
 * The pump against upstreams that stop cooperating (test/fixtures/upstreams/mockUpstream.ts): silent,
 * exiting mid-call, deaf on stdin. Nothing wedges, every failing call fails within its own deadline
 * with an error naming the upstream, and a late reply never answers another call.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ErrorCode } from '../../../shared/errors.js';
import { DEFAULT_TIMEOUT_MS, echoText, FAIL_WELL_BEFORE_DEFAULT_MS, isAlive, mockParams, startPump } from './pumpHarness.js';

describe('misbehaving upstreams', { concurrency: true }, () => {
  test('silent: a call fails at its deadline with a clear error, the child is torn down and every other pending call fails too', async (t) => {
    const pump = await startPump(t);
    const { pid } = await pump.start(mockParams('silent', { timeout_ms: DEFAULT_TIMEOUT_MS }));
    const started = Date.now();
    const other = pump.rpc('tools/call', { name: 'echo', arguments: { text: 'bystander' } });
    const late = assert.rejects(other, (err: Error & { data?: { reason?: string } }) => {
      assert.match(err.message, /^Upstream 'mock' torn down while 'tools\/call' was pending: no answer to 'tools\/call' within 800ms/);
      assert.equal(err.data?.reason, 'torn_down');
      return true;
    });
    await assert.rejects(pump.rpc('tools/call', { name: 'echo', arguments: { text: 'x' } }, { timeout_ms: 800 }), (err: Error & { code?: string }) => {
      assert.equal(err.code, ErrorCode.REQUEST_TIMEOUT);
      assert.equal(err.message, "Upstream 'mock' timed out: no answer to 'tools/call' within 800ms; the upstream was torn down");
      return true;
    });
    await late;
    assert.ok(Date.now() - started < FAIL_WELL_BEFORE_DEFAULT_MS);
    await pump.until(() => pump.exited.length === 1, 5_000, 'the exited event');
    assert.equal(pump.exited[0]!.pid, pid);
    assert.match(pump.exited[0]!.reason, /^torn down: no answer to 'tools\/call' within 800ms \(0 stdout lines dropped\)$/);
    const warning = pump.logs.find((l) => l.level === 'warn' && /timed out/.test(l.msg));
    assert.ok(warning, JSON.stringify(pump.logs));
    assert.equal(warning.fields?.dropped_lines, 0);
    assert.equal(isAlive(pid), false);
    assert.equal((await pump.client.request('status', {})).alive, false);
  });

  test('exitMidCall: the pending call fails as soon as the child exits, naming the upstream and the exit', async (t) => {
    const pump = await startPump(t);
    await pump.start(mockParams('exitMidCall', { timeout_ms: DEFAULT_TIMEOUT_MS }));
    const started = Date.now();
    await assert.rejects(pump.rpc('tools/call', { name: 'echo', arguments: { text: 'bye' } }), (err: Error & { data?: { reason?: string } }) => {
      assert.equal(err.message, "Upstream 'mock' exited (code 3) while 'tools/call' was pending");
      assert.equal(err.data?.reason, 'exited');
      return true;
    });
    assert.ok(Date.now() - started < FAIL_WELL_BEFORE_DEFAULT_MS, 'failed by the exit, not by the deadline');
    await pump.until(() => pump.exited.length === 1, 5_000, 'the exited event');
    assert.deepEqual([pump.exited[0]!.code, pump.exited[0]!.reason], [3, 'exited on its own (code 3)']);
  });

  test('noStdinRead: a request of several MB the child never reads times out and tears down instead of wedging; the stdin backlog is bounded', async (t) => {
    const pump = await startPump(t);
    const { pid } = await pump.start(mockParams('noStdinRead', { timeout_ms: DEFAULT_TIMEOUT_MS }));
    const started = Date.now();
    const big = pump.rpc('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(20 * 1024 * 1024) } }, { timeout_ms: 8_000 });
    const rejected = assert.rejects(big, (err: Error & { code?: string }) => {
      assert.equal(err.code, ErrorCode.REQUEST_TIMEOUT);
      assert.match(
        err.message,
        /^Upstream 'mock' timed out: 'tools\/call' was not taken on its stdin within 8000ms \(\d+ bytes still unwritten; is it reading\?\); the upstream was torn down$/,
      );
      return true;
    });
    // The pump itself stays responsive while the write is stuck.
    let inFlight = 0;
    const poll = setInterval(() => void pump.client.request('status', {}).then((s) => (inFlight = s.in_flight)), 20);
    await pump.until(() => inFlight === 1, 8_000, 'the big request to be in flight').finally(() => clearInterval(poll));
    // With 20 MiB waiting in front of the pipe, another 20 MiB would pass the 32 MiB bound: refused at once.
    await assert.rejects(
      pump.rpc('tools/call', { name: 'echo', arguments: { text: 'y'.repeat(20 * 1024 * 1024) } }),
      /cannot send 'tools\/call': stdin backlog full/,
    );
    await rejected;
    assert.ok(Date.now() - started < FAIL_WELL_BEFORE_DEFAULT_MS);
    await pump.until(() => pump.exited.length === 1, 5_000, 'the exited event');
    assert.match(pump.exited[0]!.reason, /^torn down: 'tools\/call' was not taken on its stdin/);
    assert.equal(isAlive(pid), false);
  });

  test('a late reply never answers the next call: a cancelled call is answered while another is pending', async (t) => {
    const pump = await startPump(t);
    const { pid } = await pump.start(mockParams('normal', { timeout_ms: DEFAULT_TIMEOUT_MS }));
    const abort = new AbortController();
    const cancelled = pump.rpc('tools/call', { name: 'sleep', arguments: { ms: 1_500, text: 'late' } }, { signal: abort.signal });
    // Cancelled once it is in flight, not on a timer: a loaded machine may fire a timer after the answer.
    for (let inFlight = 0; inFlight === 0; ) inFlight = (await pump.client.request('status', {})).in_flight;
    abort.abort();
    await assert.rejects(cancelled, { code: ErrorCode.REQUEST_CANCELLED });
    // The 'late' answer arrives at ~1.5 s, while this one (id one higher) is pending.
    assert.equal(echoText(await pump.rpc('tools/call', { name: 'sleep', arguments: { ms: 3_000, text: 'mine' } })), 'mine');
    assert.equal((await pump.client.request('status', {})).in_flight, 0);
    assert.equal(pump.exited.length, 0);
    assert.ok(isAlive(pid));
  });

  test('answers out of order are matched by id (16 callers at once)', async (t) => {
    const pump = await startPump(t);
    await pump.start(mockParams('normal', { timeout_ms: DEFAULT_TIMEOUT_MS }));
    const delays = Array.from({ length: 16 }, (_, n) => ((n * 7) % 16) * 20);
    const texts = await Promise.all(delays.map((ms, n) => pump.rpc('tools/call', { name: 'sleep', arguments: { ms, text: `caller ${n}` } }).then(echoText)));
    assert.deepEqual(
      texts,
      delays.map((_, n) => `caller ${n}`),
    );
  });
});
