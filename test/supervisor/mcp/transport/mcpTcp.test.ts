// /mcp on the authenticated TCP listener: Basic Auth first (HTTP layer), then DNS-rebinding
// protection — a foreign Host or Origin is refused with 403 and a JSON-RPC error body, names this
// machine answers to are served, and the unix socket (which no browser reaches) is never checked.
import assert from 'node:assert/strict';
import { hostname, networkInterfaces } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { hash } from '@node-rs/bcrypt';

import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { JSON_HEADERS, McpStream } from './mcpHttp.js';

const USER = 'mcp-user';
const PASSWORD = 'mcp password';
const AUTH = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tcp-client', version: '1' } },
});

describe('/mcp on TCP', () => {
  let t: Tuicd;
  before(async () => {
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({ config: { services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } } } });
  });
  after(() => t.stop());

  const post = (body: string, headers: Record<string, string>) => t.tcp('POST', '/mcp', body, { ...JSON_HEADERS, Authorization: AUTH, ...headers });

  it('needs Basic Auth', async () => {
    const r = await t.tcp('POST', '/mcp', PING, JSON_HEADERS);
    assert.equal(r.status, 401);
  });

  it('serves initialize and tools with credentials and a loopback Host', async () => {
    const init = await post(INITIALIZE, {});
    assert.equal(init.status, 200);
    assert.equal(init.json().result.serverInfo.name, 'tuicommander');
    const id = init.headers['mcp-session-id'] as string;
    const list = await post(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), { 'Mcp-Session-Id': id });
    assert.equal(list.status, 200);
    assert.ok(list.json().result.tools.length > 0);
  });

  it('refuses a foreign Host with 403 and a JSON-RPC error body (the conformance rebinding probe)', async () => {
    const r = await post(INITIALIZE, { Host: 'evil.example.com', Origin: 'http://evil.example.com' });
    assert.equal(r.status, 403);
    const body = r.json();
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32000);
    assert.match(body.error.message, /Host not allowed: "evil\.example\.com"/);
    assert.equal(body.error.data.header, 'Host');
    const withPort = await post(PING, { Host: `evil.example.com:${t.tcpPort}` });
    assert.equal(withPort.status, 403);
  });

  it('refuses a foreign Origin even with a good Host', async () => {
    for (const origin of ['http://evil.example.com', 'https://attacker.test:8443', 'null']) {
      const r = await post(PING, { Host: `127.0.0.1:${t.tcpPort}`, Origin: origin });
      assert.equal(r.status, 403, origin);
      assert.match(r.json().error.message, /Origin not allowed/);
    }
  });

  it('accepts loopback, this machine’s names and addresses, with their own origins; not other IP literals', async () => {
    const port = t.tcpPort!;
    const own = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((a) => a.family === 'IPv4' && !a.internal)?.address;
    const hosts = [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      `${hostname()}:${port}`,
      `${hostname()}.local:${port}`,
      'localhost',
      ...(own ? [`${own}:${port}`] : []),
    ];
    for (const host of hosts) {
      const r = await post(PING, { Host: host, Origin: `http://${host}` });
      assert.equal(r.status, 200, `${host}: ${r.text}`);
    }
    // Not this machine's: an IP literal is no pass (a literal Origin least of all: http://203.0.113.5 used to get through).
    assert.equal((await post(PING, { Host: `203.0.113.5:${port}` })).status, 403);
    assert.equal((await post(PING, { Host: `127.0.0.1:${port}`, Origin: 'http://203.0.113.5' })).status, 403);
    // The desktop WebView's origin has no business on the remote listener.
    assert.equal((await post(PING, { Origin: 'tauri://localhost' })).status, 403);
  });

  it('guards GET and DELETE /mcp too', async () => {
    const del = await t.tcp('DELETE', '/mcp', undefined, { Authorization: AUTH, Host: 'evil.example.com', 'Mcp-Session-Id': 'x' });
    assert.equal(del.status, 403);
    const stream = await McpStream.open({
      host: '127.0.0.1',
      port: t.tcpPort!,
      headers: { Authorization: AUTH, Host: 'rebound.example.net', 'Mcp-Session-Id': 'x' },
    });
    assert.equal(stream.status, 403);
    await stream.until(() => stream.ended, 'the refusal to end');
    const ok = await McpStream.open({ host: '127.0.0.1', port: t.tcpPort!, headers: { Authorization: AUTH, 'Mcp-Session-Id': 'tcp-stream' } });
    try {
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['content-type'], 'text/event-stream');
    } finally {
      ok.close();
    }
  });

  it('does not check Host on the unix socket', async () => {
    const r = await t.socket('POST', '/mcp', PING, { ...JSON_HEADERS, Host: 'evil.example.com', Origin: 'http://evil.example.com' });
    assert.equal(r.status, 200);
  });
});
