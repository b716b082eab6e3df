/**
 * What an upstream sends a client through the hub, end to end: its requests (sampling, form and URL
 * elicitation, roots) reach the client that called and the answers go back; progress, log messages
 * and resource updates reach the clients they are for and no other; a cancelled call stops upstream
 * and leaves it usable. A real tuicd with server-everything and the asking fixture over stdio, and
 * the asking fixture over Streamable HTTP; two SDK Clients on /mcp with different capabilities, roots
 * and log levels.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';

import { waitFor } from '../../helpers/poll.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { everythingStdio, httpServer, stdioServer, writeUpstreams } from '../../helpers/upstreamServers.js';

const ASKING_JS = fileURLToPath(new URL('../../fixtures/upstreams/askingServer.js', import.meta.url));
const WATCHED = 'tuic://everything/demo://resource/static/document/architecture.md';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function textOf(result: unknown): string {
  return ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n');
}

/** The asking fixture in its Streamable HTTP mode; resolves with its URL once it listens. */
async function startAskingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [ASKING_JS, '--http', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /http:\/\/\S+\/mcp/.exec(out);
      if (m) resolve(m[0]);
    });
    child.once('exit', (code) => reject(new Error(`the asking fixture exited (${code}) before listening`)));
  });
  return { url, child };
}

describe('upstream requests and notifications reach the right client through the hub', () => {
  let dir: string;
  let t: Tuicd;
  let askWeb: { url: string; child: ChildProcess };
  /** Samples, elicits (form and URL), has roots file:///a, logs at debug. */
  let a: Client;
  /** Only roots (file:///b), logs at error. */
  let b: Client;
  const logsA: LoggingMessageNotification['params'][] = [];
  const logsB: LoggingMessageNotification['params'][] = [];
  const updatesA: string[] = [];
  const updatesB: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-hub-asks-'));
    askWeb = await startAskingHttp();
    writeUpstreams(dir, [everythingStdio('everything'), stdioServer('ask', [ASKING_JS]), httpServer('askweb', askWeb.url)]);
    t = await Tuicd.start({ configDir: dir, config: { services: { server: { enabled: true, port: 0 }, auth: { lan_auth_bypass: true } } } });
    const url = new URL(`http://127.0.0.1:${t.tcpPort}/mcp`);
    a = new Client({ name: 'client-a', version: '1' }, { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } });
    a.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'model-a', role: 'assistant', content: { type: 'text', text: 'from A' } }));
    a.setRequestHandler(ElicitRequestSchema, async (request) =>
      request.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada' } },
    );
    a.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///a', name: 'A' }] }));
    a.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsA.push(n.params));
    a.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updatesA.push(n.params.uri));
    b = new Client({ name: 'client-b', version: '1' }, { capabilities: { roots: {} } });
    b.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///b', name: 'B' }] }));
    b.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsB.push(n.params));
    b.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updatesB.push(n.params.uri));
    await a.connect(new StreamableHTTPClientTransport(url));
    await b.connect(new StreamableHTTPClientTransport(url));
    // Both upstreams ready: their tools are listed.
    let names: string[] = [];
    for (let i = 0; i < 600 && !(names.includes('ask__roots') && names.includes('everything__echo') && names.includes('askweb__roots')); i++) {
      names = (await a.listTools()).tools.map((tool) => tool.name);
      await sleep(50);
    }
  });

  after(async () => {
    await a?.close();
    await b?.close();
    await t?.stop();
    askWeb?.child.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sampling: the upstream’s request reaches the client that called, and its answer goes back', async () => {
    const viaFixture = await a.callTool({ name: 'ask__sample', arguments: { prompt: 'hello' } });
    assert.equal(textOf(viaFixture), 'sampled by model-a: from A');
    const viaEverything = await a.callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hello' } });
    assert.ok(textOf(viaEverything).includes('from A'), textOf(viaEverything));
  });

  it('a client that did not declare sampling is not asked: the upstream gets the spec’s error', async () => {
    const result = await b.callTool({ name: 'ask__sample', arguments: { prompt: 'hello' } });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /sampling/);
  });

  it('elicitation, form and URL mode, reaches the client and its answer comes back', async () => {
    assert.deepEqual(JSON.parse(textOf(await a.callTool({ name: 'ask__elicit', arguments: {} }))), { action: 'accept', content: { name: 'Ada' } });
    assert.deepEqual(JSON.parse(textOf(await a.callTool({ name: 'ask__elicit-url', arguments: {} }))), { action: 'accept' });
    const refused = await b.callTool({ name: 'ask__elicit', arguments: {} });
    assert.equal(refused.isError, true, textOf(refused));
  });

  it('roots: each client’s call sees its own roots', async () => {
    // One after the other: a stdio upstream's request names no request of ours, so two clients'
    // calls in flight on it at once cannot be told apart (the most recent one is asked; see docs).
    for (const [client, root] of [
      [a, { uri: 'file:///a', name: 'A' }],
      [b, { uri: 'file:///b', name: 'B' }],
      [a, { uri: 'file:///a', name: 'A' }],
    ] as const) {
      assert.deepEqual(JSON.parse(textOf(await client.callTool({ name: 'ask__roots', arguments: {} }))), [root]);
    }
  });

  it('roots over Streamable HTTP: overlapping calls of two clients each see their own (the request came on that call’s stream)', async () => {
    // A's question goes out while B's later call is still open: guessing "the most recent call"
    // would ask B. Over HTTP the upstream's request arrives on A's own answer stream, so A is asked.
    const first = a.callTool({ name: 'askweb__roots', arguments: { wait_ms: 400 } });
    await sleep(100);
    const second = b.callTool({ name: 'askweb__roots', arguments: { wait_ms: 800 } });
    const [rootsA, rootsB] = await Promise.all([first, second]);
    assert.deepEqual(JSON.parse(textOf(rootsA)), [{ uri: 'file:///a', name: 'A' }]);
    assert.deepEqual(JSON.parse(textOf(rootsB)), [{ uri: 'file:///b', name: 'B' }]);
  });

  it('progress notifications come back on the call, with the client’s own token', async () => {
    const progress: number[] = [];
    const result = await a.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 1, steps: 4 } }, undefined, {
      onprogress: (p) => void progress.push(p.progress),
    });
    assert.ok(!result.isError, textOf(result));
    assert.ok(progress.length >= 3, `progress: ${progress.join(',')}`);
    assert.deepEqual(
      [...progress].sort((x, y) => x - y),
      progress,
    );
  });

  it('a cancelled long call stops waiting at once and leaves the upstream usable', async () => {
    const controller = new AbortController();
    let seen = 0;
    const started = Date.now();
    const call = a.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 30, steps: 30 } }, undefined, {
      signal: controller.signal,
      onprogress: () => {
        if (++seen === 1) controller.abort('enough');
      },
    });
    await assert.rejects(call);
    assert.ok(Date.now() - started < 10_000);
    const echo = await a.callTool({ name: 'everything__echo', arguments: { message: 'still here' } });
    assert.equal(textOf(echo), 'Echo: still here');
  });

  it('log messages reach each client at the level it asked for, tagged with the upstream', async () => {
    await a.setLoggingLevel('debug');
    await b.setLoggingLevel('error');
    logsA.length = 0;
    logsB.length = 0;
    await a.callTool({ name: 'ask__log', arguments: { levels: ['debug', 'info', 'error'] } });
    // On A's own request stream, so in order and before the answer.
    assert.deepEqual(
      logsA.filter((l) => l.logger === 'ask/fixture').map((l) => l.level),
      ['debug', 'info', 'error'],
    );
    await waitFor(() => logsB.some((l) => l.logger === 'ask/fixture'), 'B’s error message');
    await sleep(200);
    assert.deepEqual(
      logsB.filter((l) => l.logger === 'ask/fixture').map((l) => l.level),
      ['error'],
    );
  });

  it('resources/updated reaches the subscribed client only', async () => {
    await a.subscribeResource({ uri: WATCHED });
    try {
      await a.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
      await waitFor(() => updatesA.includes(WATCHED), 'A’s update');
      await sleep(500);
      assert.deepEqual(updatesB, []);
    } finally {
      await a.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
      await a.unsubscribeResource({ uri: WATCHED });
    }
  });

  it('a subscription survives its stdio upstream dying: the respawned child is subscribed again', async () => {
    type Row = { name: string; status: string; pid: number | null };
    const everything = async () => (await t.socket('GET', '/mcp/upstream-status')).json<{ upstreams: Row[] }>().upstreams.find((r) => r.name === 'everything')!;
    await a.subscribeResource({ uri: WATCHED });
    const pid = (await everything()).pid!;
    process.kill(pid, 'SIGKILL');
    // The hub respawns it (at most one spawn per 5 s).
    await waitFor(
      async () => {
        const row = await everything();
        return row.status === 'ready' && row.pid !== null && row.pid !== pid;
      },
      'everything respawned',
      20_000,
    );
    updatesA.length = 0;
    try {
      // A fresh child: its first toggle turns updates on; it knows the subscription only if the hub sent it again.
      await a.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
      await waitFor(() => updatesA.includes(WATCHED), 'A’s update from the respawned child');
    } finally {
      await a.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
      await a.unsubscribeResource({ uri: WATCHED });
    }
  });
});
