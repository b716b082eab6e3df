// McpStreams on a real listener of the engine under test, in-process (short keep-alive): keep-alive comments, per-session
// push, frames in order through backpressure, and a reader that stops reading is dropped with its
// session flag released.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { testEngine } from '../../../helpers/httpEngine.js';

import { bindTcp, closeTcp } from '../../../../supervisor/http/listeners.js';
import type { TcpBinding } from '../../../../supervisor/http/listeners.js';
import { McpStreams, messageFrame } from '../../../../supervisor/mcp/mcpStreams.js';
import { McpSessionStore } from '../../../../supervisor/mcp/protocolSessions.js';
import { McpStream } from './mcpHttp.js';

describe('McpStreams', () => {
  const sessions = new McpSessionStore();
  const streams = new McpStreams(sessions, { keepAliveMs: 50 });
  let binding: TcpBinding;

  before(async () => {
    const app = testEngine().createApp();
    app.any((res, req) => streams.open(res, req.getHeader('mcp-session-id')));
    binding = await bindTcp(app, '127.0.0.1', 0);
  });
  after(() => {
    streams.closeAll();
    closeTcp(binding);
    sessions.dispose();
  });

  const open = (id: string) => McpStream.open({ host: '127.0.0.1', port: binding.port, headers: { 'Mcp-Session-Id': id } });
  const waitUntil = async (pred: () => boolean, what: string) => {
    const deadline = Date.now() + 5000;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`${what} never happened`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it('frames a message as event: message, one data line per text line', () => {
    assert.equal(messageFrame('{"a":1}').toString(), 'event: message\ndata: {"a":1}\n\n');
    assert.equal(messageFrame('x\ny\r\nz').toString(), 'event: message\ndata: x\ndata: y\ndata: z\n\n');
  });

  it('sends keep-alive comments and marks the session as streaming', async () => {
    const s = await open('keepalive');
    try {
      assert.equal(s.status, 200);
      assert.equal(s.headers['content-type'], 'text/event-stream');
      await s.until(() => (s.raw.match(/: ping\n\n/g) ?? []).length >= 2, 'two keep-alives');
      assert.equal(sessions.get('keepalive')?.has_sse_stream, true);
      assert.equal(s.messages.length, 0, 'comments are not messages');
    } finally {
      s.close();
    }
    await waitUntil(() => sessions.get('keepalive')?.has_sse_stream === false, 'has_sse_stream released');
  });

  it('pushes to one session only, and reports a session without a stream', async () => {
    const a = await open('push-a');
    const b = await open('push-b');
    try {
      assert.equal(streams.push('push-a', { jsonrpc: '2.0', method: 'notifications/claude/channel', params: { content: 'hi' } }), true);
      await a.waitForMethod('notifications/claude/channel');
      assert.equal(streams.push('nobody-here', '{}'), false);
      assert.equal(streams.broadcast({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }) >= 2, true);
      await b.waitForMethod('notifications/tools/list_changed');
      assert.equal(b.messages.length, 1, 'b never got a’s message');
    } finally {
      a.close();
      b.close();
    }
  });

  it('delivers a burst in order through backpressure', async () => {
    const s = await open('burst');
    try {
      const filler = 'x'.repeat(8 * 1024);
      for (let i = 0; i < 100; i++) streams.push('burst', { jsonrpc: '2.0', method: 'burst', params: { i, filler } });
      await s.waitForMethod('burst', 100);
      assert.deepEqual(
        s.messages.map((m) => JSON.parse(m.data).params.i),
        Array.from({ length: 100 }, (_, i) => i),
      );
    } finally {
      s.close();
    }
  });

  it('drops a reader that stops reading once its queue passes the bound, releasing the session', async () => {
    const sock = connect({ host: '127.0.0.1', port: binding.port });
    await new Promise<void>((resolve) => sock.once('connect', () => resolve()));
    sock.write('GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: stalled\r\n\r\n');
    sock.pause(); // never reads again
    try {
      await waitUntil(() => sessions.get('stalled')?.has_sse_stream === true, 'the stream opened');
      const big = 'y'.repeat(64 * 1024);
      for (let i = 0; i < 400 && sessions.get('stalled')?.has_sse_stream; i++) {
        streams.push('stalled', { jsonrpc: '2.0', method: 'big', params: { big } });
        await new Promise((r) => setImmediate(r));
      }
      await waitUntil(() => sessions.get('stalled')?.has_sse_stream === false, 'the stalled stream dropped');
    } finally {
      sock.destroy();
    }
  });
});
