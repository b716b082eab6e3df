/**
 * OAuth tokens after the authorization, through a real tuicd against a real authorization server
 * (test/fixtures/upstreams/oauthUpstream.ts): refreshed before expiry (60 s margin) once however
 * many calls find them expired together, rotated refresh tokens followed, a token the server stops
 * accepting recovered by one refresh on the 401, and a revoked grant taking the upstream to
 * needs_auth (not failed) with the reason, from which a new authorization brings it back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { OAuthUpstream } from '../../fixtures/upstreams/oauthUpstream.js';
import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { httpServer, writeUpstreams } from '../../helpers/upstreamServers.js';
import { rpc } from '../mcp/transport/mcpHttp.js';

/** tuicd refreshes a token this long before it expires. */
const MARGIN_S = 60;
/** Lifetime of the fixture's tokens: usable for this many seconds past the margin. */
const USABLE_S = 4;

const post = (t: Tuicd, path: string, body: unknown) => t.socket('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });

async function statusOf(t: Tuicd, name: string): Promise<{ status: string; last_error: string | null }> {
  const rows = (await t.socket('GET', '/mcp/upstream-status')).json().upstreams as Array<{ name: string; status: string; last_error: string | null }>;
  return rows.find((r) => r.name === name)!;
}

const waitStatus = (t: Tuicd, name: string, status: string) => waitFor(async () => (await statusOf(t, name)).status === status, `${name} ${status}`, 15_000);

async function call(t: Tuicd): Promise<{ isError: boolean; text: string }> {
  const answer = await rpc(t, 'tools/call', { name: 'guarded__whoami', arguments: {} });
  assert.equal(answer.status, 200, answer.text);
  const result = answer.json().result;
  return { isError: result.isError === true, text: result.content[0].text };
}

async function authorize(t: Tuicd): Promise<void> {
  const { authorization_url } = (await post(t, '/mcp/upstreams/oauth/start', { name: 'guarded' })).json();
  const res = await fetch(authorization_url, { redirect: 'manual' });
  const page = await fetch(res.headers.get('location')!);
  assert.equal(page.status, 200, await page.text());
  await waitStatus(t, 'guarded', 'ready');
}

describe('OAuth tokens: refresh, rotation, recovery, revocation', () => {
  let up: OAuthUpstream;
  let dir: string;
  let t: Tuicd;

  before(async () => {
    up = await OAuthUpstream.start();
    up.provider.accessTtlS = MARGIN_S + USABLE_S;
    dir = mkdtempSync(join(tmpdir(), 'tuicd-oauth-refresh-'));
    writeUpstreams(dir, [httpServer('guarded', up.mcpUrl)]);
    t = await Tuicd.start({ configDir: dir });
    await waitStatus(t, 'guarded', 'needs_auth');
    await authorize(t);
  });
  after(async () => {
    await t?.stop();
    await up?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('20 calls that find the token expired together cause exactly one refresh, and all succeed', async () => {
    assert.equal((await call(t)).isError, false);
    assert.equal(up.provider.refreshes, 0, 'a fresh token is not refreshed');
    await sleep((USABLE_S + 1) * 1000);
    const results = await Promise.all(Array.from({ length: 20 }, () => call(t)));
    assert.deepEqual(
      results.filter((r) => r.isError).map((r) => r.text),
      [],
    );
    assert.equal(up.provider.refreshes, 1);
  });

  it('a rotated refresh token is followed: the next expiry refreshes with the new one', async () => {
    await sleep((USABLE_S + 1) * 1000);
    assert.equal((await call(t)).isError, false);
    assert.equal(up.provider.refreshes, 2, 'the second refresh used the rotated token (the old one no longer works)');
  });

  it('an access token the server stops accepting before its expiry: one refresh on the 401, the call succeeds', async () => {
    up.provider.accessTtlS = 3600;
    await sleep((USABLE_S + 1) * 1000); // the current short-lived token is refreshed into a long one
    assert.equal((await call(t)).isError, false);
    const before = up.provider.refreshes;
    up.provider.access.clear(); // the server forgets every access token; refresh tokens still work
    const result = await call(t);
    assert.equal(result.isError, false, result.text);
    assert.equal(up.provider.refreshes, before + 1);
    assert.equal((await statusOf(t, 'guarded')).status, 'ready');
  });

  it('a revoked grant: needs_auth (not failed) with the reason; a new authorization brings the upstream back', async () => {
    up.provider.revokeAll();
    const result = await call(t);
    assert.equal(result.isError, true);
    await waitStatus(t, 'guarded', 'needs_auth');
    assert.match((await statusOf(t, 'guarded')).last_error ?? '', /refresh was refused/);
    const again = await call(t);
    assert.match(again.text, /-32001/, 'calls are refused with the authorize hint, not sent');
    await authorize(t);
    assert.equal((await call(t)).isError, false);
  });

  it('a step-up (403 insufficient_scope): needs_auth, and the next authorization asks for the larger scope; then the call works', async () => {
    up.provider.accessTtlS = 3600;
    up.callScope = 'mcp:write';
    try {
      const refused = await call(t);
      assert.equal(refused.isError, true);
      await waitStatus(t, 'guarded', 'needs_auth');
      const row = (await t.socket('GET', '/mcp/upstream-status')).json().upstreams[0];
      assert.match(row.last_error, /insufficient_scope/);
      assert.match(row.auth_scope, /mcp:write/);
      const { authorization_url } = (await post(t, '/mcp/upstreams/oauth/start', { name: 'guarded' })).json();
      assert.ok((new URL(authorization_url).searchParams.get('scope') ?? '').split(' ').includes('mcp:write'), authorization_url);
      const res = await fetch(authorization_url, { redirect: 'manual' });
      assert.equal((await fetch(res.headers.get('location')!)).status, 200);
      await waitStatus(t, 'guarded', 'ready');
      assert.equal((await call(t)).isError, false);
    } finally {
      up.callScope = null;
    }
  });
});
