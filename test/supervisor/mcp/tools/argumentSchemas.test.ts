/**
 * Every native tool's advertised input schema is its argument check. For each property of each tool
 * a real tuicd lists (tools/list through the SDK's own client, over TCP with Basic Auth), a value of
 * the wrong type is refused before the handler runs, as the tool error `{error, code:
 * "invalid_input", field}` naming that property. The cases come from the advertised schemas, so a
 * tool or a property added later is covered without listing it here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { hash } from '@node-rs/bcrypt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

import { Tuicd } from '../../../helpers/tuicdProcess.js';

const USER = 'schema-check';
const PASSWORD = 'schema check password';
const AUTHORIZATION = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64');

/** Values of every JSON type: a wrong one for a property is the first its schema refuses. */
const CANDIDATES: readonly unknown[] = [42, 'seven', true, { nested: 1 }, [1]];

interface Advertised {
  name: string;
  inputSchema: { properties?: Record<string, TSchema & { enum?: unknown[] }>; required?: string[] };
}

function payload(r: CallToolResult): Record<string, unknown> {
  const item = r.content[0] as { type: string; text: string };
  assert.equal(item.type, 'text');
  return JSON.parse(item.text) as Record<string, unknown>;
}

/** A value the schema takes (an enum's first choice, else the first candidate that passes). */
function validFor(schema: TSchema & { enum?: unknown[] }): unknown {
  if (schema.enum) return schema.enum[0];
  const v = Compile(schema);
  const value = ['x', ...CANDIDATES].find((c) => v.Check(c));
  assert.notEqual(value, undefined, `no candidate fits ${JSON.stringify(schema)}`);
  return value;
}

function wrongFor(schema: TSchema): unknown {
  const v = Compile(schema);
  const value = CANDIDATES.find((c) => !v.Check(c));
  assert.notEqual(value, undefined, `every candidate fits ${JSON.stringify(schema)}`);
  return value;
}

/** One call per property: the required ones valid, this one wrong. */
function cases(tool: Advertised): Array<{ property: string; args: Record<string, unknown> }> {
  const properties = tool.inputSchema.properties ?? {};
  const required = tool.inputSchema.required ?? [];
  const base: Record<string, unknown> = {};
  for (const name of required) base[name] = validFor(properties[name]!);
  return Object.entries(properties)
    .filter(([name]) => name !== 'action')
    .map(([name, schema]) => ({ property: name, args: { ...base, [name]: wrongFor(schema) } }));
}

describe('native tool arguments are checked against the advertised schema (SDK client)', () => {
  let t: Tuicd;
  const clients: Client[] = [];

  async function connect(name: string): Promise<Client> {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${t.tcpPort}/mcp`), { requestInit: { headers: { Authorization: AUTHORIZATION } } }),
    );
    clients.push(client);
    return client;
  }

  before(async () => {
    const passwordHash = await hash(PASSWORD, { cost: 4 });
    t = await Tuicd.start({
      config: {
        disabled_native_tools: [],
        progress_tracking: true,
        services: { server: { enabled: true, port: 0 }, auth: { username: USER, password_hash: passwordHash } },
      },
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await t?.stop();
  });

  async function checkEvery(client: Client, tools: Advertised[]): Promise<number> {
    let checked = 0;
    for (const tool of tools) {
      for (const { property, args } of cases(tool)) {
        const r = (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult;
        const body = payload(r);
        const what = `${tool.name} ${JSON.stringify(args)} → ${JSON.stringify(body)}`;
        assert.equal(r.isError, true, what);
        assert.equal(body['code'], 'invalid_input', what);
        assert.equal(body['field'], property, what);
        assert.equal(typeof body['error'], 'string', what);
        checked++;
      }
    }
    return checked;
  }

  it('every native tool: each property with a wrong-typed value is invalid_input naming it', async () => {
    const client = await connect('schema-check');
    const tools = (await client.listTools()).tools as unknown as Advertised[];
    const names = tools.map((tool) => tool.name);
    for (const expected of ['session', 'agent', 'task', 'repo', 'progress', 'ui', 'config', 'debug']) assert.ok(names.includes(expected), names.join());
    const checked = await checkEvery(client, tools);
    assert.ok(checked >= 60, `only ${checked} properties checked`);
  });

  it('the meta-tools of the collapsed surface too', async () => {
    // A grok-shell client is served the collapsed surface: search_tools, get_tool_schema, call_tool (and progress).
    const client = await connect('grok-shell-schema-check');
    const tools = (await client.listTools()).tools as unknown as Advertised[];
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['search_tools', 'get_tool_schema', 'call_tool', 'progress'],
    );
    assert.ok((await checkEvery(client, tools)) >= 6);
  });

  it('the wording a property pins is kept, and a missing required argument is named the same way everywhere', async () => {
    const client = await connect('schema-wording');
    const ui = payload((await client.callTool({ name: 'ui', arguments: { action: 'toast', title: 't', level: 'loud' } })) as CallToolResult);
    assert.deepEqual(ui, { error: "Invalid level 'loud'. Must be: info, warn, error", code: 'invalid_input', field: 'level' });
    const task = payload((await client.callTool({ name: 'task', arguments: { action: 'get' } })) as CallToolResult);
    assert.deepEqual(task, { error: 'task_id is required', code: 'invalid_input', field: 'task_id' });
    const action = payload((await client.callTool({ name: 'repo', arguments: { action: 7 } })) as CallToolResult);
    assert.equal(action['code'], 'invalid_input');
    assert.match(String(action['error']), /^Unknown action '7' for tool 'repo'\. Available: list, /);
  });
});
