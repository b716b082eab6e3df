/**
 * Stdio upstream liveness with the real registry, the real stdio client and real child processes
 * (the mock upstream fixture): a child that dies with nobody calling is seen at once (status,
 * reason, event, unlisted) and respawned under the existing policy (the pump's 5 s respawn limit,
 * the breaker), a call in the gap waits for the respawn, a child that dies at every start ends
 * `failed` and is left alone, and an upstream stopped on purpose is never respawned.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test, type TestContext } from 'node:test';

import type { UpstreamServerWire } from '../../../shared/protocol/upstreamServer.js';
import type { BreakerOptions } from '../../../workers/mcp/circuitBreaker.js';
import { UpstreamRegistry } from '../../../workers/mcp/registry.js';
import { StdioUpstream } from '../../../workers/mcp/stdioUpstream.js';
import { waitFor } from '../../helpers/poll.js';
import { isAlive, MOCK_UPSTREAM } from '../proxy-stdio/pumpHarness.js';

/** The pump refuses a spawn sooner than this after the last one (StdioLimits.MIN_RESPAWN_INTERVAL_MS). */
const RESPAWN_LIMIT_MS = 5_000;

interface StatusEvent {
  name: string;
  status: string;
  lastError: string | null;
  at: number;
}

function harness(t: TestContext, env: Record<string, string>, breaker?: Omit<BreakerOptions, 'now'>) {
  const statuses: StatusEvent[] = [];
  const registry = new UpstreamRegistry({
    createClient: (server) => new StdioUpstream({ server, version: '0', log: () => {} }),
    events: { status: (name, status, lastError) => void statuses.push({ name, status, lastError, at: Date.now() }), toolsChanged: () => {}, log: () => {} },
    healthIntervalMs: 3_600_000, // no health checks: whatever happens below is the exit's doing
    minRetryMs: { http: 100, stdio: 100 },
    ...(breaker ? { breaker } : {}),
  });
  t.after(() => registry.dispose());
  const server: UpstreamServerWire = {
    id: 'm',
    name: 'm',
    enabled: true,
    timeout_secs: 30,
    transport: { type: 'stdio', command: process.execPath, args: [MOCK_UPSTREAM, 'normal'], env },
  };
  const row = () => registry.statusRows()[0]!;
  return { registry, server, statuses, row };
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-liveness-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const spawns = (log: string): number[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []);

describe('stdio upstream liveness', { concurrency: true, timeout: 90_000 }, () => {
  test('a SIGKILLed child is seen at once with no call (connecting, the reason, an event, unlisted), then respawned: ready with a new pid and its tools', async (t) => {
    const { registry, server, statuses, row } = harness(t, {});
    registry.connect(server, null);
    await waitFor(() => row().status === 'ready', 'ready', 15_000);
    const pid = row().pid!;
    const toolCount = registry.mergedToolsJson().count;
    assert.ok(toolCount > 0);

    // Events from here on (by index: the ready event can share the kill's millisecond).
    const seen = statuses.length;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => statuses.slice(seen).some((s) => s.status === 'connecting'), 'the connecting event', 2_000);
    const event = statuses.slice(seen).find((s) => s.status === 'connecting')!;
    assert.equal(event.lastError, `Upstream 'm' (pid ${pid}) ended: exited on its own (signal SIGKILL)`);
    const down = row();
    assert.deepEqual([down.status, down.pid, down.last_error], ['connecting', null, event.lastError]);
    assert.equal(registry.mergedToolsJson().count, 0, 'a dead upstream is not listed');

    // Nobody calls: the respawn comes by itself, no sooner than the pump's limit allows.
    await waitFor(() => row().status === 'ready', 'ready again with no call', RESPAWN_LIMIT_MS + 10_000);
    const up = row();
    assert.ok(up.pid !== null && up.pid !== pid && isAlive(up.pid), `a new child (${up.pid} after ${pid})`);
    assert.equal(up.last_error, null);
    assert.equal(registry.mergedToolsJson().count, toolCount, 'its tools are listed again');
    assert.deepEqual(
      statuses.slice(seen).map((s) => s.status),
      ['connecting', 'ready'],
    );
    assert.equal(up.metrics.call_count, 0, 'no call was needed');
  });

  test('a call made while the child is dead waits for the respawn and is answered by the new child', async (t) => {
    const { registry, server, row } = harness(t, {});
    registry.connect(server, null);
    await waitFor(() => row().status === 'ready', 'ready', 15_000);
    const pid = row().pid!;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => row().status === 'connecting', 'connecting', 2_000);
    const result = await registry.call('m', 'whoami', {});
    const answer = JSON.parse(result.json) as { structuredContent?: { pid: number }; isError?: boolean };
    assert.equal(answer.isError ?? false, false, result.json);
    const newPid = row().pid;
    assert.ok(newPid !== null && newPid !== pid);
    assert.equal(answer.structuredContent?.pid, newPid, 'answered by the respawned child');
    assert.equal(row().status, 'ready');
  });

  test('a child that dies at every start: the respawns fail under the breaker (here 2 failures, no re-open) and it ends failed with the reason, never respawned again', async (t) => {
    const dir = tempDir(t);
    const log = join(dir, 'spawns');
    const die = join(dir, 'die');
    const { registry, server, statuses, row } = harness(t, { MOCK_SPAWN_LOG: log, MOCK_DIE_AT_START: die }, { threshold: 2, maxRetries: 0 });
    registry.connect(server, null);
    await waitFor(() => row().status === 'ready', 'ready', 15_000);
    const pid = row().pid!;
    writeFileSync(die, '');
    const seen = statuses.length;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => row().status === 'connecting', 'connecting', 2_000);
    await waitFor(() => row().status === 'failed', 'failed', 2 * RESPAWN_LIMIT_MS + 15_000);
    const failed = row();
    assert.match(
      failed.last_error ?? '',
      /^Upstream 'm' (exited \(code 1\) while 'initialize' was pending|is not running \(exited on its own \(code 1\)\); 'initialize' not sent)$/,
    );
    assert.equal(failed.pid, null);
    assert.deepEqual(
      statuses.slice(seen).map((s) => s.status),
      ['connecting', 'failed'],
    );
    assert.equal(statuses.at(-1)!.lastError, failed.last_error, 'the failed event carries the reason');
    assert.equal(spawns(log).length, 3, 'the first child and two respawns');
    // Failed is left alone (a manual reconnect or the health probe take it out): nothing more is spawned.
    await sleep(RESPAWN_LIMIT_MS + 1_000);
    assert.equal(spawns(log).length, 3);
    assert.equal(row().status, 'failed');
  });

  test('an upstream stopped on purpose (disabled by a save, or removed) is not respawned', async (t) => {
    const dir = tempDir(t);
    const log = join(dir, 'spawns');
    const { registry, server, statuses, row } = harness(t, { MOCK_SPAWN_LOG: log });
    registry.connect(server, null);
    await waitFor(() => row().status === 'ready', 'ready', 15_000);
    const pid = row().pid!;
    // What a save that disables it does: disconnect, then register the disabled entry.
    registry.disconnect('m');
    registry.connect({ ...server, enabled: false }, null);
    await waitFor(() => !isAlive(pid), 'the old child shut down', 5_000);
    await sleep(RESPAWN_LIMIT_MS + 1_000);
    assert.deepEqual(spawns(log), [pid], 'no child was started after the first');
    assert.deepEqual([row().status, row().pid], ['disabled', null]);
    assert.ok(!statuses.some((s) => s.status === 'connecting' && statuses.indexOf(s) > statuses.findIndex((x) => x.status === 'disabled')));

    // Enabled again, then removed: the removed one's shutdown is not a loss either.
    registry.disconnect('m');
    registry.connect(server, null);
    await waitFor(() => row().status === 'ready', 'ready again', 15_000);
    const second = row().pid!;
    registry.disconnect('m');
    await waitFor(() => !isAlive(second), 'the removed child shut down', 5_000);
    await sleep(RESPAWN_LIMIT_MS + 1_000);
    assert.deepEqual(spawns(log), [pid, second]);
    assert.deepEqual(registry.statusRows(), []);
  });
});
