/**
 * Authorizing an OAuth 2.1 upstream through a real tuicd, against a real authorization server (the
 * MCP SDK's router over an in-memory provider, test/fixtures/upstreams/oauthUpstream.ts) protecting
 * a real MCP server. The test plays the browser: it opens the authorization URL tuicd hands out,
 * follows the authorization server's redirect (or pastes it), and reads the page that comes back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { OAuthUpstream } from '../../fixtures/upstreams/oauthUpstream.js';
import { waitFor } from '../../helpers/poll.js';
import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { httpServer, writeUpstreams } from '../../helpers/upstreamServers.js';
import { rpc } from '../mcp/transport/mcpHttp.js';

const post = (t: Tuicd, path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });

async function statusOf(t: Tuicd, name: string): Promise<{ status: string; last_error: string | null; authorization_url?: string }> {
  const rows = (await t.socket('GET', '/mcp/upstream-status')).json().upstreams as Array<{ name: string; status: string; last_error: string | null }>;
  const row = rows.find((r) => r.name === name);
  if (!row) throw new Error(`no status row for ${name}`);
  return row;
}

const waitStatus = (t: Tuicd, name: string, status: string) => waitFor(async () => (await statusOf(t, name)).status === status, `${name} ${status}`, 15_000);

/** The browser at the authorization server: the redirect it is sent to (not followed). */
async function authorizeAt(authorizationUrl: string): Promise<string> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  assert.equal(res.status, 302, `the authorization server redirects back: ${res.status} ${await res.text()}`);
  return res.headers.get('location')!;
}

async function callWhoami(t: Tuicd, name: string): Promise<{ text: string; isError: boolean }> {
  const answer = await rpc(t, 'tools/call', { name: `${name}__whoami`, arguments: {} });
  assert.equal(answer.status, 200, answer.text);
  const result = answer.json().result;
  return { text: result.content[0].text as string, isError: result.isError === true };
}

/** Every regular file under `dir`, read whole (the socket is skipped). */
function allFiles(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...allFiles(path));
    else if (st.isFile()) out.push({ path, text: readFileSync(path, 'latin1') });
  }
  return out;
}

describe('OAuth upstream authorization (loopback callback, DCR, restart)', () => {
  let up: OAuthUpstream;
  let dir: string;
  let t: Tuicd;
  /** The redirect that completed the first authorization. */
  let usedRedirect = '';

  before(async () => {
    up = await OAuthUpstream.start();
    dir = mkdtempSync(join(tmpdir(), 'tuicd-oauth-'));
    writeUpstreams(dir, [httpServer('guarded', up.mcpUrl)]);
    t = await Tuicd.start({ configDir: dir });
  });
  after(async () => {
    await t?.stop();
    await up?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an upstream that answers with an OAuth challenge waits in needs_auth; a call names the route that authorizes it', async () => {
    await waitStatus(t, 'guarded', 'needs_auth');
    const call = await rpc(t, 'tools/call', { name: 'guarded__whoami', arguments: {} });
    assert.match(call.text, /-32001/);
    assert.match(call.text, /POST \/mcp\/upstreams\/oauth\/start/);
  });

  it('start → open the URL → the loopback page says authorized → ready, with the tools, the resource and a registered client', async () => {
    const events = await SseClient.open({ socketPath: t.socketPath, path: '/events?types=mcp-oauth-start' });
    const started = await post(t, '/mcp/upstreams/oauth/start', { name: 'guarded' });
    assert.equal(started.status, 200, started.text);
    const { authorization_url, as_origin, cross_domain_as, redirect_uri } = started.json();
    const url = new URL(authorization_url);
    assert.equal(url.origin, up.asOrigin);
    assert.equal(as_origin, up.asOrigin);
    assert.equal(cross_domain_as, false);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.ok((url.searchParams.get('state') ?? '').length >= 40, 'an opaque state');
    assert.equal(url.searchParams.get('resource'), up.mcpUrl);
    assert.match(redirect_uri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    await waitFor(() => events.events.some((e) => e.event === 'mcp-oauth-start'), 'the mcp-oauth-start event', 5_000);
    assert.deepEqual(JSON.parse(events.events.find((e) => e.event === 'mcp-oauth-start')!.data), {
      name: 'guarded',
      authorization_url,
      as_origin,
      cross_domain_as: false,
    });
    events.close();
    assert.equal(up.provider.registrations, 1, 'dynamic client registration');

    const pending = await statusOf(t, 'guarded');
    assert.equal(pending.status, 'authenticating');
    assert.equal(pending.authorization_url, authorization_url);

    const back = await authorizeAt(authorization_url);
    usedRedirect = back;
    assert.ok(back.startsWith(redirect_uri), back);
    const page = await fetch(back);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Authorized/);
    await waitStatus(t, 'guarded', 'ready');
    const who = await callWhoami(t, 'guarded');
    assert.equal(who.isError, false);
    assert.ok(up.provider.clients.has(who.text), 'the call carried a token issued to the registered client');
    assert.deepEqual(up.provider.resources, [up.mcpUrl], 'the token was asked for this resource (RFC 8707)');
  });

  it('the same redirect again authorizes nothing and says it was used; an unknown state says so too', async () => {
    const exchanges = up.provider.exchanges;
    const used = await post(t, '/mcp/upstreams/oauth/callback', { url: usedRedirect });
    assert.equal(used.status, 410);
    assert.equal(used.json().code, 'gone');
    assert.match(used.json().error, /already completed/);
    assert.equal(up.provider.exchanges, exchanges, 'the code was not exchanged again');
    const unknown = await post(t, '/mcp/upstreams/oauth/callback', { url: 'http://127.0.0.1:1/callback?state=nonexistent&code=x' });
    assert.equal(unknown.status, 410);
    assert.match(unknown.json().error, /No authorization request with this state is pending/);
  });

  it('tokens are only in the credential store: here the owner-only vault (no keyring in this test), no other file, no log line', async () => {
    const tokens = [...up.provider.access.keys(), ...up.provider.refresh.keys()];
    assert.ok(tokens.length >= 2);
    const vault = join(dir, 'vault.json');
    assert.equal(statSync(vault).mode & 0o777, 0o600);
    assert.ok(
      tokens.some((token) => readFileSync(vault, 'utf8').includes(token)),
      'the vault holds them',
    );
    for (const { path, text } of allFiles(dir)) {
      if (path === vault) continue;
      for (const token of tokens) assert.ok(!text.includes(token), `${path} holds a token`);
    }
    for (const token of tokens) assert.ok(!t.stdout.includes(token) && !t.stderr.includes(token), 'a token in the log');
  });

  it('a restarted tuicd reconnects the authorized upstream with no new authorization', async () => {
    const authorizations = up.provider.authorizations;
    await t.stop();
    t = await Tuicd.start({ configDir: dir });
    await waitStatus(t, 'guarded', 'ready');
    assert.equal((await callWhoami(t, 'guarded')).isError, false);
    assert.equal(up.provider.authorizations, authorizations);
  });

  it("moving the upstream's URL forgets its OAuth tokens and registration: it asks for a new authorization", async () => {
    const base = (await t.socket('GET', '/mcp/upstreams')).json();
    const moved = structuredClone(base);
    moved.servers[0].transport.url = `${up.mcpUrl}?moved=1`;
    const saved = await t.socket('PUT', '/mcp/upstreams', JSON.stringify({ base, config: moved }), { 'content-type': 'application/json' });
    assert.equal(saved.status, 200, saved.text);
    await waitStatus(t, 'guarded', 'needs_auth');
    const vault = readFileSync(join(dir, 'vault.json'), 'utf8');
    for (const token of [...up.provider.access.keys(), ...up.provider.refresh.keys()]) assert.ok(!vault.includes(token), 'the old tokens are gone');
    assert.ok(!vault.includes('guarded/oauth-client'), 'the old registration is gone');
  });
});

describe('OAuth upstream authorization: denial, cancel, paste, concurrent flows, off-domain', () => {
  let up: OAuthUpstream;
  let offDomain: OAuthUpstream;
  let dir: string;
  let t: Tuicd;

  before(async () => {
    up = await OAuthUpstream.start();
    offDomain = await OAuthUpstream.start({ separateAs: true, asHost: 'localhost' });
    dir = mkdtempSync(join(tmpdir(), 'tuicd-oauth-'));
    writeUpstreams(dir, [httpServer('guarded', up.mcpUrl), httpServer('elsewhere', offDomain.mcpUrl)]);
    t = await Tuicd.start({ configDir: dir });
    await waitStatus(t, 'guarded', 'needs_auth');
  });
  after(async () => {
    await t?.stop();
    await up?.stop();
    await offDomain?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('denied at the authorization server: the page says so, the upstream is back in needs_auth with the reason', async () => {
    up.provider.consent = 'deny';
    try {
      const { authorization_url } = (await post(t, '/mcp/upstreams/oauth/start', { name: 'guarded' })).json();
      const page = await fetch(await authorizeAt(authorization_url));
      assert.equal(page.status, 403);
      assert.match(await page.text(), /denied/i);
      const row = await statusOf(t, 'guarded');
      assert.equal(row.status, 'needs_auth');
      assert.match(row.last_error ?? '', /denied/);
    } finally {
      up.provider.consent = 'approve';
    }
  });

  it('cancel restores the earlier status; the late redirect then authorizes nothing and says it was cancelled', async () => {
    const { authorization_url } = (await post(t, '/mcp/upstreams/oauth/start', { name: 'guarded' })).json();
    assert.equal((await statusOf(t, 'guarded')).status, 'authenticating');
    const cancelled = await post(t, '/mcp/upstreams/oauth/cancel', { name: 'guarded' });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal((await statusOf(t, 'guarded')).status, 'needs_auth');
    const page = await fetch(await authorizeAt(authorization_url));
    assert.equal(page.status, 410);
    assert.match(await page.text(), /cancelled/);
    assert.equal((await statusOf(t, 'guarded')).status, 'needs_auth');
    assert.equal((await post(t, '/mcp/upstreams/oauth/cancel', { name: 'guarded' })).status, 404, 'nothing left to cancel');
  });

  it('two flows at once share nothing; the second completes by a pasted redirect; the first is then told another one won', async () => {
    const first = (await post(t, '/mcp/upstreams/oauth/start', { name: 'guarded' })).json();
    const second = (await post(t, '/mcp/upstreams/oauth/start', { name: 'guarded' })).json();
    assert.notEqual(new URL(first.authorization_url).searchParams.get('state'), new URL(second.authorization_url).searchParams.get('state'));
    assert.notEqual(first.redirect_uri, second.redirect_uri, 'each flow has its own callback server');
    const pasted = await post(t, '/mcp/upstreams/oauth/callback', { url: await authorizeAt(second.authorization_url) });
    assert.equal(pasted.status, 200, pasted.text);
    assert.deepEqual(pasted.json(), { ok: true, upstream: 'guarded' });
    await waitStatus(t, 'guarded', 'ready');
    const late = await fetch(await authorizeAt(first.authorization_url));
    assert.equal(late.status, 410);
    assert.match(await late.text(), /Another authorization/);
    assert.equal((await callWhoami(t, 'guarded')).isError, false);
  });

  it('bad pastes are refused with a reason', async () => {
    const notUrl = await post(t, '/mcp/upstreams/oauth/callback', { url: 'not a url' });
    assert.equal(notUrl.status, 400);
    assert.equal(notUrl.json().field, 'url');
    const noState = await post(t, '/mcp/upstreams/oauth/callback', { url: 'http://127.0.0.1:9/callback?code=abc' });
    assert.equal(noState.status, 400);
    assert.equal((await post(t, '/mcp/upstreams/oauth/start', { name: 'nope' })).status, 404);
  });

  it('an authorization server on another domain is flagged, not refused', async () => {
    await waitStatus(t, 'elsewhere', 'needs_auth');
    const started = await post(t, '/mcp/upstreams/oauth/start', { name: 'elsewhere' });
    assert.equal(started.status, 200, started.text);
    const body = started.json();
    assert.equal(body.cross_domain_as, true);
    assert.equal(body.as_origin, offDomain.asOrigin);
    const page = await fetch(await authorizeAt(body.authorization_url));
    assert.equal(page.status, 200);
    await waitStatus(t, 'elsewhere', 'ready');
  });
});
