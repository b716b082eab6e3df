/**
 * An SDK stdio client through tuic-bridge meets what upstreams send clients through the hub: a
 * sampling request from an upstream reaches it and its answer goes back, and progress
 * notifications arrive while the call runs (tuicd's answer becomes an event stream; the bridge
 * passes each message on as it comes).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { Tuicd } from '../helpers/tuicdProcess.js';
import { everythingStdio, stdioServer, writeUpstreams } from '../helpers/upstreamServers.js';
import { BRIDGE_JS, bridgeEnv, textOf } from './bridgeHarness.js';

const ASKING_JS = fileURLToPath(new URL('../fixtures/upstreams/askingServer.js', import.meta.url));

describe('tuic-bridge carries upstream requests and progress', () => {
  let dir: string;
  let t: Tuicd;
  let client: Client;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-bridge-hub-'));
    writeUpstreams(dir, [everythingStdio('everything'), stdioServer('ask', [ASKING_JS])]);
    t = await Tuicd.start({ configDir: dir });
    client = new Client({ name: 'bridge-hub-test', version: '1' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'bridged', role: 'assistant', content: { type: 'text', text: 'over stdio' } }));
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BRIDGE_JS], env: bridgeEnv(t), stderr: 'pipe' }));
    for (let i = 0; i < 600; i++) {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      if (names.includes('ask__sample') && names.includes('everything__echo')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  after(async () => {
    await client?.close();
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a sampling request from an upstream reaches the stdio client and its answer goes back', async () => {
    const result = await client.callTool({ name: 'ask__sample', arguments: { prompt: 'hi' } });
    assert.equal(textOf(result), 'sampled by bridged: over stdio');
  });

  it('progress notifications arrive during the call', async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 1, steps: 3 } }, undefined, {
      onprogress: (p) => void progress.push(p.progress),
    });
    assert.ok(!result.isError);
    assert.ok(progress.length >= 2, `progress: ${progress.join(',')}`);
  });
});
