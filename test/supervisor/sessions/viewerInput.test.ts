// What a WebSocket viewer types (SessionService.writeFromViewer): a one-way `input` event while the
// writer lock is free, queued behind any raw write that holds or awaits it. Real host, real bash.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { idleShell, outputUntil, startHarness } from '../mcp/tools/sessionHarness.js';
import type { Harness } from '../mcp/tools/sessionHarness.js';

describe('viewer keystrokes', () => {
  let h: Harness;
  before(() => {
    h = startHarness();
  });
  after(() => h.stop());

  it('leave as one input event, not a write request, when nobody holds the writer lock', async () => {
    const id = await idleShell(h);
    const client = h.host.runningClient();
    assert.ok(client, 'the host runs after a session was created');
    const sent: string[] = [];
    const emit = client.emit.bind(client);
    const request = client.request.bind(client);
    client.emit = ((name: Parameters<typeof emit>[0], ...rest: [never, never]) => {
      sent.push(`event ${name}`);
      return emit(name, ...rest);
    }) as typeof client.emit;
    client.request = ((name: Parameters<typeof request>[0], ...rest: [never, never]) => {
      sent.push(`request ${name}`);
      return request(name, ...rest);
    }) as typeof client.request;
    try {
      h.sessions.writeFromViewer(id, Buffer.from('echo typed-$((6*7))\r'));
      await outputUntil(h, id, (d) => d.includes('typed-42'), 'the typed command ran');
      assert.equal(sent.filter((s) => s === 'event input').length, 1, sent.join(', '));
      assert.equal(sent.includes('request write'), false, sent.join(', '));
    } finally {
      client.emit = emit;
      client.request = request;
    }
  });

  it('typed while a raw write sequence holds the lock land after the whole sequence', async () => {
    const id = await idleShell(h);
    // Not awaited: the sequence takes the lock at once, before its first request leaves.
    const sequence = h.sessions.writeSequence(id, [Buffer.from('echo A'), Buffer.from('B')]);
    h.sessions.writeFromViewer(id, Buffer.from('C$((40+2))\r'));
    await sequence;
    // Only A, B, C in that order print ABC42; a keystroke that overtook the sequence would run "C42".
    await outputUntil(h, id, (d) => /^ABC42$/m.test(d), 'the sequence, then the keystrokes');
  });

  it('for an unknown or closed session are dropped without an error, and the host keeps serving', async () => {
    const id = await idleShell(h);
    const client = h.host.runningClient()!;
    const errors: string[] = [];
    const off = client.onError((e) => errors.push(e.message));
    try {
      h.sessions.writeFromViewer('no-such-session', Buffer.from('x'));
      client.emit('input', { session_id: 'gone-session' }, { payload: Buffer.from('x') });
      await h.sessions.close(id);
      h.sessions.writeFromViewer(id, Buffer.from('x'));
      assert.deepEqual(await client.request('ping', {}), { pid: h.host.pid });
      assert.deepEqual(errors, []);
    } finally {
      off.dispose();
    }
  });
});
