/**
 * A client that declared URL-mode elicitation (MCP 2025-11-25) and calls a tool of an upstream
 * waiting for OAuth gets URLElicitationRequiredError (-32042) carrying the authorization URL: a real
 * authorization server's (test/fixtures/upstreams/oauthUpstream.ts), opened as a browser would, after
 * which the same call succeeds. A client without the capability keeps the -32001 tool error naming
 * the route, and nothing is started for it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { OAuthUpstream } from '../../fixtures/upstreams/oauthUpstream.js';
import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { httpServer, writeUpstreams } from '../../helpers/upstreamServers.js';
import { initialize, rpc } from '../mcp/transport/mcpHttp.js';

describe('URL elicitation of an OAuth authorization', () => {
  let up: OAuthUpstream;
  let dir: string;
  let t: Tuicd;
  const status = async () => ((await t.socket('GET', '/mcp/upstream-status')).json().upstreams as Array<{ status: string }>)[0]!.status;

  before(async () => {
    up = await OAuthUpstream.start();
    dir = mkdtempSync(join(tmpdir(), 'tuicd-oauth-elicit-'));
    writeUpstreams(dir, [httpServer('guarded', up.mcpUrl)]);
    t = await Tuicd.start({ configDir: dir });
    await waitFor(async () => (await status()) === 'needs_auth', 'needs_auth', 15_000);
  });
  after(async () => {
    await t?.stop();
    await up?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a client without URL elicitation gets the tool error and starts nothing', async () => {
    const { id } = await initialize(t, { capabilities: { elicitation: { form: {} } } });
    const answer = await rpc(t, 'tools/call', { name: 'guarded__whoami', arguments: {} }, { 'Mcp-Session-Id': id });
    const body = answer.json();
    assert.equal(body.result.isError, true);
    assert.match(body.result.content[0].text, /oauth\/start/);
    assert.equal(await status(), 'needs_auth', 'no flow was started');
  });

  it('a client with URL elicitation gets -32042 with the authorization URL; after the browser, the call works', async () => {
    const { id } = await initialize(t, { capabilities: { elicitation: { url: {} } } });
    const headers = { 'Mcp-Session-Id': id };
    const first = (await rpc(t, 'tools/call', { name: 'guarded__whoami', arguments: {} }, headers)).json();
    assert.equal(first.error?.code, -32042, JSON.stringify(first));
    const [elicitation] = first.error.data.elicitations;
    assert.equal(elicitation.mode, 'url');
    assert.equal(new URL(elicitation.url).origin, up.asOrigin);
    assert.match(elicitation.message, /guarded/);
    assert.ok(!elicitation.elicitationId.includes(new URL(elicitation.url).searchParams.get('state')), 'the id is not the state');
    assert.equal(await status(), 'authenticating');
    // A second failing call while the flow is pending points at the same flow.
    const again = (await rpc(t, 'tools/call', { name: 'guarded__whoami', arguments: {} }, headers)).json();
    assert.equal(again.error.data.elicitations[0].url, elicitation.url);
    const res = await fetch(elicitation.url, { redirect: 'manual' });
    assert.equal((await fetch(res.headers.get('location')!)).status, 200);
    await waitFor(async () => (await status()) === 'ready', 'ready', 15_000);
    const done = (await rpc(t, 'tools/call', { name: 'guarded__whoami', arguments: {} }, headers)).json();
    assert.equal(done.result.isError, undefined, JSON.stringify(done));
    assert.ok(up.provider.clients.has(done.result.content[0].text));
  });
});
