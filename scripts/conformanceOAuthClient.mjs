#!/usr/bin/env node
// The hub's OAuth client as an MCP conformance "client": `conformance client --suite auth
// --command "node scripts/conformanceOAuthClient.mjs"` appends the scenario's server URL. This
// starts a built tuicd (dist/) in a temporary config dir with that server as its one upstream,
// authorizes it the way a person would (POST /mcp/upstreams/oauth/start, then a browser that
// follows the authorization server's redirects back to the flow's callback), waits for the
// upstream to be ready, lists and calls its tools through tuicd's /mcp, and stops tuicd.
// MCP_CONFORMANCE_CONTEXT may carry a pre-registered client (client_id, client_secret).
// Needs Node 22+ (the conformance package does) and `npm run build`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../dist/supervisor/main.js', import.meta.url));
const serverUrl = process.argv[2];
if (!serverUrl) {
  console.error('usage: conformanceOAuthClient.mjs <server-url>');
  process.exit(64);
}
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const log = (msg) => console.error(`[hub-oauth-client] ${msg}`);

const dir = mkdtempSync(join(tmpdir(), 'tuicd-conformance-'));
const auth = context.client_id
  ? { type: 'oauth2', client_id: context.client_id, ...(context.client_secret ? { client_secret: context.client_secret } : {}), scopes: [] }
  : undefined;
writeFileSync(
  join(dir, 'mcp-upstreams.json'),
  JSON.stringify({
    servers: [
      {
        id: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
        name: 'conformance',
        transport: { type: 'http', url: serverUrl },
        enabled: true,
        timeout_secs: 30,
        ...(auth ? { auth } : {}),
      },
    ],
  }),
);

const tuicd = spawn(process.execPath, [MAIN, '--config-dir', dir], {
  env: { ...process.env, HOME: dir, TUIC_CREDENTIAL_STORE: 'file', TUIC_BIND_HOST: '127.0.0.1', TUIC_LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
tuicd.stdout.setEncoding('utf8').on('data', (d) => (out += d));

function call(socketPath, method, path, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { socketPath, method, path, headers: payload ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  let socket;
  for (let i = 0; i < 300 && !socket; i++) {
    socket = /serving on unix socket (\S+)/.exec(out)?.[1];
    if (!socket) await sleep(50);
  }
  if (!socket) throw new Error(`tuicd did not start: ${out}`);
  const status = async () => JSON.parse((await call(socket, 'GET', '/mcp/upstream-status')).text).upstreams[0];
  let row = await status();
  for (let i = 0; i < 200 && row.status === 'connecting'; i++) row = (await sleep(50), await status());
  log(`upstream status ${row.status}${row.last_error ? ` (${row.last_error})` : ''}`);
  // The person: starts an authorization and lets the browser follow the authorization server back.
  const authorize = async () => {
    const started = await call(socket, 'POST', '/mcp/upstreams/oauth/start', { name: 'conformance' });
    if (started.status !== 200) throw new Error(`oauth/start: ${started.status} ${started.text}`);
    const page = await fetch(JSON.parse(started.text).authorization_url, { redirect: 'follow' });
    log(`callback page: HTTP ${page.status}`);
    for (let i = 0; i < 200 && row.status !== 'ready'; i++) row = (await sleep(50), await status());
    log(`upstream status ${row.status}${row.last_error ? ` (${row.last_error})` : ''}`);
  };
  if (row.status === 'needs_auth') await authorize();
  const rpc = (id, method, params) => call(socket, 'POST', '/mcp', { jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
  const listed = JSON.parse((await rpc(1, 'tools/list')).text);
  const tools = (listed.result?.tools ?? []).filter((t) => t.name.startsWith('conformance__'));
  log(`tools: ${tools.map((t) => t.name).join(', ') || '(none)'}`);
  for (const tool of tools.slice(0, 1)) {
    let called = await rpc(2, 'tools/call', { name: tool.name, arguments: {} });
    log(`tools/call ${tool.name}: ${called.text.slice(0, 200)}`);
    row = await status();
    if (row.status === 'needs_auth') {
      // A step-up (403 insufficient_scope): authorize again, then retry the call once.
      await authorize();
      called = await rpc(3, 'tools/call', { name: tool.name, arguments: {} });
      log(`tools/call ${tool.name} again: ${called.text.slice(0, 200)}`);
    }
  }
  return row.status === 'ready' ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  log(String(err?.stack ?? err));
}
tuicd.kill('SIGTERM');
await new Promise((r) => tuicd.once('exit', r));
rmSync(dir, { recursive: true, force: true });
process.exit(code);
