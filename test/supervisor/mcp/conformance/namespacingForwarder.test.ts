/**
 * The namespacing forwarder (test/helpers/namespacingForwarder.ts) on its own, in front of a fake
 * upstream HTTP server on a unix socket that records what reaches it and answers as each test says.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';

import { NamespacingForwarder } from '../../../helpers/namespacingForwarder.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Handler = (seen: Seen, res: ServerResponse) => void;

const rpcResult = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });

/** POSTs `body` to the forwarder; resolves with the answer once it ended, or streams it to `onChunk`. */
function post(port: number, body: string, headers: Record<string, string> = {}, onChunk?: (text: string) => void) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          onChunk?.(d);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** GETs the forwarder's SSE stream; resolves with all of it once the server ended it. */
function getStream(port: number, headers: Record<string, string>) {
  return new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'GET', path: '/mcp', agent: false, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The JSON of every SSE event's data in `text`. */
const sseMessages = (text: string): any[] =>
  text
    .split(/\n\n/)
    .map((block) => block.split('\n').filter((l) => l.startsWith('data:')))
    .filter((data) => data.length > 0 && data.join('').slice(5).trim() !== '')
    .map((data) => JSON.parse(data.map((l) => l.slice(5)).join('\n')));

describe('namespacing forwarder', () => {
  let dir: string;
  let upstream: Server;
  let forwarder: NamespacingForwarder;
  let seen: Seen[];
  let handler: Handler;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-nsfwd-'));
    const socketPath = join(dir, 'up.sock');
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        seen.push(s);
        handler(s, res);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(socketPath, resolve));
    forwarder = await NamespacingForwarder.start(socketPath, 'conf');
  });
  beforeEach(() => {
    seen = [];
  });
  after(async () => {
    await forwarder?.stop();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds the namespace to what each request names, and leaves the rest of the request alone', async () => {
    handler = (_s, res) => res.writeHead(202).end();
    const requests = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_simple_text', arguments: { a: 'test://x' }, _meta: { progressToken: 7 } } },
      { jsonrpc: '2.0', id: 'two', method: 'prompts/get', params: { name: 'test_simple_prompt', arguments: { x: 'y' } } },
      { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'test://static-text' } },
      { jsonrpc: '2.0', id: 4, method: 'resources/subscribe', params: { uri: 'test://watched-resource' } },
      { jsonrpc: '2.0', id: 5, method: 'resources/unsubscribe', params: { uri: 'test://watched-resource' } },
      { jsonrpc: '2.0', id: 6, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'arg1', value: 'te' } } },
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'completion/complete',
        params: { ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '1' } },
      },
      { jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} },
    ];
    for (const message of requests) {
      const answer = await post(forwarder.port, JSON.stringify(message), { 'mcp-session-id': 's1', 'x-custom': 'kept', 'accept-encoding': 'br, gzip' });
      assert.equal(answer.status, 202);
    }
    const bodies = seen.map((s) => JSON.parse(s.body));
    assert.deepEqual(bodies[0].params, { name: 'conf__test_simple_text', arguments: { a: 'test://x' }, _meta: { progressToken: 7 } });
    assert.deepEqual(bodies[1].params, { name: 'conf__test_simple_prompt', arguments: { x: 'y' } });
    assert.equal(bodies[2].params.uri, 'tuic://conf/test://static-text');
    assert.equal(bodies[3].params.uri, 'tuic://conf/test://watched-resource');
    assert.equal(bodies[4].params.uri, 'tuic://conf/test://watched-resource');
    assert.deepEqual(bodies[5].params.ref, { type: 'ref/prompt', name: 'conf__p' });
    assert.deepEqual(bodies[6].params.ref, { type: 'ref/resource', uri: 'tuic://conf/test://template/{id}/data' });
    assert.deepEqual(
      bodies.map((b) => b.id),
      requests.map((r) => r.id),
    );
    // Untouched requests pass byte for byte.
    assert.equal(seen[7]!.body, JSON.stringify(requests[7]));
    for (const s of seen) {
      assert.equal(s.headers['mcp-session-id'], 's1');
      assert.equal(s.headers['x-custom'], 'kept');
      // Not sent on: a compressed answer could not be rewritten.
      assert.equal(s.headers['accept-encoding'], undefined);
      assert.equal(s.headers['host'], `127.0.0.1:${forwarder.port}`);
      assert.equal(Number(s.headers['content-length']), Buffer.byteLength(s.body));
    }
  });

  it('a batch is rewritten message by message; a client answer to a server request passes unchanged', async () => {
    handler = (_s, res) => res.writeHead(202).end();
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a' } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
    ];
    await post(forwarder.port, JSON.stringify(batch));
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 0, result: { action: 'accept', content: { uri: 'test://x', name: 'n' } } });
    await post(forwarder.port, answer);
    assert.deepEqual(JSON.parse(seen[0]!.body), [{ ...batch[0], params: { name: 'conf__a' } }, batch[1]]);
    assert.equal(seen[1]!.body, answer);
  });

  it('JSON answers: the namespace comes off the lists, read contents and embedded resources; status, headers and foreign entries stay', async () => {
    const results: Record<string, unknown> = {
      'tools/list': { tools: [{ name: 'conf__test_simple_text', description: 'd', inputSchema: {} }, { name: 'session' }, { name: 'other__x' }] },
      'prompts/list': { prompts: [{ name: 'conf__test_simple_prompt', description: 'p' }] },
      'resources/list': {
        resources: [
          { uri: 'tuic://conf/test://static-text', name: 'static-text' },
          { uri: 'tuic://other/test://a', name: 'a' },
        ],
      },
      'resources/templates/list': { resourceTemplates: [{ uriTemplate: 'tuic://conf/test://template/{id}/data', name: 't' }] },
      'resources/read': { contents: [{ uri: 'tuic://conf/test://static-text', mimeType: 'text/plain', text: 'x' }] },
      'tools/call': {
        content: [
          { type: 'text', text: 'tuic://conf/stays-in-text' },
          { type: 'resource', resource: { uri: 'tuic://conf/test://embedded-resource', text: 'e' } },
          { type: 'resource_link', uri: 'tuic://conf/test://linked', name: 'l' },
        ],
      },
      'prompts/get': { messages: [{ role: 'user', content: { type: 'resource', resource: { uri: 'tuic://conf/test://example-resource', text: 'e' } } }] },
    };
    handler = (s, res) => {
      const { id, method } = JSON.parse(s.body);
      res.writeHead(200, 'Fine', { 'content-type': 'application/json', 'mcp-session-id': 's2', 'x-up': 'yes' }).end(rpcResult(id, results[method]));
    };
    const got: Record<string, any> = {};
    let id = 100;
    for (const method of Object.keys(results)) {
      const answer = await post(forwarder.port, JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { name: 'n', uri: 'u' } }), {
        'mcp-session-id': 's2',
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['x-up'], 'yes');
      assert.equal(answer.headers['mcp-session-id'], 's2');
      assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.text));
      const message = JSON.parse(answer.text);
      assert.equal(message.id, id);
      got[method] = message.result;
    }
    assert.deepEqual(
      got['tools/list'].tools.map((t: { name: string }) => t.name),
      ['test_simple_text', 'session', 'other__x'],
    );
    assert.equal(got['prompts/list'].prompts[0].name, 'test_simple_prompt');
    assert.deepEqual(
      got['resources/list'].resources.map((r: { uri: string }) => r.uri),
      ['test://static-text', 'tuic://other/test://a'],
    );
    assert.equal(got['resources/templates/list'].resourceTemplates[0].uriTemplate, 'test://template/{id}/data');
    assert.equal(got['resources/read'].contents[0].uri, 'test://static-text');
    assert.deepEqual(got['tools/call'].content, [
      { type: 'text', text: 'tuic://conf/stays-in-text' },
      { type: 'resource', resource: { uri: 'test://embedded-resource', text: 'e' } },
      { type: 'resource_link', uri: 'test://linked', name: 'l' },
    ]);
    assert.equal(got['prompts/get'].messages[0].content.resource.uri, 'test://example-resource');
  });

  it('an error status and a non-JSON body pass unchanged', async () => {
    handler = (_s, res) => res.writeHead(403, { 'content-type': 'text/plain' }).end('Invalid Host header');
    const answer = await post(forwarder.port, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }), { host: 'evil.example.com' });
    assert.equal(answer.status, 403);
    assert.equal(answer.text, 'Invalid Host header');
    assert.equal(seen[0]!.headers['host'], 'evil.example.com');
  });

  it('SSE answers are rewritten event by event as they arrive, not at the end; other events pass byte for byte', async () => {
    let upstreamRes: ServerResponse | undefined;
    handler = (_s, res) => {
      upstreamRes = res;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's3' });
      res.write('id: e0\nretry: 500\ndata: \n\n');
    };
    let received = '';
    const waiters: (() => void)[] = [];
    const waitFor = async (pattern: RegExp) => {
      while (!pattern.test(received)) await new Promise<void>((resolve) => waiters.push(resolve));
    };
    const done = post(
      forwarder.port,
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'test_sampling' } }),
      { 'mcp-session-id': 's3' },
      (d) => {
        received += d;
        for (const wake of waiters.splice(0)) wake();
      },
    );
    await waitFor(/id: e0\nretry: 500\ndata: \n\n/);
    const progress = 'event: message\nid: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":50}}\n\n';
    upstreamRes!.write(progress);
    await waitFor(/notifications\/progress/);
    // The server's own request to the client, split across writes, mid-request.
    upstreamRes!.write('event: message\nid: e2\ndata: {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage",');
    upstreamRes!.write('"params":{"maxTokens":100,"messages":[]}}\n\n: keepalive\n\n');
    await waitFor(/sampling\/createMessage[\s\S]*: keepalive\n\n/);
    upstreamRes!.end(
      `event: message\nid: e3\ndata: ${rpcResult(9, { content: [{ type: 'resource', resource: { uri: 'tuic://conf/test://embedded-resource', text: 'x' } }] })}\n\n`,
    );
    const answer = await done;
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['mcp-session-id'], 's3');
    assert.ok(answer.text.startsWith(`id: e0\nretry: 500\ndata: \n\n${progress}`), answer.text);
    const messages = sseMessages(answer.text);
    assert.equal(messages[1].method, 'sampling/createMessage');
    assert.equal(messages[2].id, 9);
    assert.equal(messages[2].result.content[0].resource.uri, 'test://embedded-resource');
    assert.match(answer.text, /event: message\nid: e3\ndata: \{/);
  });

  it('a GET stream: resource updates lose the namespace; an answer replayed there (resumption) is rewritten by the method it answers', async () => {
    handler = (s, res) => {
      if (s.method === 'POST') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).end('id: p0\ndata: \n\n');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`id: g1\ndata: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"tuic://conf/test://watched-resource"}}\n\n`);
      res.end(`id: g2\ndata: ${rpcResult(21, { contents: [{ uri: 'tuic://conf/test://static-text', text: 't' }] })}\n\n`);
    };
    await post(forwarder.port, JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'resources/read', params: { uri: 'test://static-text' } }), {
      'mcp-session-id': 's4',
    });
    const text = await getStream(forwarder.port, { 'mcp-session-id': 's4', 'last-event-id': 'p0' });
    assert.equal(seen[1]!.headers['last-event-id'], 'p0');
    const [update, read] = sseMessages(text);
    assert.deepEqual(update.params, { uri: 'test://watched-resource' });
    assert.equal(read.result.contents[0].uri, 'test://static-text');
  });
});
