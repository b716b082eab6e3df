/** StdioUpstream (the hub's UpstreamClient for stdio) over real pumps (hosted in the test's thread, as in the hub's) and real child processes. */

import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';

import type { UpstreamServerWire } from '../../../shared/protocol/upstreamServer.js';
import { StdioUpstream } from '../../../workers/mcp/stdioUpstream.js';
import { UpstreamRpcError } from '../../../workers/mcp/upstreamClient.js';
import { EVERYTHING_SERVER, isAlive, MOCK_UPSTREAM } from '../proxy-stdio/pumpHarness.js';
import { waitFor } from '../../helpers/poll.js';

interface Logged {
  level: string;
  msg: string;
  fields: Record<string, unknown> | undefined;
}

function server(name: string, args: string[], extra: Partial<UpstreamServerWire> = {}, env: Record<string, string> = {}): UpstreamServerWire {
  return { id: `id-${name}`, name, transport: { type: 'stdio', command: process.execPath, args, env }, enabled: true, timeout_secs: 15, ...extra };
}

function make(t: TestContext, wire: UpstreamServerWire) {
  const logs: Logged[] = [];
  let toolsChanged = 0;
  const lost: string[] = [];
  const upstream = new StdioUpstream({ server: wire, version: '1.2.3-test', log: (level, msg, fields) => logs.push({ level, msg, fields }) });
  upstream.onToolsMayHaveChanged(() => toolsChanged++);
  upstream.onConnectionLost((reason) => lost.push(reason));
  t.after(() => upstream.close());
  return { upstream, logs, toolsChanged: () => toolsChanged, lost };
}

const text = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]!.text;

describe('StdioUpstream', { concurrency: true }, () => {
  test('server-everything: connect lists the tools, callTool answers, healthCheck, 16 concurrent callers, close (not a lost connection)', async (t) => {
    const { upstream, logs, lost } = make(t, server('everything', [EVERYTHING_SERVER, 'stdio']));
    assert.equal(upstream.pid, null);
    const tools = await upstream.connect();
    assert.ok(tools.some((tool) => tool.name === 'echo' && typeof tool.inputSchema === 'object'));
    const pid = upstream.pid;
    assert.ok(pid !== null && isAlive(pid));
    assert.deepEqual(await upstream.callTool('echo', { message: 'through the hub' }), { content: [{ type: 'text', text: 'Echo: through the hub' }] });
    assert.equal(await upstream.healthCheck(), null);
    assert.ok((await upstream.listTools()).some((tool) => tool.name === 'echo'));
    const texts = await Promise.all(Array.from({ length: 16 }, (_, n) => upstream.callTool('echo', { message: `c${n}` }).then(text)));
    assert.deepEqual(
      texts,
      Array.from({ length: 16 }, (_, n) => `Echo: c${n}`),
    );
    // The child's stderr reaches the hub log, named.
    assert.ok(
      logs.some((l) => l.msg.startsWith('[everything stderr] ') && l.fields?.upstream === 'everything'),
      JSON.stringify(logs),
    );
    await Promise.all([upstream.close(), upstream.close()]);
    await upstream.close();
    assert.equal(upstream.pid, null);
    assert.equal(isAlive(pid), false);
    assert.deepEqual(lost, [], 'a child stopped by close() is not reported lost');
    await assert.rejects(upstream.healthCheck(), /Upstream 'everything' is not running/);
    await assert.rejects(upstream.callTool('echo', { message: 'late' }), /Upstream 'everything' is closed/);
  });

  test('initialize carries the protocol version, the capabilities the hub routes, the proxy client name and the version from the options', async (t) => {
    const { upstream } = make(t, server('mock', [MOCK_UPSTREAM, 'normal']));
    await upstream.connect();
    const result = (await upstream.callTool('initParams', {})) as { structuredContent: { initParams: unknown } };
    assert.deepEqual(result.structuredContent.initParams, {
      protocolVersion: '2025-11-25',
      capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } },
      clientInfo: { name: 'tuicommander', version: '1.2.3-test' },
    });
  });

  test('a JSON-RPC error answer is an UpstreamRpcError; the upstream stays up', async (t) => {
    const { upstream } = make(t, server('mock', [MOCK_UPSTREAM, 'normal']));
    await upstream.connect();
    await assert.rejects(upstream.callTool('rpcError', {}), (err: unknown) => {
      assert.ok(err instanceof UpstreamRpcError);
      assert.deepEqual([err.code, err.message, err.data], [-32001, 'mock failure', { detail: 'on purpose' }]);
      return true;
    });
    assert.equal(await upstream.healthCheck(), null);
  });

  test('the child exiting: the call fails, the loss and tools-changed are signalled, a call within the respawn limit waits it out and gets a new child', async (t) => {
    const { upstream, logs, toolsChanged, lost } = make(t, server('mock', [MOCK_UPSTREAM, 'normal']));
    await upstream.connect();
    const spawnedBy = Date.now();
    const firstPid = upstream.pid!;
    await assert.rejects(upstream.callTool('exit', { code: 7 }), { message: "Upstream 'mock' exited (code 7) while 'tools/call' was pending" });
    await waitFor(() => toolsChanged() === 1, 'the tools-changed signal for the exit');
    assert.deepEqual(lost, [`Upstream 'mock' (pid ${firstPid}) ended: exited on its own (code 7)`]);
    assert.equal(upstream.pid, null);
    await assert.rejects(upstream.healthCheck(), /Upstream 'mock' process is not running/);
    // Before: refused at once as "respawning too fast"; the pump still refuses, the client waits out the rest of the limit.
    assert.equal(text(await upstream.callTool('echo', { text: 'respawned' })), 'respawned');
    assert.ok(Date.now() >= spawnedBy + 4_000, 'not before the respawn limit allowed');
    assert.ok(upstream.pid !== null && upstream.pid !== firstPid);
    assert.equal(toolsChanged(), 2, 'the respawn signals again');
    assert.equal(lost.length, 1, 'a respawn is not a loss');
    assert.ok(logs.some((l) => /^Upstream 'mock' respawns in \d+ms \(at most one spawn per 5000ms\)$/.test(l.msg)));
    assert.ok(logs.some((l) => /Upstream 'mock' respawned/.test(l.msg)));
    assert.ok(logs.some((l) => l.level === 'warn' && /ended: exited on its own \(code 7\)/.test(l.msg)));
  });

  test('close() while a start waits out the respawn limit ends the wait at once', async (t) => {
    const { upstream } = make(t, server('mock', [MOCK_UPSTREAM, 'normal']));
    await upstream.connect();
    await assert.rejects(upstream.callTool('exit', { code: 0 }));
    await waitFor(() => upstream.pid === null, 'the exit seen');
    const waiting = upstream.callTool('echo', { text: 'never' });
    await new Promise((r) => setTimeout(r, 100));
    const closedAt = Date.now();
    await upstream.close();
    await assert.rejects(waiting, /Upstream 'mock' is closed/);
    assert.ok(Date.now() - closedAt < 1_000, 'the wait ended with the close');
  });

  test('a timeout fails the call with the upstream named, and the pump warning reaches the hub log', async (t) => {
    const { upstream, logs } = make(t, server('quiet', [MOCK_UPSTREAM, 'silent'], { timeout_secs: 1 }));
    await upstream.connect();
    await assert.rejects(upstream.callTool('echo', { text: 'hello?' }), {
      message: "Upstream 'quiet' timed out: no answer to 'tools/call' within 1000ms; the upstream was torn down",
    });
    assert.ok(
      logs.some((l) => l.level === 'warn' && /timed out/.test(l.msg) && l.fields?.dropped_lines === 0),
      JSON.stringify(logs),
    );
  });

  test('spawn errors surface from connect; a non-stdio server is refused', async (t) => {
    const { upstream } = make(t, { ...server('ghost', []), transport: { type: 'stdio', command: 'tuicd-no-such-binary', args: [], env: {} } });
    await assert.rejects(upstream.connect(), /Upstream 'ghost' failed to start 'tuicd-no-such-binary'.*ENOENT/);
    assert.throws(
      () => new StdioUpstream({ server: { ...server('web', []), transport: { type: 'http', url: 'http://127.0.0.1:1/mcp' } }, version: '0', log: () => {} }),
      /transport 'http', not stdio/,
    );
  });
});
