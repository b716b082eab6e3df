/**
 * UpstreamRegistry with real clients (StdioUpstream over a pump, HttpUpstream over Streamable HTTP)
 * in front of the real server-everything: its resources, templates and prompts listed namespaced,
 * reads, prompts and completions routed to it, its sampling / elicitation / roots requests sent to
 * the client request it serves and answered back, progress with the client's own token, a
 * cancelled long-running call, logging.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';

import { CancelSource } from '../../../shared/cancellation.js';
import type { UpstreamServerWire } from '../../../shared/protocol/upstreamServer.js';
import { splitNamespacedUri } from '../../../shared/upstreamUris.js';
import { HttpUpstream } from '../../../workers/mcp/httpUpstream.js';
import { UpstreamRegistry } from '../../../workers/mcp/registry.js';
import { StdioUpstream } from '../../../workers/mcp/stdioUpstream.js';
import { type UpstreamClient, UpstreamRpcError } from '../../../workers/mcp/upstreamClient.js';
import { startEverything } from '../../fixtures/upstreams/httpEverything.js';
import { waitFor } from '../../helpers/poll.js';
import { EVERYTHING_SERVER, MOCK_UPSTREAM } from '../proxy-stdio/pumpHarness.js';

interface Notified {
  upstream: string;
  method: string;
  params: Record<string, unknown> | undefined;
  route: string | undefined;
}

interface Asked {
  upstream: string;
  method: string;
  params: Record<string, unknown> | undefined;
  route: string | undefined;
}

function stdioWire(name: string, args: string[]): UpstreamServerWire {
  return { id: `id-${name}`, name, transport: { type: 'stdio', command: process.execPath, args, env: {} }, enabled: true, timeout_secs: 30 };
}

function httpWire(name: string, url: string): UpstreamServerWire {
  return { id: `id-${name}`, name, transport: { type: 'http', url }, enabled: true, timeout_secs: 30 };
}

function createClient(server: UpstreamServerWire): UpstreamClient {
  const log = (): void => {};
  if (server.transport.type === 'stdio') return new StdioUpstream({ server, version: '0.0.0-test', log });
  return new HttpUpstream({ server, version: '0.0.0-test', log, credential: async () => null });
}

function harness(t: TestContext) {
  const notified: Notified[] = [];
  const asked: Asked[] = [];
  let listsChanged = 0;
  /** What the "client" answers an upstream's request with; throws for an error answer. */
  let answer: (asked: Asked) => Promise<unknown> = async () => {
    throw new UpstreamRpcError(-32601, 'no client here');
  };
  const registry = new UpstreamRegistry({
    createClient,
    events: {
      status: () => {},
      toolsChanged: () => {},
      log: () => {},
      listsChanged: () => listsChanged++,
      notification: (upstream, method, params, route) => notified.push({ upstream, method, params, route }),
      clientRequest: (upstream, method, params, route) => {
        const entry = { upstream, method, params, route };
        asked.push(entry);
        return answer(entry);
      },
    },
    healthIntervalMs: 60_000,
  });
  t.after(() => registry.dispose());
  const ready = async (name: string) => {
    await waitFor(() => registry.statusRows().find((r) => r.name === name)?.status === 'ready', `${name} ready`, 30_000);
  };
  const lists = () => {
    const merged = registry.mergedListsJson();
    return {
      resources: JSON.parse(merged.resources) as Array<Record<string, unknown>>,
      resourceTemplates: JSON.parse(merged.resourceTemplates) as Array<Record<string, unknown>>,
      prompts: JSON.parse(merged.prompts) as Array<Record<string, unknown>>,
      capabilities: merged.capabilities,
    };
  };
  const callText = async (upstream: string, tool: string, args: Record<string, unknown>, route?: { route?: string; progressToken?: string | number }) => {
    const outcome = await registry.call(upstream, tool, args, undefined, route);
    const result = JSON.parse(outcome.json) as { content: Array<{ text: string }> };
    return result.content.map((c) => c.text).join('\n');
  };
  return {
    registry,
    notified,
    asked,
    ready,
    lists,
    callText,
    listsChanged: () => listsChanged,
    answerWith: (f: typeof answer) => {
      answer = f;
    },
  };
}

const SAMPLED = { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled through the hub' } };

for (const transport of ['stdio', 'http'] as const) {
  describe(`the registry in front of server-everything over ${transport}`, () => {
    const setUp = async (t: TestContext, name = 'every') => {
      const h = harness(t);
      if (transport === 'stdio') h.registry.connect(stdioWire(name, [EVERYTHING_SERVER, 'stdio']), null);
      else {
        const server = await startEverything();
        t.after(() => server.stop());
        h.registry.connect(httpWire(name, server.url), null);
      }
      h.answerWith(async (asked) => {
        if (asked.method === 'roots/list') return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
        if (asked.method === 'sampling/createMessage') return SAMPLED;
        if (asked.method === 'elicitation/create') return { action: 'decline' };
        throw new UpstreamRpcError(-32601, 'unexpected');
      });
      await h.ready(name);
      await waitFor(() => h.lists().prompts.length > 0 && h.lists().resources.length > 0, 'the lists fetched', 15_000);
      return h;
    };

    test('resources, templates and prompts are listed namespaced; read, get and complete reach the owner', async (t) => {
      const h = await setUp(t);
      const { resources, resourceTemplates, prompts, capabilities } = h.lists();
      assert.deepEqual(capabilities, { resources: true, subscribe: true, prompts: true, completions: true, logging: true });
      assert.ok(h.listsChanged() > 0);
      for (const r of resources) assert.match(String(r['uri']), /^tuic:\/\/every\/demo:\/\//);
      assert.ok(resourceTemplates.some((r) => r['uriTemplate'] === 'tuic://every/demo://resource/dynamic/text/{resourceId}'));
      assert.ok(prompts.some((p) => p['name'] === 'every__args-prompt'));
      assert.ok(prompts.some((p) => p['name'] === 'every__simple-prompt'));
      // Every other field as the upstream wrote it.
      const doc = resources[0]!;
      assert.equal(typeof doc['name'], 'string');
      assert.equal(typeof doc['mimeType'], 'string');

      const own = splitNamespacedUri(String(doc['uri']))!;
      assert.equal(own.upstream, 'every');
      const read = await h.registry.forward('every', 'resources/read', { uri: own.uri });
      assert.ok('json' in read, JSON.stringify(read));
      const contents = (JSON.parse(read.json) as { contents: Array<{ uri: string }> }).contents;
      assert.equal(contents[0]!.uri, own.uri, 'URIs inside results stay the upstream’s own');

      const templated = await h.registry.forward('every', 'resources/read', { uri: 'demo://resource/dynamic/text/7' });
      assert.ok('json' in templated && templated.json.includes('demo://resource/dynamic/text/7'), JSON.stringify(templated));

      const prompt = await h.registry.forward('every', 'prompts/get', { name: 'args-prompt', arguments: { city: 'Lisbon' } });
      assert.ok('json' in prompt && prompt.json.includes('Lisbon'), JSON.stringify(prompt));

      const completion = await h.registry.forward('every', 'completion/complete', {
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'department', value: 'S' },
      });
      assert.ok('json' in completion, JSON.stringify(completion));
      assert.deepEqual((JSON.parse(completion.json) as { completion: { values: string[] } }).completion.values, ['Sales', 'Support']);

      const subscribed = await h.registry.forward('every', 'resources/subscribe', { uri: own.uri });
      assert.deepEqual(subscribed, { json: '{}' });

      // The upstream's own error comes back as it answered; the hub's refusals are JSON-RPC errors too.
      const missing = await h.registry.forward('every', 'prompts/get', { name: 'no-such-prompt' });
      assert.ok('error' in missing && missing.error.code < 0, JSON.stringify(missing));
      assert.deepEqual(await h.registry.forward('nobody', 'resources/read', { uri: 'x' }), { error: { code: -32602, message: "Unknown upstream 'nobody'" } });
      const notForwarded = await h.registry.forward('every', 'tools/call', {});
      assert.ok('error' in notForwarded && notForwarded.error.code === -32601);
    });

    test('resource updates come back namespaced for subscribers, and a list_changed refreshes the lists', async (t) => {
      const h = await setUp(t);
      const uri = splitNamespacedUri(String(h.lists().resources[0]!['uri']))!.uri;
      assert.deepEqual(await h.registry.forward('every', 'resources/subscribe', { uri }), { json: '{}' });
      await h.callText('every', 'toggle-subscriber-updates', {});
      t.after(() => h.callText('every', 'toggle-subscriber-updates', {}).catch(() => {}));
      await waitFor(() => h.notified.some((n) => n.method === 'notifications/resources/updated'), 'a resource update', 10_000);
      const updated = h.notified.find((n) => n.method === 'notifications/resources/updated')!;
      assert.deepEqual([updated.upstream, updated.route, updated.params?.['uri']], ['every', undefined, `tuic://every/${uri}`]);

      // A session resource registered by a tool: the server says list_changed, the hub lists again.
      await h.callText('every', 'gzip-file-as-resource', { name: 'hub-test.gz', data: 'data:text/plain;base64,aGVsbG8=' });
      await waitFor(() => h.lists().resources.some((r) => r['uri'] === 'tuic://every/demo://resource/session/hub-test.gz'), 'the new resource listed', 10_000);
    });

    test('a sampling request reaches the client request that is being served, and its answer reaches the upstream', async (t) => {
      const h = await setUp(t);
      const text = await h.callText('every', 'trigger-sampling-request', { prompt: 'say hi', maxTokens: 5 }, { route: 'session-1/req-7' });
      assert.match(text, /sampled through the hub/);
      const sampling = h.asked.filter((a) => a.method === 'sampling/createMessage');
      assert.equal(sampling.length, 1);
      assert.equal(sampling[0]!.route, 'session-1/req-7');
      assert.equal(sampling[0]!.upstream, 'every');
      assert.match(JSON.stringify(sampling[0]!.params), /say hi/);

      // Elicitation and roots go the same way.
      const elicited = await h.callText('every', 'trigger-elicitation-request', {}, { route: 'session-2/req-1' });
      assert.match(elicited, /decline/i);
      assert.equal(h.asked.find((a) => a.method === 'elicitation/create')?.route, 'session-2/req-1');
      const roots = await h.callText('every', 'get-roots-list', {}, { route: 'session-3/req-1' });
      assert.match(roots, /file:\/\/\/work\/project/);
    });

    test("progress comes back on the request's route with the client's own token", async (t) => {
      const h = await setUp(t);
      const text = await h.callText(
        'every',
        'trigger-long-running-operation',
        { duration: 0.4, steps: 2 },
        { route: 'r-progress', progressToken: 'client-tok-1' },
      );
      assert.match(text, /Long running operation completed/);
      const progress = h.notified.filter((n) => n.method === 'notifications/progress');
      assert.deepEqual(
        progress.map((n) => [n.upstream, n.route, n.params?.['progressToken'], n.params?.['progress'], n.params?.['total']]),
        [
          ['every', 'r-progress', 'client-tok-1', 1, 2],
          ['every', 'r-progress', 'client-tok-1', 2, 2],
        ],
      );
    });

    test('a cancelled long-running call ends at once and leaves the upstream usable', async (t) => {
      const h = await setUp(t);
      const cancel = new CancelSource();
      const started = Date.now();
      const pending = h.registry.call('every', 'trigger-long-running-operation', { duration: 30, steps: 30 }, cancel, { route: 'r-cancel' });
      await new Promise((r) => setTimeout(r, 300));
      cancel.cancel(new Error('the client cancelled'));
      const outcome = await pending;
      assert.equal(outcome.upstreamError, true);
      assert.match(outcome.json, /cancelled/);
      assert.ok(Date.now() - started < 5_000);
      assert.equal(await h.callText('every', 'echo', { message: 'still here' }), 'Echo: still here');
      assert.equal(h.registry.statusRows()[0]!.status, 'ready');
    });

    test('log messages come back without a route, after the level was forwarded', async (t) => {
      const h = await setUp(t);
      h.registry.setLogLevel('debug');
      await h.callText('every', 'toggle-simulated-logging', {});
      t.after(() => h.callText('every', 'toggle-simulated-logging', {}).catch(() => {}));
      await waitFor(() => h.notified.some((n) => n.method === 'notifications/message'), 'a log message', 10_000);
      const message = h.notified.find((n) => n.method === 'notifications/message')!;
      assert.equal(message.upstream, 'every');
      assert.equal(message.route, undefined);
      assert.equal(typeof message.params?.['level'], 'string');
    });
  });
}

test('logging/setLevel goes to every ready upstream that declares logging, and again after a new handshake', async (t) => {
  const h = harness(t);
  h.registry.connect(stdioWire('mock', [MOCK_UPSTREAM, 'normal']), null);
  await h.ready('mock');
  h.registry.setLogLevel('warning');
  const levels = async () => {
    const outcome = await h.registry.call('mock', 'logLevels', {});
    return (JSON.parse(outcome.json) as { structuredContent: { logLevels: string[] } }).structuredContent.logLevels;
  };
  await waitFor(async () => (await levels()).length === 1, 'the level sent');
  assert.deepEqual(await levels(), ['warning']);
  // A new child knows no level: it is told after its handshake.
  h.registry.reconnect('mock');
  await h.ready('mock');
  await waitFor(async () => (await levels()).length === 1, 'the level sent to the new child');
  assert.deepEqual(await levels(), ['warning']);
  // Mock has no resources or prompts: nothing is listed, and its capabilities show.
  assert.deepEqual(h.lists().capabilities, { resources: false, subscribe: false, prompts: false, completions: false, logging: true });
  assert.deepEqual(await h.registry.forward('mock', 'resources/read', { uri: 'x' }), {
    error: { code: -32601, message: "Upstream 'mock' does not support resources/read (no 'resources' capability)" },
  });
});
