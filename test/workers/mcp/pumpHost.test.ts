/**
 * The stdio pumps hosted in the hub's thread (workers/mcp/pumpHost.ts) under real StdioUpstreams
 * and real children: a pump and a child per upstream, released one by one; a pump link that closes
 * behind an upstream's back fails what was in flight clearly, its child goes, and the next call
 * gets a new pump; a flooding upstream does not starve its neighbour. Sequential: the attached
 * pumps are a per-thread count.
 */

import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';

import type { UpstreamServerWire } from '../../../shared/protocol/upstreamServer.js';
import type { Transport } from '../../../shared/transports/transport.js';
import { pumpHost } from '../../../workers/mcp/pumpHost.js';
import { StdioUpstream } from '../../../workers/mcp/stdioUpstream.js';
import { isAlive, MOCK_UPSTREAM } from '../proxy-stdio/pumpHarness.js';
import { waitFor } from '../../helpers/poll.js';

function server(name: string, mode: string, timeoutSecs = 15, env: Record<string, string> = {}): UpstreamServerWire {
  return {
    id: `id-${name}`,
    name,
    transport: { type: 'stdio', command: process.execPath, args: [MOCK_UPSTREAM, mode], env },
    enabled: true,
    timeout_secs: timeoutSecs,
  };
}

function make(t: TestContext, wire: UpstreamServerWire) {
  const logs: Array<{ level: string; msg: string }> = [];
  const upstream = new StdioUpstream({ server: wire, version: '0.0.0-test', log: (level, msg) => logs.push({ level, msg }) });
  t.after(() => upstream.close());
  return { upstream, logs };
}

const text = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0]!.text;

/** The hub's end of an upstream's pump link (private: only a test closes it from outside). */
const linkOf = (upstream: StdioUpstream): Transport => (upstream as unknown as { attachment: { transport: Transport } }).attachment.transport;

describe('stdio pumps in the hub thread', () => {
  test('4 stdio upstreams: a pump and a child each, in this thread; closing one leaves the others; closing all releases every pump and child', async (t) => {
    assert.equal(pumpHost.attachedCount(), 0);
    const upstreams = [0, 1, 2, 3].map((n) => make(t, server(`u${n}`, 'normal')).upstream);
    await Promise.all(upstreams.map((upstream) => upstream.connect()));
    assert.equal(pumpHost.attachedCount(), 4);
    const texts = await Promise.all(upstreams.map((upstream, n) => upstream.callTool('echo', { text: `from u${n}` }).then(text)));
    assert.deepEqual(texts, ['from u0', 'from u1', 'from u2', 'from u3']);
    const pids = upstreams.map((upstream) => upstream.pid!);
    assert.equal(new Set(pids).size, 4, 'one child per upstream');

    await upstreams[0]!.close();
    assert.equal(pumpHost.attachedCount(), 3);
    assert.equal(isAlive(pids[0]!), false, 'the closed upstream took its child down');
    assert.equal(text(await upstreams[1]!.callTool('echo', { text: 'still here' })), 'still here');

    await Promise.all(upstreams.slice(1).map((upstream) => upstream.close()));
    assert.equal(pumpHost.attachedCount(), 0);
    assert.ok(
      pids.every((pid) => !isAlive(pid)),
      'every child was shut down',
    );

    const { upstream: later } = make(t, server('later', 'normal'));
    await later.connect();
    assert.equal(pumpHost.attachedCount(), 1);
    await later.close();
    assert.equal(pumpHost.attachedCount(), 0);
  });

  test('closed while its pump is being attached: the connect fails, no pump stays attached, no child starts', async (t) => {
    const { upstream } = make(t, server('racer', 'normal'));
    const connecting = upstream.connect();
    await upstream.close();
    await assert.rejects(connecting, /Upstream 'racer' is closed/);
    assert.equal(pumpHost.attachedCount(), 0);
    assert.equal(upstream.pid, null);
  });

  test('a pump link closed behind their backs: in-flight calls fail naming it, the children go, the next call gets a new pump', async (t) => {
    const a = make(t, server('a', 'normal'));
    // b's child ignores EOF: only the kill of its group ends it.
    const b = make(t, server('b', 'normal', 15, { MOCK_IGNORE_EOF: '1' }));
    await Promise.all([a.upstream.connect(), b.upstream.connect()]);
    const [pidA, pidB] = [a.upstream.pid!, b.upstream.pid!];
    t.after(() => {
      // Only if this test failed: children must not outlive it.
      for (const pid of [pidA, pidB].filter(isAlive)) process.kill(-pid, 'SIGKILL');
    });
    const inFlight = [a, b].map(({ upstream }, n) =>
      assert.rejects(upstream.callTool('sleep', { ms: 60_000 }), (err: Error & { data?: { reason?: string } }) => {
        assert.match(err.message, new RegExp(`^Upstream '${'ab'[n]}': the stdio pump ended while 'tools/call' was pending`));
        assert.equal(err.data?.reason, 'pump_ended');
        return true;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200)); // Let both requests reach their children.

    for (const { upstream } of [a, b]) linkOf(upstream).close();
    await Promise.all(inFlight);
    assert.equal(a.upstream.pid, null);
    assert.ok(
      a.logs.some((l) => l.level === 'error' && /pump channel closed/.test(l.msg)),
      JSON.stringify(a.logs),
    );
    await waitFor(() => !isAlive(pidA) && !isAlive(pidB), 'the unreachable children to be killed');

    assert.equal(text(await a.upstream.callTool('echo', { text: 'after the link closed' })), 'after the link closed');
    assert.equal(text(await b.upstream.callTool('echo', { text: 'b too' })), 'b too');
    assert.equal(pumpHost.attachedCount(), 2);
    assert.ok(a.upstream.pid !== null && a.upstream.pid !== pidA);
    await Promise.all([a.upstream.close(), b.upstream.close()]);
    assert.equal(pumpHost.attachedCount(), 0);
  });

  test('fairness: 50 sequential calls to a normal upstream all succeed while its neighbour in the thread floods', async (t) => {
    const flood = make(t, server('flood', 'flood', 10));
    const calm = make(t, server('calm', 'normal', 10));
    await Promise.all([flood.upstream.connect(), calm.upstream.connect()]);
    // The flood also answers between its bursts, keeping the shared thread busy with its lines.
    let floodCalls = 0;
    let flooding = true;
    const floodLoop = (async () => {
      while (flooding) {
        assert.equal(text(await flood.upstream.callTool('echo', { text: 'noise' })), 'noise');
        floodCalls++;
      }
    })();
    try {
      for (let n = 0; n < 50; n++) assert.equal(text(await calm.upstream.callTool('echo', { text: `calm ${n}` })), `calm ${n}`);
    } finally {
      flooding = false;
    }
    await floodLoop;
    assert.ok(floodCalls > 0, 'the flooding upstream was busy meanwhile');
    // A call past its 10 s deadline would have torn its upstream down: none was.
    assert.ok(!calm.logs.some((l) => /timed out|torn down/.test(l.msg)), JSON.stringify(calm.logs));
    assert.equal(await flood.upstream.healthCheck(), null);
    assert.equal(await calm.upstream.healthCheck(), null);
  });
});
