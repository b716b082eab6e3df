// The upstream hub thread dying under HTTP requests: a real supervisor (in this process, so the test
// can end the hub's thread), a real server-everything stdio upstream, requests over the unix socket.
// A tools/call in flight fails at once saying the hub stopped; a save or a status read racing the
// death is answered from the restarted hub, which holds every saved upstream; later calls work.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Worker } from 'node:worker_threads';

import type { McpHubHost } from '../../../supervisor/hosts/mcpHubHost.js';
import { resolvePaths } from '../../../shared/paths.js';
import { Supervisor } from '../../../supervisor/supervisor.js';
import { until } from '../../helpers/poll.js';
import { httpRequest, type Tuicd } from '../../helpers/tuicdProcess.js';
import { everythingStdio, writeUpstreams } from '../../helpers/upstreamServers.js';
import { initialize, rpc } from '../mcp/transport/mcpHttp.js';
import { testEngine } from '../../helpers/httpEngine.js';

interface StatusRow {
  name: string;
  status: string;
  pid: number | null;
  metrics: { call_count: number };
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

/** The hub's thread, reached behind the host's back: these tests end it the way a crash would. */
function hubWorker(hub: McpHubHost): Worker {
  const worker = (hub as unknown as { running: { worker: Worker } | null }).running?.worker;
  assert.ok(worker, 'a hub thread is running');
  return worker;
}

describe('the hub thread dies under HTTP requests', { timeout: 28_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-hub-death-'));
  const paths = resolvePaths({ configDir: dir });
  const alpha = everythingStdio('alpha');
  const beta = everythingStdio('beta');
  let sup: Supervisor;
  let sessionId: string;
  // The MCP helpers take a Tuicd; they only use its socket().
  const client = {
    socket: (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
      httpRequest({ socketPath: paths.socketPath, method, path, headers }, body),
  } as unknown as Tuicd;

  const statusRows = async (): Promise<StatusRow[]> => {
    const answer = await client.socket('GET', '/mcp/upstream-status');
    assert.equal(answer.status, 200, answer.text);
    return answer.json<{ upstreams: StatusRow[] }>().upstreams;
  };
  const readyRows = (names: string[], notPids: Array<number | null> = []) =>
    until(
      statusRows,
      (rows) => names.every((n) => rows.some((r) => r.name === n && r.status === 'ready' && !notPids.includes(r.pid))),
      `${names.join(', ')} ready`,
      15_000,
    );
  const callTool = async (name: string, args: object) => {
    const answer = await rpc(client, 'tools/call', { name, arguments: args }, { 'Mcp-Session-Id': sessionId });
    assert.equal(answer.status, 200, answer.text);
    return answer.json().result as { content: Array<{ text: string }>; isError?: boolean };
  };

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    writeUpstreams(dir, [alpha]);
    sup = await Supervisor.start({
      paths,
      env: { ...process.env, TUIC_BIND_HOST: '127.0.0.1', TUIC_CREDENTIAL_STORE: 'file' },
      logLevel: 'fatal',
      engine: testEngine(),
    });
    await readyRows(['alpha']);
    sessionId = (await initialize(client)).id;
  });

  after(async () => {
    await sup?.stop('test over');
    rmSync(dir, { recursive: true, force: true });
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
  });

  test('a tools/call in flight fails at once saying the hub stopped; the hub comes back with alpha and calls work again', async () => {
    const [before] = await statusRows();
    // The upstream itself would answer after 20 s.
    const pending = callTool('alpha__trigger-long-running-operation', { duration: 20, steps: 2 });
    await until(statusRows, (rows) => rows[0]!.metrics.call_count > before!.metrics.call_count, 'the call reached the hub');
    await hubWorker(sup.hub).terminate();
    const outcome = await Promise.race([
      pending,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the call still hangs 10 s after the hub died')), 10_000)),
    ]);
    assert.equal(outcome.isError, true);
    assert.match(
      outcome.content[0]!.text,
      /Upstream 'alpha' call to 'trigger-long-running-operation' failed: the upstream hub stopped during the call \(worker exited with code 1\)/,
    );

    await readyRows(['alpha'], [before!.pid]);
    assert.match((await callTool('alpha__echo', { message: 'after the restart' })).content[0]!.text, /after the restart/);
  });

  test('GET /mcp/upstream-status asked as the hub dies is answered by the restarted hub', async () => {
    const hub = sup.hub;
    const original = hub.status.bind(hub);
    hub.status = () => {
      void hubWorker(hub).terminate();
      return original();
    };
    try {
      const answer = await client.socket('GET', '/mcp/upstream-status');
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(
        answer.json<{ upstreams: StatusRow[] }>().upstreams.map((r) => r.name),
        ['alpha'],
      );
    } finally {
      hub.status = original;
    }
    await readyRows(['alpha']);
  });

  test('PUT /mcp/upstreams applied as the hub dies: 200, and the restarted hub holds the old and the new upstream', async () => {
    await readyRows(['alpha']);
    const hub = sup.hub;
    const original = hub.applyPlan.bind(hub);
    // The thread is told to end just before the save reaches it: the connect goes to a dying hub.
    hub.applyPlan = (plan) => {
      void hubWorker(hub).terminate();
      return original(plan);
    };
    try {
      const body = JSON.stringify({ base: { servers: [alpha] }, config: { servers: [alpha, beta] } });
      const answer = await client.socket('PUT', '/mcp/upstreams', body, { 'Content-Type': 'application/json' });
      assert.equal(answer.status, 200, answer.text);
    } finally {
      hub.applyPlan = original;
    }
    await readyRows(['alpha', 'beta']);
    assert.match((await callTool('beta__echo', { message: 'beta after the restart' })).content[0]!.text, /beta after the restart/);
    assert.match((await callTool('alpha__echo', { message: 'alpha too' })).content[0]!.text, /alpha too/);
  });
});
