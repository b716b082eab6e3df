/**
 * The two OAuth paths the other suites do not take: the browser coming back to GET /oauth/callback
 * on tuicd's own TCP listener (no tuicd credential on that request: the flow's state is what
 * counts), and the expiry sweep (an injected clock) that drops a flow nobody finished, returns its
 * upstream to needs_auth, and lets the flow's loopback server explain a late redirect.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';

import type { UpstreamStatus } from '../../../shared/protocol/upstreamServer.js';
import { FLOW_TIMEOUT_MS, OAuthFlows } from '../../../supervisor/upstreams/oauth/oauthFlows.js';
import { OAuthStore } from '../../../supervisor/upstreams/oauth/oauthStore.js';
import type { UpstreamSecrets } from '../../../supervisor/upstreams/upstreamCredentials.js';
import { OAuthUpstream } from '../../fixtures/upstreams/oauthUpstream.js';
import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { httpServer, writeUpstreams } from '../../helpers/upstreamServers.js';

const USER = 'alice';
const PASSWORD = 'oauth listener pw';
const basic = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');

describe("OAuth: redirect 'listener' comes back to GET /oauth/callback over TCP", () => {
  let up: OAuthUpstream;
  let dir: string;
  let t: Tuicd;

  before(async () => {
    up = await OAuthUpstream.start();
    dir = mkdtempSync(join(tmpdir(), 'tuicd-oauth-tcp-'));
    writeUpstreams(dir, [httpServer('guarded', up.mcpUrl)]);
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      configDir: dir,
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } } },
    });
  });
  after(async () => {
    await t?.stop();
    await up?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const status = async () => ((await t.socket('GET', '/mcp/upstream-status')).json().upstreams as Array<{ name: string; status: string }>)[0]!.status;

  it('start over TCP names the listener as the redirect; the browser lands there without credentials and the upstream is ready', async () => {
    await waitFor(async () => (await status()) === 'needs_auth', 'needs_auth', 15_000);
    const body = JSON.stringify({ name: 'guarded', redirect: 'listener' });
    const started = await t.tcp('POST', '/mcp/upstreams/oauth/start', body, { Authorization: basic, 'Content-Type': 'application/json' });
    assert.equal(started.status, 200, started.text);
    assert.equal(started.json().redirect_uri, `http://127.0.0.1:${t.tcpPort}/oauth/callback`);
    const res = await fetch(started.json().authorization_url, { redirect: 'manual' });
    const back = res.headers.get('location')!;
    assert.ok(back.startsWith(`http://127.0.0.1:${t.tcpPort}/oauth/callback?`), back);
    const page = await fetch(back); // no Authorization: the state is the capability
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(await page.text(), /Authorized/);
    await waitFor(async () => (await status()) === 'ready', 'ready', 15_000);
    const replay = await fetch(back);
    assert.equal(replay.status, 410, 'the same redirect again authorizes nothing');
  });

  it("redirect 'listener' on the unix socket is refused (no browser can come back there)", async () => {
    const r = await t.socket('POST', '/mcp/upstreams/oauth/start', JSON.stringify({ name: 'guarded', redirect: 'listener' }), {
      'content-type': 'application/json',
    });
    assert.equal(r.status, 400);
    assert.equal(r.json().field, 'redirect');
  });

  it('an unknown state on GET /oauth/callback gets a page that says so', async () => {
    const page = await fetch(`http://127.0.0.1:${t.tcpPort}/oauth/callback?state=nope&code=x`);
    assert.equal(page.status, 410);
    assert.match(await page.text(), /No authorization request with this state is pending/);
  });
});

describe('OAuth: the expiry sweep (injected clock)', () => {
  let up: OAuthUpstream;
  let flows: OAuthFlows;
  let now = Date.now();
  const statuses: Array<{ name: string; status: UpstreamStatus; lastError: string | null }> = [];
  const secrets = new Map<string, string>();

  before(async () => {
    up = await OAuthUpstream.start();
    const store: UpstreamSecrets = {
      get: async (name) => secrets.get(name) ?? null,
      set: async (name, value) => void secrets.set(name, value),
      delete: async (name) => secrets.delete(name),
    };
    flows = new OAuthFlows({
      servers: async () => [{ id: 'g', name: 'guarded', transport: { type: 'http', url: up.mcpUrl }, enabled: true, timeout_secs: 30 } as never],
      store: new OAuthStore(() => store),
      hub: {
        status: async () => ({ status: 'needs_auth' as UpstreamStatus, lastError: null }),
        setAuthStatus: async (name, status, lastError) => void statuses.push({ name, status, lastError }),
        reconnect: async () => undefined,
      },
      onStart: () => undefined,
      log: () => undefined,
      now: () => now,
    });
  });
  after(async () => {
    flows?.dispose();
    await up?.stop();
  });

  it('a flow past 5 minutes is dropped, its upstream goes back to needs_auth, and the late redirect is told it expired', async () => {
    const started = await flows.start('guarded', { kind: 'loopback' });
    assert.deepEqual(statuses.at(-1), { name: 'guarded', status: 'authenticating', lastError: null });
    assert.deepEqual(await flows.sweep(), [], 'not yet');
    now += FLOW_TIMEOUT_MS - 1;
    assert.deepEqual(await flows.sweep(), []);
    now += 1;
    assert.deepEqual(await flows.sweep(), ['guarded']);
    assert.equal(statuses.at(-1)!.status, 'needs_auth');
    assert.match(statuses.at(-1)!.lastError ?? '', /not completed within 5 minutes/);
    assert.equal(flows.pendingUrl('guarded'), null);
    // The person comes back after all: the flow's own server is still up (grace) and explains.
    const res = await fetch(started.authorization_url, { redirect: 'manual' });
    const page = await fetch(res.headers.get('location')!);
    assert.equal(page.status, 410);
    assert.match(await page.text(), /expired/);
    assert.equal(secrets.has('guarded'), false, 'nothing was authorized');
  });
});

describe("OAuth: a flow's loopback server outlives it by the grace period, then closes", () => {
  it('answers a late redirect during the grace, and refuses connections after it', async (t) => {
    const up = await OAuthUpstream.start();
    const secrets = new Map<string, string>();
    const store: UpstreamSecrets = {
      get: async (name) => secrets.get(name) ?? null,
      set: async (name, value) => void secrets.set(name, value),
      delete: async (name) => secrets.delete(name),
    };
    let now = Date.now();
    const flows = new OAuthFlows({
      servers: async () => [{ id: 'g', name: 'guarded', transport: { type: 'http', url: up.mcpUrl }, enabled: true, timeout_secs: 30 } as never],
      store: new OAuthStore(() => store),
      hub: {
        status: async () => ({ status: 'needs_auth' as UpstreamStatus, lastError: null }),
        setAuthStatus: async () => undefined,
        reconnect: async () => undefined,
      },
      onStart: () => undefined,
      log: () => undefined,
      now: () => now,
      flowTimeoutMs: 1_000,
      callbackGraceMs: 1_500,
    });
    t.after(async () => {
      flows.dispose();
      await up.stop();
    });
    const started = await flows.start('guarded', { kind: 'loopback' });
    const back = (await fetch(started.authorization_url, { redirect: 'manual' })).headers.get('location')!;
    now += 1_000;
    await flows.sweep();
    const late = await fetch(back);
    assert.equal(late.status, 410, 'during the grace the late redirect gets its page');
    assert.match(await late.text(), /expired/);
    await new Promise((r) => setTimeout(r, 2_800));
    await assert.rejects(fetch(back), 'after the grace nothing listens');
  });
});
