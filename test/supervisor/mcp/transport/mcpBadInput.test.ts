// Issue 14 on /mcp, over the unix socket: every bad input gets a clear 4xx. An unsupported
// MCP-Protocol-Version header is refused on POST, GET and DELETE (MCP 2025-11-25: MUST answer 400);
// JSON-RPC batches are served for requests speaking 2025-03-26 (the one revision that has them) and
// refused with a JSON-RPC error for newer ones, bounded at 100 messages; and error messages quote
// at most 200 characters of what the client sent. (GET /mcp without a session id, now 400 instead
// of a 401 with no WWW-Authenticate, is in mcpEndpoint.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { initialize, JSON_HEADERS, McpStream, rpc } from './mcpHttp.js';

const SUPPORTED = ['2026-07-28', '2025-11-25', '2025-03-26'];

describe('/mcp bad input (issue 14)', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start();
  });
  after(() => t.stop());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    t.socket('POST', '/mcp', typeof body === 'string' ? body : JSON.stringify(body), { ...JSON_HEADERS, ...headers });
  /** GET /mcp read as a stream, so a request the server wrongly serves as SSE fails the test instead of hanging it. */
  const getMcp = async (headers: Record<string, string>) => {
    const s = await McpStream.open({ socketPath: t.socketPath, headers: { ...headers, Accept: 'text/event-stream' } });
    try {
      await s.until(() => s.ended, `GET /mcp answered ${s.status} ${String(s.headers['content-type'])} and kept the stream open`, 2_000);
    } finally {
      s.close();
    }
    return { status: s.status, headers: s.headers, json: () => JSON.parse(s.raw) };
  };

  describe('MCP-Protocol-Version header', () => {
    const assertRefused = (r: { status: number; json(): any; headers: Record<string, unknown> }, value: string, id: unknown = null) => {
      assert.equal(r.status, 400);
      assert.match(String(r.headers['content-type']), /^application\/json/);
      const body = r.json();
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, id);
      assert.equal(body.error.code, -32000);
      assert.equal(
        body.error.message,
        `Bad Request: unsupported MCP-Protocol-Version header ${JSON.stringify(value)}; supported versions: ${SUPPORTED.join(', ')} (without the header 2025-03-26 is assumed)`,
      );
    };

    for (const bad of ['1999-01-01', 'banana']) {
      it(`refuses ${bad} with 400 on POST (requests and notifications), GET and DELETE`, async () => {
        const { id } = await initialize(t);
        const headers = { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': bad };
        assertRefused(await post({ jsonrpc: '2.0', id: 'p-1', method: 'ping' }, headers), bad, 'p-1');
        assertRefused(await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'session', arguments: { action: 'list' } } }, headers), bad, 2);
        assertRefused(await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers), bad);
        assertRefused(await post([{ jsonrpc: '2.0', id: 3, method: 'ping' }], headers), bad);
        assertRefused(await getMcp(headers), bad);
        assertRefused(await t.socket('DELETE', '/mcp', undefined, headers), bad);
        // The refused DELETE left the session alone: presenting it again resumes it.
        assert.equal((await initialize(t, {}, { 'Mcp-Session-Id': id })).id, id);
      });
    }

    it('accepts every supported version, and no header at all', async () => {
      const { id } = await initialize(t);
      for (const version of [...SUPPORTED, undefined]) {
        const headers: Record<string, string> = { 'Mcp-Session-Id': id, ...(version === undefined ? {} : { 'MCP-Protocol-Version': version }) };
        const ping = await rpc(t, 'ping', undefined, headers);
        assert.equal(ping.status, 200, `${version}: ${ping.text}`);
        assert.deepEqual(ping.json().result, {});
        const stream = await McpStream.open({ socketPath: t.socketPath, headers: { ...headers, Accept: 'text/event-stream' } });
        stream.close();
        assert.equal(stream.status, 200, String(version));
      }
      assert.equal((await t.socket('DELETE', '/mcp', undefined, { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': '2025-11-25' })).status, 200);
    });

    it('initialize negotiates from its params whatever the header says', async () => {
      const { answer } = await initialize(t, { protocolVersion: '2025-03-26' }, { 'MCP-Protocol-Version': 'banana' });
      assert.equal(answer.status, 200);
      assert.equal(answer.json().result.protocolVersion, '2025-03-26');
    });

    it('quotes at most 200 characters of a long header value', async () => {
      const value = 'v'.repeat(1_000);
      const r = await rpc(t, 'ping', undefined, { 'MCP-Protocol-Version': value });
      assert.equal(r.status, 400);
      assert.ok(r.json().error.message.includes(`${JSON.stringify('v'.repeat(200))}… (800 more characters)`), r.json().error.message);
      assert.ok(r.text.length < 500, r.text);
    });
  });

  describe('JSON-RPC batches', () => {
    it('a session negotiated at 2025-03-26 gets an array of answers in order: none for notifications or client responses, an error in place of an invalid entry', async () => {
      const { id } = await initialize(t, { protocolVersion: '2025-03-26' });
      const r = await post(
        [
          { jsonrpc: '2.0', id: 'first', method: 'ping' },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'session', arguments: { action: 'list' } } },
          { jsonrpc: '2.0', id: 99, result: {} },
          { jsonrpc: '2.0', id: 3, method: 'tools/list' },
          { jsonrpc: '2.0', id: 4, method: 'no/such' },
          42,
          { jsonrpc: '2.0', id: 5, method: 'ping' },
        ],
        { 'Mcp-Session-Id': id },
      );
      assert.equal(r.status, 200, r.text);
      assert.match(String(r.headers['content-type']), /^application\/json/);
      assert.equal(r.headers['mcp-session-id'], id);
      const answers = r.json();
      assert.ok(Array.isArray(answers));
      assert.deepEqual(
        answers.map((a: { id: unknown }) => a.id),
        ['first', 2, 3, 4, null, 5],
      );
      assert.deepEqual(answers[0], { jsonrpc: '2.0', id: 'first', result: {} });
      assert.equal(answers[1].result.isError, false);
      assert.ok(answers[2].result.tools.some((tool: { name: string }) => tool.name === 'session'));
      assert.deepEqual(answers[3].error, { code: -32601, message: 'Method not found: no/such', data: { code: 'not_found' } });
      assert.equal(answers[4].error.code, -32600);
      assert.deepEqual(answers[4].error.data, { code: 'invalid_input' });
      assert.deepEqual(answers[5], { jsonrpc: '2.0', id: 5, result: {} });
    });

    it('a batch of only notifications and client responses is answered 202 with no body', async () => {
      const { id } = await initialize(t, { protocolVersion: '2025-03-26' });
      const r = await post(
        [
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 7, result: {} },
        ],
        { 'Mcp-Session-Id': id },
      );
      assert.equal(r.status, 202);
      assert.equal(r.text, '');
    });

    it('a batch containing initialize is refused whole (400, -32600)', async () => {
      const { id } = await initialize(t, { protocolVersion: '2025-03-26' });
      const r = await post(
        [
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-03-26' } },
        ],
        { 'Mcp-Session-Id': id },
      );
      assert.equal(r.status, 400);
      assert.deepEqual(r.json(), {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: initialize must not be part of a JSON-RPC batch; send it alone', data: { code: 'invalid_input' } },
      });
    });

    it('a request speaking a newer revision gets a clear JSON-RPC error naming where the version came from', async () => {
      const batch = [{ jsonrpc: '2.0', id: 1, method: 'ping' }];
      const { id } = await initialize(t, { protocolVersion: '2025-11-25' });
      const bySession = await post(batch, { 'Mcp-Session-Id': id });
      assert.equal(bySession.status, 400);
      assert.deepEqual(bySession.json(), {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message:
            'Invalid Request: JSON-RPC batches exist only in MCP 2025-03-26; this request speaks 2025-11-25 (the version this session negotiated): send one JSON-RPC message per POST',
          data: { code: 'invalid_input' },
        },
      });
      for (const version of ['2025-11-25', '2026-07-28']) {
        const byHeader = await post(batch, { 'MCP-Protocol-Version': version });
        assert.equal(byHeader.status, 400);
        assert.equal(
          byHeader.json().error.message,
          `Invalid Request: JSON-RPC batches exist only in MCP 2025-03-26; this request speaks ${version} (the MCP-Protocol-Version header): send one JSON-RPC message per POST`,
        );
      }
    });

    it('the header names the revision before the session does; with neither, 2025-03-26 is assumed (MCP 2025-11-25)', async () => {
      const batch = [{ jsonrpc: '2.0', id: 'x', method: 'ping' }];
      const { id } = await initialize(t, { protocolVersion: '2025-11-25' });
      const byHeader = await post(batch, { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': '2025-03-26' });
      assert.equal(byHeader.status, 200, byHeader.text);
      assert.deepEqual(byHeader.json(), [{ jsonrpc: '2.0', id: 'x', result: {} }]);
      const bare = await post(batch);
      assert.equal(bare.status, 200, bare.text);
      assert.deepEqual(bare.json(), [{ jsonrpc: '2.0', id: 'x', result: {} }]);
      assert.equal(bare.headers['mcp-session-id'], undefined);
    });

    it('serves 100 messages and refuses 101 whole with 400 naming the limit', async () => {
      const { id } = await initialize(t, { protocolVersion: '2025-03-26' });
      const batch = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
      const ok = await post(batch(100), { 'Mcp-Session-Id': id });
      assert.equal(ok.status, 200);
      assert.deepEqual(
        ok.json().map((a: { id: number }) => a.id),
        Array.from({ length: 100 }, (_, i) => i),
      );
      const tooLong = await post(batch(101), { 'Mcp-Session-Id': id });
      assert.equal(tooLong.status, 400);
      assert.deepEqual(tooLong.json(), {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: a batch of 101 messages; the limit is 100', data: { code: 'invalid_input' } },
      });
    });
  });

  it('resources, prompts, completion and logging refuse bad params with a JSON-RPC error naming what is wrong; stray client answers are dropped', async () => {
    const { id: session } = await initialize(t);
    const headers = { 'Mcp-Session-Id': session };
    const cases: Array<[string, Record<string, unknown>, number, RegExp]> = [
      ['resources/read', {}, -32602, /requires a non-empty string 'uri'/],
      ['resources/read', { uri: 'file:///etc/passwd' }, -32002, /Resource not found: file:\/\/\/etc\/passwd/],
      ['resources/read', { uri: 'tuic://nosuch/x://1' }, -32602, /Unknown upstream 'nosuch'/],
      ['resources/subscribe', { uri: 42 }, -32602, /'uri'/],
      ['resources/list', { cursor: 'not-ours' }, -32602, /invalid cursor/],
      ['prompts/get', {}, -32602, /requires a non-empty string 'name'/],
      ['prompts/get', { name: 'no-namespace' }, -32602, /prompts are named '\{upstream\}__\{prompt\}'/],
      ['completion/complete', { ref: 5 }, -32602, /requires an object 'ref'/],
      ['completion/complete', { ref: { type: 'ref/other' } }, -32602, /'ref' must be/],
      ['logging/setLevel', { level: 'loud' }, -32602, /'level' must be one of debug, info/],
    ];
    for (const [method, params, code, message] of cases) {
      const r = await post({ jsonrpc: '2.0', id: 7, method, params }, headers);
      assert.equal(r.status, 200, r.text);
      const error = r.json().error;
      assert.equal(error?.code, code, `${method} ${JSON.stringify(params)}: ${r.text}`);
      assert.match(error.message, message);
    }
    // An answer to a question nobody asked: acknowledged, nothing else happens, the session goes on.
    const stray = await post({ jsonrpc: '2.0', id: 'tuicd-999', result: { roots: [] } }, headers);
    assert.equal(stray.status, 202);
    assert.equal(stray.text, '');
    assert.deepEqual((await post({ jsonrpc: '2.0', id: 8, method: 'ping' }, headers)).json().result, {});
  });

  it('an unknown method is quoted to 200 characters with the omitted length; a short one whole', async () => {
    const method = 'm'.repeat(10_000);
    const r = await post({ jsonrpc: '2.0', id: 1, method });
    assert.equal(r.status, 200);
    assert.equal(r.json().error.message, `Method not found: ${'m'.repeat(200)}… (9800 more characters)`);
    assert.ok(r.text.length < 400, `${r.text.length} bytes`);
    assert.equal((await post({ jsonrpc: '2.0', id: 2, method: 'sampling/createMessage' })).json().error.message, 'Method not found: sampling/createMessage');
  });

  it('tools/call quotes at most 200 characters of a tool name, an upstream or an action it refuses', async () => {
    const calls: Array<[string, Record<string, unknown>]> = [
      ['t'.repeat(10_000), {}],
      [`${'u'.repeat(10_000)}__echo`, {}],
      ['get_tool_schema', { tool_name: 'g'.repeat(10_000) }],
      ['session', { action: 'a'.repeat(10_000) }],
    ];
    for (const [name, args] of calls) {
      const r = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } });
      assert.equal(r.status, 200);
      assert.match(r.text, /… \(\d+ more characters\)/, name.slice(0, 20));
      assert.ok(r.text.length < 2000, `${name.slice(0, 20)}: ${r.text.length} bytes`);
    }
  });
});
