/**
 * tuicd stopped under a connected bridge, then started again on the same socket: the client hears
 * tools/list_changed each way, gets the offline answers in between, and after the restart works
 * without re-initializing: the bridge replayed its initialize, so a Grok client keeps its collapsed
 * surface (search_tools, get_tool_schema, call_tool).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { Tuicd } from '../helpers/tuicdProcess.js';
import { BRIDGE_JS, bridgeEnv, textOf } from './bridgeHarness.js';

const COLLAPSED = ['call_tool', 'get_tool_schema', 'search_tools'];

describe('tuic-bridge across a tuicd restart', { timeout: 120_000 }, () => {
  const configDir = mkdtempSync(join(tmpdir(), 'tuicd-bridge-restart-'));
  let t: Tuicd | undefined;
  let client: Client;
  const changes: number[] = [];
  const stderr: string[] = [];
  const clientErrors: string[] = [];

  before(async () => {
    t = await Tuicd.start({ configDir });
    const transport = new StdioClientTransport({ command: process.execPath, args: [BRIDGE_JS], env: bridgeEnv(t), stderr: 'pipe' });
    transport.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
    // A Grok client: tuicd serves it the collapsed meta-tool surface.
    client = new Client({ name: 'grok-shell-cli', version: '1.0.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes.push(Date.now());
    });
    client.onerror = (err) => clientErrors.push(err.message);
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await t?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  const toolNames = async () =>
    (await client.listTools()).tools
      .map((tool) => tool.name)
      .filter((n) => n !== 'progress')
      .sort();

  async function waitForChange(count: number, what: string): Promise<void> {
    for (let i = 0; changes.length < count; i++) {
      assert.ok(i < 300, `no tools/list_changed ${what} (stderr: ${stderr.join('')})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('serves the collapsed surface to a Grok client', async () => {
    assert.deepEqual(await toolNames(), COLLAPSED);
  });

  it('tuicd stops: list_changed, then offline answers', async () => {
    const before = changes.length;
    await t!.stop();
    t = undefined;
    await waitForChange(before + 1, 'after tuicd stopped');
    assert.deepEqual((await client.listTools()).tools, []);
    const call = await client.callTool({ name: 'session', arguments: { action: 'list' } });
    assert.equal(call.isError, true);
    assert.match(textOf(call), /^TUICommander MCP is unavailable\. tuicd is not running/);
  });

  it('tuicd starts again: the bridge reconnects by itself, list_changed, the collapsed surface is back, calls work', async () => {
    const before = changes.length;
    t = await Tuicd.start({ configDir });
    await waitForChange(before + 1, 'after tuicd came back');
    assert.deepEqual(await toolNames(), COLLAPSED, 'the replayed initialize named the Grok client again');
    const listed = await client.callTool({ name: 'call_tool', arguments: { tool_name: 'session', arguments: { action: 'list' } } });
    assert.equal(listed.isError, false, textOf(listed));
    assert.ok(Array.isArray(JSON.parse(textOf(listed))));
    // A second initialize answer (the replay's) would reach the client as a response to an unknown id.
    assert.deepEqual(clientErrors, []);
  });

  it("tuicd restarted within the health loop's 9 s: the event stream notices, the bridge re-initializes (Grok kept) and tells the client", async () => {
    const before = changes.length;
    await t!.stop();
    t = await Tuicd.start({ configDir });
    await waitForChange(before + 1, 'after a quick restart');
    // Without the re-initialize, tuicd would have recreated the session with no client name: the classic surface.
    assert.deepEqual(await toolNames(), COLLAPSED);
    assert.deepEqual(clientErrors, []);
  });
});
