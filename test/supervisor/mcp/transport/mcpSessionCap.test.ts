// Issue 14: MCP protocol sessions are bounded by services.server.max_mcp_sessions. A flood of
// initialize calls holds at most the cap (it used to hold one session per call for the hour the
// reaper waits); past the cap the least recently used idle session is evicted and logged; a
// session with an open GET stream is stepped over; the cap is read from config.json and live from
// PUT /config.
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, before, describe, it } from 'node:test';

import { until } from '../../../helpers/poll.js';
import { httpRequest, Tuicd } from '../../../helpers/tuicdProcess.js';
import { initialize, JSON_HEADERS, McpStream, rpc, waitForStatus } from './mcpHttp.js';

interface Evicted {
  source: string;
  session_id: string;
  idle_ms: number;
  max_mcp_sessions: number;
  client_name?: string;
  msg: string;
}

/** The eviction records tuicd logged so far, in order. */
function evictions(t: Tuicd): Evicted[] {
  return t.stderr
    .split('\n')
    .filter((line) => line.includes('"source":"mcp_session_evicted"'))
    .map((line) => JSON.parse(line) as Evicted);
}

const status = async (t: Tuicd) => (await t.socket('GET', '/mcp/status')).json() as { mcp_clients: number; sse_streams: number };

describe('MCP protocol session cap (max_mcp_sessions)', () => {
  describe('20,000 initialize calls on the default cap', () => {
    let t: Tuicd;
    before(async () => {
      t = await Tuicd.start();
    });
    after(() => t.stop());

    it('leave at most 10,000 sessions: the oldest are evicted and logged, the newest kept', async () => {
      const TOTAL = 20_000;
      const CONCURRENCY = 4;
      // Keep-alive, a few connections at once: the way a misbehaving client (or many) would hammer it.
      const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'flood', version: '1' } },
      });
      const ids: string[] = [];
      let sent = 0;
      const worker = async () => {
        while (sent < TOTAL) {
          sent++;
          const r = await httpRequest({ socketPath: t.socketPath, method: 'POST', path: '/mcp', headers: JSON_HEADERS, agent }, body);
          assert.equal(r.status, 200);
          ids.push(String(r.headers['mcp-session-id']));
        }
      };
      try {
        await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      } finally {
        agent.destroy();
      }
      assert.equal(ids.length, TOTAL);
      assert.equal((await status(t)).mcp_clients, 10_000);

      // One record per eviction, naming the session, the cap and the client; oldest first. The
      // server's creation order is the truth: with CONCURRENCY requests in flight, replies can reach
      // this client reordered by up to CONCURRENCY - 1 places, so only the boundary may differ.
      const evicted = await until(
        () => evictions(t),
        (e) => e.length >= TOTAL - 10_000,
        'every eviction logged',
      );
      assert.equal(evicted.length, TOTAL - 10_000);
      assert.ok(ids.slice(0, CONCURRENCY).includes(evicted[0]!.session_id), 'the first evicted is one of the first created');
      assert.equal(evicted[0]!.max_mcp_sessions, 10_000);
      assert.equal(evicted[0]!.client_name, 'flood');
      assert.ok(evicted[0]!.idle_ms >= 0);
      assert.match(evicted[0]!.msg, /max_mcp_sessions/);
      const evictedIds = new Set(evicted.map((e) => e.session_id));
      assert.equal(evictedIds.size, TOTAL - 10_000, 'no session evicted twice');
      const boundary = TOTAL - 10_000;
      for (const [i, id] of ids.entries()) {
        if (Math.abs(i - boundary) < CONCURRENCY) continue;
        assert.equal(
          evictedIds.has(id),
          i < boundary,
          `session #${i} ${i < boundary ? 'is among the oldest and was evicted' : 'is among the newest and was kept'}`,
        );
      }

      // The newest is still held: presenting it resumes it, with no new session and no eviction.
      assert.equal((await initialize(t, {}, { 'Mcp-Session-Id': ids[TOTAL - 1]! })).id, ids[TOTAL - 1]);
      assert.equal((await status(t)).mcp_clients, 10_000);
      assert.equal(evictions(t).length, TOTAL - 10_000);
    });
  });

  describe('a cap of 3 from config.json', () => {
    let t: Tuicd;
    before(async () => {
      t = await Tuicd.start({ config: { services: { server: { max_mcp_sessions: 3 } } } });
    });
    after(() => t.stop());

    const evictedIds = () => evictions(t).map((e) => e.session_id);

    it('evicts the least recently used: the most recently used survive', async () => {
      const seen = evictedIds().length;
      const a = (await initialize(t)).id;
      const b = (await initialize(t)).id;
      const c = (await initialize(t)).id;
      // a is used again (any request presenting it counts), b is only the oldest to be created.
      assert.equal((await rpc(t, 'ping', undefined, { 'Mcp-Session-Id': a })).status, 200);
      const d = (await initialize(t)).id;
      await t.waitForStderr(new RegExp(`"mcp_session_evicted","session_id":"${b}"`));
      assert.deepEqual(evictedIds().slice(seen), [b]);
      assert.equal((await status(t)).mcp_clients, 3);
      // c is now the least recently used.
      await rpc(t, 'tools/list', undefined, { 'Mcp-Session-Id': a });
      await rpc(t, 'ping', undefined, { 'Mcp-Session-Id': d });
      await initialize(t);
      await t.waitForStderr(new RegExp(`"mcp_session_evicted","session_id":"${c}"`));
      assert.deepEqual(evictedIds().slice(seen), [b, c]);
      // The survivors are held: resuming keeps their ids.
      assert.equal((await initialize(t, {}, { 'Mcp-Session-Id': a })).id, a);
      assert.equal((await initialize(t, {}, { 'Mcp-Session-Id': d })).id, d);
    });

    it('steps over a session with an open GET stream while idle ones can go, and keeps its stream', async () => {
      const streaming = (await initialize(t)).id;
      const stream = await McpStream.open({ socketPath: t.socketPath, headers: { 'Mcp-Session-Id': streaming, Accept: 'text/event-stream' } });
      try {
        assert.equal(stream.status, 200);
        await waitForStatus(t, (s) => s.sse_streams === 1);
        const seen = evictedIds().length;
        // Three newer sessions make the streaming one the least recently used, then five more push past the cap.
        const created: string[] = [];
        for (let i = 0; i < 8; i++) created.push((await initialize(t)).id);
        await t.waitForStderr(new RegExp(`"mcp_session_evicted","session_id":"${created[5]}"`));
        assert.equal(evictedIds().slice(seen).includes(streaming), false, 'the session with a stream was never evicted');
        assert.deepEqual(evictedIds().slice(seen).slice(-6), created.slice(0, 6), 'idle ones went, oldest first');
        assert.equal((await status(t)).mcp_clients, 3);
        assert.equal(stream.ended, false);
        assert.equal((await initialize(t, {}, { 'Mcp-Session-Id': streaming })).id, streaming, 'still held');
      } finally {
        stream.close();
      }
      await waitForStatus(t, (s) => s.sse_streams === 0);
    });

    it('reads the cap live: PUT /config raises it, and lowering it evicts down to it at the next session', async () => {
      assert.equal((await t.socket('PUT', '/config', JSON.stringify({ services: { server: { max_mcp_sessions: 6 } } }))).status, 200);
      for (let i = 0; i < 5; i++) await initialize(t);
      assert.equal((await status(t)).mcp_clients, 6);
      assert.equal((await t.socket('PUT', '/config', JSON.stringify({ services: { server: { max_mcp_sessions: 2 } } }))).status, 200);
      const newest = (await initialize(t)).id;
      assert.equal((await status(t)).mcp_clients, 2);
      assert.equal((await initialize(t, {}, { 'Mcp-Session-Id': newest })).id, newest);
    });
  });
});
