/**
 * Resources, resource templates, prompts and completion through the hub, end to end: a real tuicd
 * with server-everything over stdio (`everything`) and over Streamable HTTP (`web`) at once, the
 * SDK's Client on /mcp, and the same server-everything reached directly to compare with.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { EVERYTHING_JS, everythingStdio, httpServer, startEverythingHttp, writeUpstreams } from '../../helpers/upstreamServers.js';

const STATIC_DOC = 'demo://resource/static/document/architecture.md';

async function readyUpstreams(t: Tuicd, names: string[]): Promise<void> {
  await waitFor(
    async () => {
      const rows = (await t.socket('GET', '/mcp/upstream-status')).json<{ upstreams: Array<{ name: string; status: string }> }>().upstreams;
      return names.every((n) => rows.some((r) => r.name === n && r.status === 'ready'));
    },
    `${names.join(', ')} ready`,
    30_000,
  );
}

describe('resources, prompts and completion through the hub', () => {
  let dir: string;
  let t: Tuicd;
  let web: Awaited<ReturnType<typeof startEverythingHttp>>;
  let client: Client;
  let direct: Client;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-hub-primitives-'));
    web = await startEverythingHttp();
    writeUpstreams(dir, [everythingStdio('everything'), httpServer('web', web.url)]);
    t = await Tuicd.start({ configDir: dir, config: { services: { server: { enabled: true, port: 0 }, auth: { lan_auth_bypass: true } } } });
    await readyUpstreams(t, ['everything', 'web']);
    client = new Client({ name: 'hub-primitives-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${t.tcpPort}/mcp`)));
    direct = new Client({ name: 'direct', version: '1' });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_JS, 'stdio'], stderr: 'ignore' }));
  });

  after(async () => {
    await client?.close();
    await direct?.close();
    await t?.stop();
    await web?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('initialize offers what the upstreams can do: resources with subscribe, prompts, completions, logging', () => {
    const caps = client.getServerCapabilities()!;
    assert.deepEqual(caps.resources, { listChanged: true, subscribe: true });
    assert.deepEqual(caps.prompts, { listChanged: true });
    assert.deepEqual(caps.completions, {});
    assert.deepEqual(caps.logging, {});
    assert.deepEqual(caps.tools, { listChanged: true });
  });

  it('lists the resources of both upstreams, each URI namespaced and everything else as the upstream wrote it', async () => {
    const own = (await direct.listResources()).resources;
    const listed: Array<Record<string, unknown>> = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      listed.push(...page.resources);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    for (const upstream of ['everything', 'web']) {
      for (const resource of own) {
        const mirrored = listed.find((r) => r['uri'] === `tuic://${upstream}/${resource.uri}`);
        assert.ok(mirrored, `tuic://${upstream}/${resource.uri} listed`);
        assert.deepEqual({ ...mirrored, uri: resource.uri }, resource);
      }
    }
    assert.equal(listed.length, 2 * own.length);
  });

  it('reads a resource from the upstream its URI names, with the same contents as a direct read', async () => {
    const own = await direct.readResource({ uri: STATIC_DOC });
    for (const upstream of ['everything', 'web']) {
      const read = await client.readResource({ uri: `tuic://${upstream}/${STATIC_DOC}` });
      assert.equal(read.contents.length, own.contents.length);
      assert.deepEqual({ ...read.contents[0], uri: STATIC_DOC }, own.contents[0]);
      assert.equal(read.contents[0]!.uri, `tuic://${upstream}/${STATIC_DOC}`, 'contents name the resource as the client read it');
    }
  });

  it('lists resource templates namespaced, and a URI expanded from one reads through the hub', async () => {
    const templates = (await client.listResourceTemplates()).resourceTemplates;
    const text = templates.find((tpl) => tpl.uriTemplate === 'tuic://everything/demo://resource/dynamic/text/{resourceId}');
    assert.ok(text, JSON.stringify(templates.map((tpl) => tpl.uriTemplate)));
    const read = await client.readResource({ uri: 'tuic://everything/demo://resource/dynamic/text/7' });
    const own = await direct.readResource({ uri: 'demo://resource/dynamic/text/7' });
    // The resource is made per read and ends with the time it was made: the two reads may straddle a second.
    const untimed = (c: Record<string, unknown> | undefined) => ({ ...c, text: String(c?.['text']).replace(/created at .*$/, 'created at <time>') });
    assert.deepEqual(untimed({ ...read.contents[0], uri: 'demo://resource/dynamic/text/7' }), untimed(own.contents[0]));
    assert.match(String((read.contents[0] as Record<string, unknown>)['text']), /^Resource 7: This is a plaintext resource created at /);
  });

  it('a URI that is not the hub’s, or names no upstream, is "Resource not found" (-32002); nothing breaks', async () => {
    for (const uri of [STATIC_DOC, 'tuic://nosuch/demo://x', 'tuic://']) {
      await assert.rejects(
        () => client.readResource({ uri }),
        (err: unknown) => err instanceof McpError && (err.code === -32002 || err.code === -32602),
      );
    }
    assert.equal((await client.readResource({ uri: `tuic://web/${STATIC_DOC}` })).contents.length, 1);
  });

  it('lists prompts as <upstream>__<name> and gets one with arguments from its owner', async () => {
    const prompts = (await client.listPrompts()).prompts;
    const own = (await direct.listPrompts()).prompts;
    for (const prompt of own) {
      const mirrored = prompts.find((p) => p.name === `web__${prompt.name}`);
      assert.ok(mirrored, `web__${prompt.name}`);
      assert.deepEqual({ ...mirrored, name: prompt.name }, prompt);
    }
    const got = await client.getPrompt({ name: 'everything__args-prompt', arguments: { city: 'Lisbon', state: 'Lisboa' } });
    const ownGot = await direct.getPrompt({ name: 'args-prompt', arguments: { city: 'Lisbon', state: 'Lisboa' } });
    assert.deepEqual(got, ownGot);
    await assert.rejects(() => client.getPrompt({ name: 'args-prompt' }), /prompts are named/);
  });

  it('completes a prompt argument at its owner', async () => {
    const ref = { type: 'ref/prompt' as const, name: 'completable-prompt' };
    const own = await direct.complete({ ref, argument: { name: 'department', value: 'E' } });
    const completed = await client.complete({ ref: { ...ref, name: 'web__completable-prompt' }, argument: { name: 'department', value: 'E' } });
    assert.deepEqual(completed, own);
    assert.ok(completed.completion.values.length > 0);
  });

  it('list_changed for resources and prompts when an upstream goes (its entries leave the lists) and when it comes back', async () => {
    const resourcesChanged = new Promise<void>((resolve) => client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()));
    const promptsChanged = new Promise<void>((resolve) => client.setNotificationHandler(PromptListChangedNotificationSchema, () => resolve()));
    const current = (await t.socket('GET', '/mcp/upstreams')).json<{ servers: Array<Record<string, unknown>> }>();
    const saved = await t.socket(
      'PUT',
      '/mcp/upstreams',
      JSON.stringify({ base: current, config: { servers: current.servers.filter((s) => s['name'] !== 'web') } }),
      {
        'Content-Type': 'application/json',
      },
    );
    assert.equal(saved.status, 200, saved.text);
    await Promise.all([resourcesChanged, promptsChanged]);
    const resources = (await client.listResources()).resources;
    assert.ok(resources.length > 0);
    assert.ok(
      resources.every((r) => r.uri.startsWith('tuic://everything/')),
      resources.map((r) => r.uri).join(','),
    );
    assert.ok((await client.listPrompts()).prompts.every((p) => p.name.startsWith('everything__')));

    // And back: list_changed again once it is ready, its entries listed again.
    let changes = 0;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changes++);
    const now = (await t.socket('GET', '/mcp/upstreams')).json<{ servers: Array<Record<string, unknown>> }>();
    const restored = await t.socket('PUT', '/mcp/upstreams', JSON.stringify({ base: now, config: current }), { 'Content-Type': 'application/json' });
    assert.equal(restored.status, 200, restored.text);
    await waitFor(() => changes > 0, 'prompts/list_changed after the upstream came back', 30_000);
    await waitFor(async () => (await client.listPrompts()).prompts.some((p) => p.name === 'web__simple-prompt'), 'web’s prompts listed again', 30_000);
  });
});
