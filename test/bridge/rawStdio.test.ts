/**
 * The bridge's stdio as a client sees it, line by line: started before tuicd (local initialize,
 * offline answers, then tuicd appears), a line that is not JSON, a socket that answers HTTP but has
 * no /mcp, and stdin closing while a call is in flight.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { Tuicd } from '../helpers/tuicdProcess.js';
import { BRIDGE_JS } from './bridgeHarness.js';

const INIT =
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}';

class RawBridge {
  readonly lines: Array<Record<string, unknown>> = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private pending = '';
  readonly child: ChildProcessWithoutNullStreams;

  constructor(env: Record<string, string>) {
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'TUIC_SESSION') base[k] = v;
    this.child = spawn(process.execPath, [BRIDGE_JS], { env: { ...base, ...env } });
    this.child.stdout.setEncoding('utf8').on('data', (d: string) => {
      this.pending += d;
      let nl: number;
      while ((nl = this.pending.indexOf('\n')) >= 0) {
        this.lines.push(JSON.parse(this.pending.slice(0, nl)) as Record<string, unknown>);
        this.pending = this.pending.slice(nl + 1);
      }
    });
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  async waitFor(pred: (m: Record<string, unknown>) => boolean, what: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find(pred);
      if (found) return found;
      assert.ok(Date.now() < deadline, `no ${what}; got ${JSON.stringify(this.lines)}; stderr ${this.stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

const byId = (id: number) => (m: Record<string, unknown>) => m['id'] === id;

describe('tuic-bridge stdio, raw', { timeout: 60_000 }, () => {
  const dirs: string[] = [];
  const stops: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const stop of stops) await stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('started before tuicd: initialize answered locally, offline answers, then tuicd appears and the bridge connects', async () => {
    const configDir = mkdtempSync(join(tmpdir(), 'tuicd-bridge-early-'));
    dirs.push(configDir);
    const bridge = new RawBridge({ TUIC_CONFIG_DIR: configDir });
    stops.push(async () => bridge.child.kill());
    bridge.send(INIT);
    const init = await bridge.waitFor(byId(1), 'initialize answer');
    assert.deepEqual(init['result'], {
      protocolVersion: '2025-11-25',
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: 'tuicommander', version: (init['result'] as { serverInfo: { version: string } }).serverInfo.version },
    });
    bridge.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    bridge.send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
    bridge.send('{"jsonrpc":"2.0","id":3,"method":"resources/list"}');
    assert.deepEqual((await bridge.waitFor(byId(2), 'offline tools/list'))['result'], { tools: [] });
    const other = await bridge.waitFor(byId(3), 'offline resources/list');
    assert.equal((other['error'] as { code: number }).code, -32601);

    const t = await Tuicd.start({ configDir });
    stops.push(() => t.stop());
    await bridge.waitFor((m) => m['method'] === 'notifications/tools/list_changed', 'list_changed once tuicd is up', 15_000);
    bridge.send('{"jsonrpc":"2.0","id":4,"method":"tools/list"}');
    const tools = ((await bridge.waitFor(byId(4), 'tools/list from tuicd'))['result'] as { tools: Array<{ name: string }> }).tools;
    assert.ok(tools.some((tool) => tool.name === 'session'));
  });

  it('a line that is not JSON gets a parse error and the bridge goes on', async () => {
    const bridge = new RawBridge({ TUIC_SOCKET: join(tmpdir(), 'tuicd-no-such.sock') });
    stops.push(async () => bridge.child.kill());
    bridge.send('{"jsonrpc":"2.0","id":1,"method":');
    const bad = await bridge.waitFor((m) => m['id'] === null, 'parse error');
    assert.equal((bad['error'] as { code: number }).code, -32700);
    bridge.send(INIT);
    await bridge.waitFor(byId(1), 'initialize after the bad line');
  });

  it('a socket that answers HTTP without /mcp: "MCP endpoint unavailable", not "not running"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tuicd-bridge-404-'));
    dirs.push(dir);
    const socketPath = join(dir, 'mcp.sock');
    const server = createServer((_req, res) => res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not here'));
    await new Promise<void>((r) => server.listen(socketPath, r));
    stops.push(() => new Promise((r) => server.close(r)));
    const bridge = new RawBridge({ TUIC_SOCKET: socketPath });
    stops.push(async () => bridge.child.kill());
    bridge.send(INIT);
    await bridge.waitFor(byId(1), 'initialize answer');
    bridge.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session","arguments":{"action":"list"}}}');
    const call = await bridge.waitFor(byId(2), 'tools/call answer');
    const text = (call['result'] as { content: Array<{ text: string }> }).content[0]!.text;
    assert.match(text, /MCP endpoint is unavailable \(HTTP 404\)/);
    assert.doesNotMatch(text, /not running/);
  });

  it('stdin closes with a call in flight: its answer is written, then the bridge exits 0', async () => {
    const configDir = mkdtempSync(join(tmpdir(), 'tuicd-bridge-eof-'));
    dirs.push(configDir);
    const t = await Tuicd.start({ configDir });
    stops.push(() => t.stop());
    const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: tmpdir(), shell: '/bin/sh', args: ['-c', 'sleep 30'] }));
    const id = created.json().session_id as string;
    const bridge = new RawBridge({ TUIC_SOCKET: t.socketPath });
    bridge.send(INIT);
    await bridge.waitFor(byId(1), 'initialize answer');
    bridge.send(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session","arguments":{"action":"wait","session_id":"${id}","until":"exited","timeout_ms":1500}}}`,
    );
    bridge.child.stdin.end();
    assert.equal(await bridge.exited, 0);
    const answer = bridge.lines.find(byId(2));
    assert.ok(answer, `the in-flight answer was written before exit: ${JSON.stringify(bridge.lines)}`);
    assert.match(JSON.stringify(answer), /timed_out/);
  });
});
