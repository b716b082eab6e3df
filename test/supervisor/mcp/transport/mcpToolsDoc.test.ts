// GET /mcp/tools.json on a real tuicd: the native tools with their actions, from the same
// declarations tools/list serves on /mcp, and following the config that changes that list. And
// how GET /openapi.json describes /mcp: a body POST checks itself, refused as JSON-RPC errors.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../../helpers/tuicdProcess.js';
import { initialize, rpc } from './mcpHttp.js';

interface ToolDoc {
  name: string;
  description: string;
  inputSchema: { type: string; properties?: Record<string, { enum?: string[] }>; required?: string[] };
  actions: string[];
}

/** The `- name: …` lines under `Actions:` in a tool description (nativeTool.ts ACTION_LINE). */
function actionLines(description: string): string[] {
  const block = description.split('\n\n').find((part) => part.startsWith('Actions:\n'));
  return block === undefined
    ? []
    : block
        .split('\n')
        .slice(1)
        .map((line) => /^- ([^:]+):/.exec(line)?.[1] ?? `unparsed: ${line}`);
}

describe('GET /mcp/tools.json', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start();
  });
  after(() => t.stop());

  const toolsDoc = async (): Promise<ToolDoc[]> => {
    const answer = await t.socket('GET', '/mcp/tools.json');
    assert.equal(answer.status, 200, answer.text);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    return answer.json<{ tools: ToolDoc[] }>().tools;
  };
  const toolsList = async (sessionId?: string): Promise<Array<Omit<ToolDoc, 'actions'>>> => {
    const answer = await rpc(t, 'tools/list', {}, sessionId ? { 'Mcp-Session-Id': sessionId } : {});
    assert.equal(answer.status, 200, answer.text);
    return answer.json().result.tools;
  };

  it('lists every native tool tools/list lists, in its order, with the same name, description and input schema', async () => {
    const doc = await toolsDoc();
    const { id } = await initialize(t);
    const listed = (await toolsList(id)).filter((tool) => !tool.name.includes('__'));
    assert.deepEqual(
      doc.map(({ actions: _actions, ...definition }) => definition),
      listed,
    );
    // config and debug are off by default (disabled_native_tools).
    assert.deepEqual(
      doc.map((tool) => tool.name),
      ['session', 'agent', 'task', 'repo', 'progress', 'ui', 'plugin_dev_guide'],
    );
  });

  it("gives each tool's actions: the `action` enum of its schema and the Actions: lines of its description, in order", async () => {
    const doc = await toolsDoc();
    for (const tool of doc) {
      const declared = tool.inputSchema.properties?.['action']?.enum ?? [];
      assert.deepEqual(tool.actions, declared, tool.name);
      assert.deepEqual(tool.actions, actionLines(tool.description), tool.name);
      if (tool.actions.length > 0) assert.ok(tool.inputSchema.required?.includes('action'), `${tool.name} requires action`);
    }
    const byName = new Map(doc.map((tool) => [tool.name, tool]));
    assert.ok(byName.get('session')!.actions.includes('create'), 'session has create');
    assert.ok(byName.get('agent')!.actions.length > 0, 'agent has actions');
    assert.deepEqual(byName.get('plugin_dev_guide')!.actions, [], 'a tool without actions has none');
  });

  it('follows the config as tools/list does: a tool enabled or disabled there is in or out here too', async () => {
    const put = async (body: object) =>
      assert.equal((await t.socket('PUT', '/config', JSON.stringify(body), { 'Content-Type': 'application/json' })).status, 200);
    const listedNames = async () => (await toolsList()).map((tool) => tool.name).filter((name) => !name.includes('__'));
    try {
      await put({ disabled_native_tools: [] });
      const all = await toolsDoc();
      assert.deepEqual(
        all.map((tool) => tool.name),
        ['session', 'agent', 'task', 'repo', 'progress', 'ui', 'plugin_dev_guide', 'config', 'debug'],
      );
      assert.deepEqual(
        all.map((tool) => tool.name),
        await listedNames(),
      );
      for (const tool of all) assert.deepEqual(tool.actions, tool.inputSchema.properties?.['action']?.enum ?? [], tool.name);
      await put({ disabled_native_tools: ['ui'], progress_tracking: false });
      const names = (await toolsDoc()).map((tool) => tool.name);
      assert.deepEqual(names, ['session', 'agent', 'task', 'repo', 'plugin_dev_guide', 'config', 'debug'], 'ui disabled, progress off with progress_tracking');
      assert.deepEqual(names, await listedNames());
    } finally {
      await put({ disabled_native_tools: ['config', 'debug'], progress_tracking: true });
    }
  });

  it('POST /mcp checks its own body: a wrong-typed message is a JSON-RPC error, as the document says', async () => {
    const doc = (await t.socket('GET', '/openapi.json')).json();
    const post = doc.paths['/mcp'].post;
    assert.deepEqual(post.tags, ['mcp']);
    assert.ok(post.requestBody.content['application/json'].schema.anyOf, 'one message or a batch');
    assert.equal(doc.paths['/mcp'].get['x-stream'], 'sse');
    assert.ok(doc.paths['/mcp'].get.responses['200'].content['text/event-stream']);
    assert.deepEqual(doc.paths['/mcp/tools.json'].get.tags, ['mcp']);
    for (const path of ['/mcp/upstreams', '/mcp/upstream-status', '/mcp/upstreams/credential', '/config/project-mcp-upstreams']) {
      for (const op of Object.values<any>(doc.paths[path])) assert.deepEqual(op.tags, ['hub'], path);
    }

    for (const [body, code, id] of [
      ['{"jsonrpc":"2.0","id":7,"method":42}', -32600, 7],
      ['{"jsonrpc":2,"id":8,"method":"ping"}', -32600, 8],
      ['["ping"]', null, null],
      ['42', -32600, null],
    ] as const) {
      const answer = await t.socket('POST', '/mcp', body, { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' });
      const answered = answer.json();
      // A batch: each entry is answered in the array (2025-03-26 is assumed without a header).
      const json = code === null ? answered[0] : answered;
      assert.equal(json.jsonrpc, '2.0', `${body}: ${answer.text}`);
      assert.equal(json.code, undefined, `${body}: a JSON-RPC error, not invalid_input`);
      if (code === null) {
        assert.equal(answer.status, 200, answer.text);
        assert.equal(json.error.code, -32600, answer.text);
      } else {
        assert.equal(answer.status, 400, answer.text);
        assert.equal(json.error.code, code, answer.text);
        assert.equal(json.id, id, answer.text);
      }
    }
  });
});
