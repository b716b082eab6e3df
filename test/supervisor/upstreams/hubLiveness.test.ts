/**
 * Stdio upstream liveness behind a real tuicd (issue 26 item 9): server-everything's child killed
 * with SIGKILL is seen at once with nobody calling (GET /mcp/upstream-status leaves `ready`, pid
 * null, the reason; `upstream-status-changed` on /events with it), respawned on its own (ready with
 * a new pid, its tools listed again), a call in the gap waits for the respawn, and an upstream
 * disabled by a save is not respawned. The failed end of a child that dies at every start runs
 * with shorter breaker knobs in test/workers/mcp/stdioLiveness.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';

import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { everythingStdio, processAlive, writeUpstreams, type ServerEntry } from '../../helpers/upstreamServers.js';
import { initialize, McpStream, rpc } from '../mcp/transport/mcpHttp.js';

/** The pump starts a child no sooner than this after the last one. */
const RESPAWN_LIMIT_MS = 5_000;

interface StatusRow {
  name: string;
  status: string;
  pid: number | null;
  last_error: string | null;
  tool_count: number;
}

async function row(t: Tuicd): Promise<StatusRow> {
  const answer = await t.socket('GET', '/mcp/upstream-status');
  assert.equal(answer.status, 200, answer.text);
  return answer.json<{ upstreams: StatusRow[] }>().upstreams.find((r) => r.name === 'everything')!;
}

async function waitForRow(t: Tuicd, pred: (r: StatusRow) => boolean, what: string, timeoutMs: number): Promise<StatusRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await row(t);
    if (pred(r)) return r;
    if (Date.now() > deadline) throw new Error(`never ${what} within ${timeoutMs} ms: ${JSON.stringify(r)}`);
    await sleep(50);
  }
}

interface StatusEvent {
  name: string;
  status: string;
  last_error: string | null;
}

describe('a stdio upstream whose child dies is seen at once and respawned', { timeout: 120_000 }, () => {
  let t: Tuicd;
  let dir: string;
  let server: ServerEntry;
  let events: SseClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-liveness-'));
    server = everythingStdio('everything');
    writeUpstreams(dir, [server]);
    t = await Tuicd.start({ configDir: dir });
    events = await SseClient.open({ socketPath: t.socketPath, path: '/events?types=upstream-status-changed' });
    await waitForRow(t, (r) => r.status === 'ready', 'ready', 30_000);
  });

  after(async () => {
    events?.close();
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const statusEvents = (from: number): StatusEvent[] => events.events.slice(from).map((e) => JSON.parse(e.data) as StatusEvent);

  test('kill -9 with no call: the status leaves ready with the reason and the event arrives within 2 s; it is ready again with a new pid and its tools on its own', async () => {
    const { id } = await initialize(t);
    const stream = await McpStream.open({ socketPath: t.socketPath, headers: { 'Mcp-Session-Id': id, Accept: 'text/event-stream' } });
    try {
      const listed = async () =>
        (await rpc(t, 'tools/list', {}, { 'Mcp-Session-Id': id })).json().result.tools.map((x: { name: string }) => x.name) as string[];
      assert.ok((await listed()).includes('everything__echo'));
      const before = await row(t);
      const pid = before.pid!;
      const seen = events.events.length;
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');

      await events.until(() => statusEvents(seen).some((e) => e.name === 'everything' && e.status === 'connecting'), 'the connecting event', 2_000);
      assert.ok(Date.now() - killedAt < 2_000);
      const event = statusEvents(seen).find((e) => e.status === 'connecting')!;
      assert.equal(event.last_error, `Upstream 'everything' (pid ${pid}) ended: exited on its own (signal SIGKILL)`);
      const down = await row(t);
      if (down.status === 'connecting') {
        // Still in the gap (the respawn waits out the 5 s limit since the last spawn): no pid, the reason, unlisted.
        assert.equal(down.pid, null);
        assert.equal(down.last_error, event.last_error);
        assert.ok(!(await listed()).includes('everything__echo'), 'a dead upstream is not listed');
      }

      const up = await waitForRow(t, (r) => r.status === 'ready', 'ready again', RESPAWN_LIMIT_MS + 15_000);
      assert.ok(up.pid !== null && up.pid !== pid && processAlive(up.pid), `a new child (${up.pid} after ${pid})`);
      assert.equal(processAlive(pid), false);
      assert.equal(up.last_error, null);
      assert.equal(up.tool_count, before.tool_count);
      await events.until(() => statusEvents(seen).some((e) => e.status === 'ready'), 'the ready event', 2_000);
      assert.deepEqual(
        statusEvents(seen).map((e) => [e.name, e.status, e.last_error]),
        [
          ['everything', 'connecting', event.last_error],
          ['everything', 'ready', null],
        ],
      );
      assert.ok((await listed()).includes('everything__echo'), 'its tools are listed again');
      await stream.waitForMethod('notifications/tools/list_changed');
    } finally {
      stream.close();
    }
  });

  test('a tools/call made right after the kill waits for the respawn and is answered', async () => {
    const pid = (await row(t)).pid!;
    process.kill(pid, 'SIGKILL');
    await waitForRow(t, (r) => r.status !== 'ready' || r.pid !== pid, 'out of ready', 2_000);
    const answer = await rpc(t, 'tools/call', { name: 'everything__echo', arguments: { message: 'across the respawn' } });
    assert.equal(answer.status, 200, answer.text);
    const result = answer.json().result as { content: Array<{ text: string }>; isError?: boolean };
    assert.equal(result.isError ?? false, false, answer.text);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: across the respawn' }]);
    const now = await row(t);
    assert.equal(now.status, 'ready');
    assert.ok(now.pid !== null && now.pid !== pid);
  });

  test('disabled by a save: its child is stopped and never respawned', async () => {
    const pid = (await row(t)).pid!;
    const disabled = { ...server, enabled: false };
    const put = await t.socket('PUT', '/mcp/upstreams', JSON.stringify({ base: { servers: [server] }, config: { servers: [disabled] } }), {
      'Content-Type': 'application/json',
    });
    assert.equal(put.status, 200, put.text);
    await waitForRow(t, (r) => r.status === 'disabled', 'disabled', 10_000);
    for (let i = 0; i < 100 && processAlive(pid); i++) await sleep(50);
    assert.equal(processAlive(pid), false, 'the child was stopped');
    const seen = events.events.length;
    await sleep(RESPAWN_LIMIT_MS + 1_000);
    const r = await row(t);
    assert.deepEqual([r.status, r.pid], ['disabled', null]);
    assert.deepEqual(statusEvents(seen), [], 'no status change after it was disabled');
  });
});
