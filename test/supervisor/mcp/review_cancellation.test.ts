/**
 * `notifications/cancelled` stops the tools/call it names. Streamable HTTP clients (the SDK's among
 * them) cancel by POSTing that notification while the request's own POST stays open, so a server
 * that only watches the HTTP connection keeps a cancelled call running until its own deadline — a
 * `ui action=confirm` dialog stayed up for the whole 300 s window after the agent gave up on it.
 * The blocking call observed here is `ui action=confirm`: its pending dialog is visible on
 * GET /events (`mcp-confirm`, then `mcp-confirm-resolved`), and the confirm window is set far longer
 * than the test, so only a cancellation can resolve it in time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { initialize, JSON_HEADERS } from './transport/mcpHttp.js';

const USER = 'cancel-review';
const PASSWORD = 'cancel review password';
const AUTHORIZATION = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
/** Much longer than the test: an unanswered confirm must not resolve by its own deadline here. */
const CONFIRM_WINDOW_MS = 120_000;

describe('notifications/cancelled stops a tools/call in flight', () => {
  let t: Tuicd;
  let events: SseClient;

  before(async () => {
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } } },
      env: { TUIC_CONFIRM_TIMEOUT_MS: String(CONFIRM_WINDOW_MS) },
    });
    events = await SseClient.open({ socketPath: t.socketPath, path: '/events' });
  });
  after(async () => {
    events?.close();
    await t?.stop();
  });

  const askedFor = (title: string) => events.waitFor((e) => e.event === 'mcp-confirm' && JSON.parse(e.data).title === title);
  const resolvedFor = (requestId: string) => events.waitFor((e) => e.event === 'mcp-confirm-resolved' && JSON.parse(e.data).request_id === requestId);

  it('the SDK Client aborting callTool withdraws the pending confirm', async () => {
    const client = new Client({ name: 'cancel-review-sdk', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${t.tcpPort}/mcp`), {
      requestInit: { headers: { Authorization: AUTHORIZATION } },
    });
    await client.connect(transport);
    try {
      const abort = new AbortController();
      const call = client.callTool({ name: 'ui', arguments: { action: 'confirm', title: 'SDK cancel?' } }, undefined, { signal: abort.signal });
      const asked = JSON.parse((await askedFor('SDK cancel?')).data);
      abort.abort(new Error('the agent gave up'));
      await assert.rejects(call);
      const resolved = JSON.parse((await resolvedFor(asked.request_id)).data);
      assert.equal(resolved.confirmed, false);
    } finally {
      await client.close();
    }
  });

  it('only the protocol session that sent the request can cancel it, by the exact id', async () => {
    const owner = (await initialize(t)).id;
    const stranger = (await initialize(t)).id;
    const cancel = (session: string, requestId: unknown) =>
      t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } }), {
        ...JSON_HEADERS,
        'Mcp-Session-Id': session,
      });
    const confirmCall = (id: number, title: string) =>
      t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ui', arguments: { action: 'confirm', title } } }), {
        ...JSON_HEADERS,
        'Mcp-Session-Id': owner,
      });

    // Another session's cancel, and the owner's cancel of "7" for the request 7, leave it running:
    // the answer that follows is accepted (a withdrawn confirm would ignore it: `ignored` set).
    const kept = confirmCall(7, 'Keep me?');
    const keptAsk = JSON.parse((await askedFor('Keep me?')).data);
    assert.equal((await cancel(stranger, 7)).status, 202);
    assert.equal((await cancel(owner, '7')).status, 202);
    const answer = await t.socket('POST', '/mcp/confirm-response', JSON.stringify({ request_id: keptAsk.request_id, confirmed: true }), {
      'Content-Type': 'application/json',
    });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json(), { ok: true }, answer.text);
    const keptResult = (await kept).json();
    assert.equal(keptResult.id, 7);
    assert.deepEqual(JSON.parse(keptResult.result.content[0].text), { confirmed: true });

    // The owner's cancel ends it: the POST is answered (with its id) long before the confirm window.
    const dropped = confirmCall(8, 'Drop me?');
    const droppedAsk = JSON.parse((await askedFor('Drop me?')).data);
    assert.equal((await cancel(owner, 8)).status, 202);
    const resolved = JSON.parse((await resolvedFor(droppedAsk.request_id)).data);
    assert.equal(resolved.confirmed, false);
    const droppedAnswer = await dropped;
    assert.equal(droppedAnswer.status, 200, droppedAnswer.text);
    const droppedResult = droppedAnswer.json();
    assert.equal(droppedResult.id, 8);
    assert.equal(JSON.parse(droppedResult.result.content[0].text).confirmed, false);
  });
});
