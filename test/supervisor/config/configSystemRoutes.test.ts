/**
 * Config and system routes on a real tuicd with its TCP listener and auth on: the session token
 * handed to a password-authenticated caller, rotate-token logging every device out (their cookie and
 * token link stop working, their open event, MCP (GET, and a POST answered as a stream) and terminal
 * streams end; the password and the new
 * token work), GET /config/defaults,
 * GET|PUT /config/notifications, the system addresses and home, and POST /mcp/suspend-response.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';

import { removeDir } from '../../helpers/removeDir.js';
import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { everythingStdio, writeUpstreams } from '../../helpers/upstreamServers.js';
import { WsViewer } from '../../helpers/wsViewer.js';

const USER = 'alice';
const PASSWORD = 'correct horse';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const FIRST_TOKEN = 'first-token-0123456789abcdefghijklmnop';
const JSON_HEADERS = { 'content-type': 'application/json' };

describe('config and system routes', { timeout: 60_000 }, () => {
  let t: Tuicd;
  let dir: string;
  before(async () => {
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    dir = mkdtempSync(join(tmpdir(), 'tuicd-config-routes-'));
    // An upstream with a long-running tool that reports progress: its call is answered as a stream.
    writeUpstreams(dir, [everythingStdio('everything')]);
    t = await Tuicd.start({
      configDir: dir,
      config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash, session_token: FIRST_TOKEN } } },
    });
  });
  after(async () => {
    await t?.stop();
    if (dir) removeDir(dir);
  });

  it('rotate-token logs every device out: the old cookie and token link stop working, the password and the new token work', async () => {
    // A phone logged in through the QR code's token link: it got the cookie.
    const viaLink = await t.tcp('GET', `/stats?token=${FIRST_TOKEN}`);
    assert.equal(viaLink.status, 200, viaLink.text);
    const cookie = String(viaLink.headers['set-cookie']).split(';')[0]!;
    assert.equal(cookie, `tui-session=${FIRST_TOKEN}`);
    assert.equal((await t.tcp('GET', '/stats', undefined, { Cookie: cookie })).status, 200);

    // The token goes to a password holder and to the socket, not to a cookie holder.
    const byPassword = await t.tcp('GET', '/api/auth/session-token', undefined, { Authorization: BASIC });
    assert.deepEqual(byPassword.json(), { token: FIRST_TOKEN });
    assert.deepEqual((await t.socket('GET', '/api/auth/session-token')).json(), { token: FIRST_TOKEN });
    const byCookie = await t.tcp('GET', '/api/auth/session-token', undefined, { Cookie: cookie });
    assert.equal(byCookie.status, 403, byCookie.text);
    // The cookie lets the request in before Basic is looked at: a made-up Basic header beside it gets nothing.
    const cookiePlusBasic = await t.tcp('GET', '/api/auth/session-token', undefined, { Cookie: cookie, Authorization: 'Basic bm9ib2R5Om5vdGhpbmc=' });
    assert.equal(cookiePlusBasic.status, 403, cookiePlusBasic.text);
    assert.equal((await t.tcp('GET', '/api/auth/session-token')).status, 401);

    // Open streams: the event stream and a terminal viewer by cookie, an event stream by password.
    const tcpOpts = (headers: Record<string, string>) => ({ host: '127.0.0.1', port: t.tcpPort!, path: '/events', headers });
    const sseByCookie = await SseClient.open(tcpOpts({ Cookie: cookie }));
    const sseByPassword = await SseClient.open(tcpOpts({ Authorization: BASIC }));
    assert.deepEqual([sseByCookie.status, sseByPassword.status], [200, 200]);
    const session = (await t.socket('POST', '/sessions', JSON.stringify({ shell: '/bin/sh' }), JSON_HEADERS)).json().session_id as string;
    const viewer = await WsViewer.open(`ws://127.0.0.1:${t.tcpPort}/sessions/${session}/stream`, { headers: { Cookie: cookie } });
    let closeCode = 0;
    viewer.ws.on('close', (code) => (closeCode = code));
    // An MCP client's server-to-client stream, by cookie.
    const init = await t.tcp(
      'POST',
      '/mcp',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'phone', version: '1' } },
      }),
      { ...JSON_HEADERS, Accept: 'application/json, text/event-stream', Cookie: cookie },
    );
    assert.equal(init.status, 200, init.text);
    const mcpSession = String(init.headers['mcp-session-id']);
    const mcpByCookie = await SseClient.open({ ...tcpOpts({ Cookie: cookie, 'Mcp-Session-Id': mcpSession, Accept: 'text/event-stream' }), path: '/mcp' });
    assert.equal(mcpByCookie.status, 200);
    // A tool call by cookie whose answer became a stream (progress before the answer), held open by a long operation.
    const mcpHeaders = { ...JSON_HEADERS, Accept: 'application/json, text/event-stream', Cookie: cookie, 'Mcp-Session-Id': mcpSession };
    const LONG_TOOL = 'everything__trigger-long-running-operation';
    for (let i = 0; i < 300; i++) {
      const list = await t.tcp('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'tools/list' }), mcpHeaders);
      if (list.text.includes(LONG_TOOL)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: LONG_TOOL, arguments: { duration: 120, steps: 240 }, _meta: { progressToken: 7 } },
    });
    const callByCookie = await SseClient.open({ ...tcpOpts(mcpHeaders), path: '/mcp', method: 'POST' }, undefined, call);
    assert.equal(callByCookie.status, 200);
    assert.match(String(callByCookie.headers['content-type']), /text\/event-stream/);
    await callByCookie.until(() => callByCookie.raw.includes('notifications/progress'), 'the first progress of the call', 15_000);

    const rotated = await t.tcp('POST', '/api/auth/rotate-token', undefined, { Cookie: cookie });
    assert.equal(rotated.status, 200, rotated.text);
    assert.deepEqual(rotated.json(), { ok: true });

    await sseByCookie.until(() => sseByCookie.ended, 'the cookie’s event stream ended');
    await viewer.waitFor(() => viewer.closed, 5000, 'the cookie’s viewer closed');
    assert.equal(closeCode, 4001);
    await mcpByCookie.until(() => mcpByCookie.ended, 'the cookie’s MCP stream ended');
    await callByCookie.until(() => callByCookie.ended, 'the cookie’s streamed tool call ended');
    assert.ok(!callByCookie.events.some((e) => (JSON.parse(e.data) as { id?: number }).id === 2), 'ended before its answer');
    assert.equal(sseByPassword.ended, false, 'a stream the password let in stays');
    sseByPassword.close();
    await t.socket('DELETE', `/sessions/${session}`);

    assert.equal((await t.tcp('GET', '/stats', undefined, { Cookie: cookie })).status, 401, 'the old cookie is refused');
    assert.equal((await t.tcp('GET', `/stats?token=${FIRST_TOKEN}`)).status, 401, 'the old token link is refused');
    const next = (await t.tcp('GET', '/api/auth/session-token', undefined, { Authorization: BASIC })).json().token as string;
    assert.notEqual(next, FIRST_TOKEN);
    assert.ok(next.length >= 40, next);
    assert.equal((await t.tcp('GET', `/stats?token=${next}`)).status, 200, 'the new token works');
    assert.equal((await t.tcp('GET', '/stats', undefined, { Cookie: `tui-session=${next}` })).status, 200);
    // Kept in the credential store, never written to config.json.
    assert.ok(!readFileSync(join(t.configDir, 'config.json'), 'utf8').includes(next));
    assert.equal((await t.socket('GET', '/config')).json().services.auth.session_token_exists, true);
  });

  it('GET /config/defaults: every settings file before it is changed, secrets as flags', async () => {
    const d = (await t.socket('GET', '/config/defaults')).json();
    assert.deepEqual(Object.keys(d).sort(), ['agent_settings', 'agents', 'app', 'github_accounts', 'notifications', 'repo_defaults']);
    assert.equal(d.app.services.server.enabled, false, 'the default, not this server’s config');
    assert.equal(d.app.standby_timeout_minutes, 5);
    assert.equal(d.app.services.auth.session_token, undefined);
    assert.equal(d.app.services.auth.session_token_exists, false);
    assert.deepEqual(d.agent_settings, { intent_tab_title: null, suggest_followups: null, progress_tracking: null, run_configs: [] });
    assert.deepEqual([d.notifications, d.repo_defaults, d.agents, d.github_accounts], [{}, {}, { agents: {} }, []]);
  });

  it('GET|PUT /config/notifications keeps a client-owned JSON object in notifications.json', async () => {
    assert.deepEqual((await t.socket('GET', '/config/notifications')).json(), {});
    const settings = { enabled: true, sound: 'chime', volume: 0.4, per_repo: { '/r': { muted: true } } };
    const put = await t.socket('PUT', '/config/notifications', JSON.stringify(settings), JSON_HEADERS);
    assert.deepEqual(put.json(), { ok: true });
    assert.deepEqual((await t.socket('GET', '/config/notifications')).json(), settings);
    assert.deepEqual(JSON.parse(readFileSync(join(t.configDir, 'notifications.json'), 'utf8')), settings);
    assert.equal((await t.socket('PUT', '/config/notifications', '[1,2]', JSON_HEADERS)).status, 400);
    assert.equal((await t.socket('PUT', '/config/notifications', '{"a":', JSON_HEADERS)).status, 400);
    assert.equal((await t.tcp('PUT', '/config/notifications', '{}', JSON_HEADERS)).status, 401, 'TCP needs credentials');
  });

  it('GET /system/local-ips, local-ip and home-directory', async () => {
    const ips = (await t.socket('GET', '/system/local-ips')).json() as Array<{ interface: string; address: string; family: string }>;
    const expected = Object.values(networkInterfaces())
      .flat()
      .filter((i) => i && !i.internal && !(i.family === 'IPv6' && /^fe80:/i.test(i.address)))
      .map((i) => i!.address)
      .sort();
    assert.deepEqual(ips.map((i) => i.address).sort(), expected);
    assert.ok(!ips.some((i) => i.address === '127.0.0.1'), 'loopback left out');
    const primary = (await t.socket('GET', '/system/local-ip')).json();
    assert.equal(primary, ips[0]?.address ?? null);
    const home = (await t.socket('GET', '/system/home-directory')).json();
    assert.equal(home, t.home);
    assert.ok(existsSync(home));
  });

  it('POST /mcp/suspend-response takes the documented body; nothing is pending, so it is ignored', async () => {
    const r = await t.socket('POST', '/mcp/suspend-response', JSON.stringify({ request_id: 'r-1', ok: false, reason: 'user said no' }), JSON_HEADERS);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().ok, true);
    assert.equal(r.json().ignored, 'unknown');
    for (const bad of [{}, { request_id: 'r-1' }, { request_id: '', ok: true }, { request_id: 'r', ok: 'yes' }]) {
      assert.equal((await t.socket('POST', '/mcp/suspend-response', JSON.stringify(bad), JSON_HEADERS)).status, 400, JSON.stringify(bad));
    }
  });
});
