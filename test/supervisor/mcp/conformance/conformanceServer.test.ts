/**
 * Our conformance fixture server (test/fixtures/upstreams/conformanceServer.ts) on its own: the
 * whole conformance suite (0.1.16, `--suite all`) straight at its Streamable HTTP mode passes every
 * scenario, so a scenario failing through tuicd's hub (throughHub.test.ts) is the hub's doing; and its
 * stdio mode, the one the hub runs, serves the same names and delivers resource updates to subscribers.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { runConformance, verdict } from './thirdPartyCli.js';

const CONFORMANCE_SERVER_JS = new URL('../../../fixtures/upstreams/conformanceServer.js', import.meta.url).pathname;
/** Server scenarios in 0.1.16 (`conformance list --server`). */
const SCENARIO_COUNT = 32;

/** Starts the fixture's HTTP mode on a free port; resolves with its URL once it printed it. */
function startHttp(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CONFORMANCE_SERVER_JS, '--http', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${err}`)), 10_000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const url = /^(http:\/\/127\.0\.0\.1:\d+\/mcp)$/m.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ child, url });
      }
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}): ${err}`)));
  });
}

describe('conformance fixture server', () => {
  let http: { child: ChildProcess; url: string } | undefined;

  before(async () => {
    http = await startHttp();
  });
  after(async () => {
    if (http && http.child.exitCode === null) {
      const exited = new Promise((resolve) => http!.child.once('exit', resolve));
      http.child.kill('SIGTERM');
      await exited;
    }
  });

  it('the whole suite straight at its HTTP mode: every scenario passes', async () => {
    const run = await runConformance(http!.url, { suite: 'all' });
    assert.equal(run.checks.size, SCENARIO_COUNT, `scenarios run: ${[...run.checks.keys()].join(', ')}\n${run.stderr.slice(-800)}`);
    const failed = [...run.checks].filter(([, checks]) => !verdict(checks).passed).map(([name, checks]) => `${name}: ${verdict(checks).problems.join(' | ')}`);
    assert.deepEqual(failed, []);
    // SSE polling took its full path: primed stream closed mid-call, answer replayed on reconnection.
    const resumed = run.checks.get('server-sse-polling')!.find((c) => c.id === 'server-sse-disconnect-resume');
    assert.equal(resumed?.status, 'SUCCESS', JSON.stringify(resumed));
    process.stdout.write(`# conformance suite straight at the fixture: ${run.checks.size - failed.length}/${run.checks.size} scenarios pass\n`);
  });

  it('stdio mode: the suite names are served, and a subscriber hears the watched resource change', async () => {
    const client = new Client({ name: 'fixture-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CONFORMANCE_SERVER_JS, '--stdio'], stderr: 'pipe' }));
    try {
      assert.ok(client.getServerCapabilities()?.resources?.subscribe);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes('test_simple_text') && tools.includes('json_schema_2020_12_tool'), tools.join(','));
      const simple = await client.callTool({ name: 'test_simple_text', arguments: {} });
      assert.deepEqual(simple.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
      await client.subscribeResource({ uri: 'test://watched-resource' });
      await client.callTool({ name: 'update_watched_resource', arguments: {} });
      await client.unsubscribeResource({ uri: 'test://watched-resource' });
      await client.callTool({ name: 'update_watched_resource', arguments: {} });
      assert.deepEqual(updates, ['test://watched-resource']);
      const read = await client.readResource({ uri: 'test://watched-resource' });
      const [watched] = read.contents;
      assert.ok(watched && 'text' in watched);
      assert.match(watched.text, /version 2/);
    } finally {
      await client.close();
    }
  });
});
