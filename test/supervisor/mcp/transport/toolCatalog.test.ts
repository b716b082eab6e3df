// The tool catalog with test-only tools: surfaces per settings, change signals, and a dispatch that
// re-applies the filters and turns every failure — ToolError, a domain ApiError, a schema refusal,
// throw, rejection — into an isError result `{error, code, ...}`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from 'typebox';

import { ApiError } from '../../../../shared/apiError.js';
import { ErrorCode, SupervisorError } from '../../../../shared/errors.js';
import type { CallToolResult } from '../../../../shared/mcpEnvelope.js';
import { ToolCatalog } from '../../../../supervisor/mcp/toolCatalog.js';
import type { CatalogSettings } from '../../../../supervisor/mcp/toolCatalog.js';
import { defineTool, ToolError } from '../../../../supervisor/mcp/tools/nativeTool.js';
import type { CallerContext, NativeTool } from '../../../../supervisor/mcp/tools/nativeTool.js';
import { toCallToolResult } from '../../../../shared/mcpEnvelope.js';
import type { ToolCallOutcome } from '../../../../shared/mcpEnvelope.js';

/** Catalog calls as result objects (a proxied result may come back as raw JSON bytes). */
const call = async (catalog: { call(...a: any[]): Promise<ToolCallOutcome> }, ...args: any[]) => toCallToolResult(await catalog.call(...args));

const caller: CallerContext = {
  isLoopback: true,
  listener: 'socket',
  mcpSessionId: 'm-1',
  tuicSession: null,
  boundSessionId: null,
  clientName: 'test',
  signal: new AbortController().signal,
};

function tool(name: string, handler: NativeTool['handler']): NativeTool {
  return defineTool({ name, summary: `The ${name} test tool.`, properties: { value: Type.Optional(Type.String()) }, handler });
}

const echo = tool('echo', (args, c) => ({ args, session: c.mcpSessionId }));
const progress = tool('progress', () => ({ ok: true }));
const refuses = tool('refuses', () => {
  throw new ToolError('busy', 'not today', { retry_after_s: 5 });
});
/** Domain code's errors, let through by the handler: each keeps its code. */
const domain = tool('domain', (args) => {
  if (args['value'] === 'channel') throw new SupervisorError(ErrorCode.WORKER_EXITED, 'pty host exited');
  if (args['value'] === 'legacy') throw new ToolError('an old-style refusal');
  throw new ApiError('conflict', 'taken already', { extra: { reason: 'exists' }, retryAfterS: 2 });
});
const throwsSync = tool('throws', () => {
  throw new TypeError('cannot read properties of undefined');
});
const rejects = tool('rejects', async () => {
  await Promise.resolve();
  throw new Error('disk on fire');
});
const throwsString = tool('throws_string', () => {
  throw 'a bare string';
});

function catalog(settings: Partial<CatalogSettings> = {}, tools: NativeTool[] = [echo, progress, refuses, throwsSync, rejects, throwsString]) {
  const current: CatalogSettings = { collapseTools: false, disabledNativeTools: [], progressTracking: true, ...settings };
  const logged: Array<{ obj: object; msg: string }> = [];
  const c = new ToolCatalog({ nativeTools: tools, settings: () => current, log: { error: (obj, msg) => logged.push({ obj, msg }) } });
  return { c, current, logged };
}

const names = (json: string) => (JSON.parse(json) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
const payload = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text) as Record<string, unknown>;

describe('ToolCatalog surfaces', () => {
  it('lists enabled native tools in order (classic) and the meta-tools plus progress (collapsed)', () => {
    const { c } = catalog({ disabledNativeTools: ['refuses'] });
    assert.deepEqual(names(c.toolsListResultJson('classic')), ['echo', 'progress', 'throws', 'rejects', 'throws_string']);
    assert.deepEqual(names(c.toolsListResultJson('collapsed')), ['search_tools', 'get_tool_schema', 'call_tool', 'progress']);
    const def = JSON.parse(c.toolsListResultJson('classic')).tools[0];
    assert.deepEqual(Object.keys(def).sort(), ['description', 'inputSchema', 'name']);
  });

  it('hides progress everywhere when progress_tracking is off', () => {
    const { c } = catalog({ progressTracking: false });
    assert.ok(!names(c.toolsListResultJson('classic')).includes('progress'));
    assert.deepEqual(names(c.toolsListResultJson('collapsed')), ['search_tools', 'get_tool_schema', 'call_tool']);
  });

  it('picks collapsed for collapse_tools or a session that needs meta-tools, per session', () => {
    const { c, current } = catalog();
    assert.equal(c.surfaceFor({ requiresMetaTools: false }), 'classic');
    assert.equal(c.surfaceFor({ requiresMetaTools: true }), 'collapsed');
    current.collapseTools = true;
    assert.equal(c.surfaceFor({ requiresMetaTools: false }), 'collapsed');
  });

  it('refresh signals only real changes, including a bare collapse_tools toggle', () => {
    const { c, current } = catalog();
    let fired = 0;
    const sub = c.onChanged(() => fired++);
    assert.equal(c.refresh(), false);
    current.collapseTools = true;
    assert.equal(c.refresh(), true, 'the lists are unchanged but sessions now see another surface');
    current.disabledNativeTools = ['echo'];
    assert.equal(c.refresh(), true);
    assert.ok(!names(c.toolsListResultJson('classic')).includes('echo'));
    current.progressTracking = false;
    assert.equal(c.refresh(), true);
    assert.equal(c.refresh(), false);
    assert.equal(fired, 3);
    sub.dispose();
    current.collapseTools = false;
    c.refresh();
    assert.equal(fired, 3, 'a disposed listener hears nothing');
  });

  it('refuses reserved and duplicate native names', () => {
    assert.throws(() => catalog({}, [tool('a__b', () => ({}))]), /reserved/);
    assert.throws(() => catalog({}, [tool('call_tool', () => ({}))]), /reserved/);
    assert.throws(() => catalog({}, [echo, echo]), /duplicate/);
  });
});

describe('ToolCatalog dispatch', () => {
  it('passes arguments and the caller to the handler and wraps the value', async () => {
    const { c } = catalog();
    const r = await call(c, 'echo', { value: 'v' }, caller);
    assert.equal(r.isError, false);
    assert.deepEqual(payload(r), { args: { value: 'v' }, session: 'm-1' });
  });

  it('turns a ToolError into {error, code, ...extra}', async () => {
    const { c, logged } = catalog();
    const r = await call(c, 'refuses', {}, caller);
    assert.equal(r.isError, true);
    assert.deepEqual(payload(r), { error: 'not today', code: 'busy', retry_after_s: 5 });
    assert.equal(logged.length, 0, 'a ToolError is the caller’s problem, not a bug to log');
  });

  it('turns a domain ApiError into the same tool error under its own code; a known channel error too; nothing is logged', async () => {
    const { c, logged } = catalog({}, [domain]);
    const r = await call(c, 'domain', {}, caller);
    assert.equal(r.isError, true);
    assert.deepEqual(payload(r), { error: 'taken already', code: 'conflict', reason: 'exists', retry_after_s: 2 });
    assert.deepEqual(payload(await call(c, 'domain', { value: 'channel' }, caller)), { error: 'pty host exited', code: 'unavailable' });
    assert.deepEqual(payload(await call(c, 'domain', { value: 'legacy' }, caller)), { error: 'an old-style refusal', code: 'invalid_input' });
    assert.equal(logged.length, 0);
  });

  it('checks the arguments against the input schema before the handler: a wrong type is invalid_input naming the field', async () => {
    const { c, logged } = catalog();
    const r = await call(c, 'echo', { value: 42 }, caller);
    assert.equal(r.isError, true);
    assert.deepEqual(payload(r), { error: 'value must be a string', code: 'invalid_input', field: 'value' });
    assert.deepEqual(
      payload(await call(c, 'echo', { value: 'v', extra: [1] }, caller)),
      { args: { value: 'v', extra: [1] }, session: 'm-1' },
      'unknown arguments pass',
    );
    assert.deepEqual(payload(await call(c, 'echo', { value: null }, caller)), { args: {}, session: 'm-1' }, 'an optional argument sent as null is absent');
    assert.equal(logged.length, 0);
  });

  it('turns a throw, a rejection and a thrown non-Error into internal isError results and logs them', async () => {
    const { c, logged } = catalog();
    assert.deepEqual(payload(await call(c, 'throws', {}, caller)), { error: "Tool 'throws' failed: cannot read properties of undefined", code: 'internal' });
    assert.deepEqual(payload(await call(c, 'rejects', {}, caller)), { error: "Tool 'rejects' failed: disk on fire", code: 'internal' });
    const bare = await call(c, 'throws_string', {}, caller);
    assert.equal(bare.isError, true);
    assert.deepEqual(payload(bare), { error: "Tool 'throws_string' failed: a bare string", code: 'internal' });
    assert.deepEqual(
      logged.map((l) => (l.obj as { tool: string }).tool),
      ['throws', 'rejects', 'throws_string'],
    );
  });

  it('names unknown tools with the available list, refuses disabled ones and unconfigured upstreams', async () => {
    const { c } = catalog({ disabledNativeTools: ['rejects', 'throws', 'throws_string'] });
    assert.deepEqual(payload(await call(c, 'nope', {}, caller)), {
      error: "Unknown tool 'nope'. Available: echo, progress, refuses, search_tools, get_tool_schema, call_tool",
      code: 'not_found',
    });
    assert.deepEqual(payload(await call(c, 'rejects', {}, caller)), { error: "Tool 'rejects' is disabled by configuration", code: 'forbidden' });
    assert.deepEqual(payload(await call(c, 'gh__create_issue', {}, caller)), { error: "Unknown upstream 'gh'", code: 'not_found' });
    assert.deepEqual(payload(await call(c, '__x', {}, caller)), {
      error: "Tool name '__x' lacks upstream prefix (expected '{upstream}__{tool}')",
      code: 'invalid_input',
    });
  });

  it('re-applies the filters when a meta-tool dispatches, and searches only enabled tools', async () => {
    const { c, current } = catalog({ collapseTools: true });
    const ok = await call(c, 'call_tool', { tool_name: 'echo', arguments: { value: 'x' } }, caller);
    assert.deepEqual(payload(ok), { args: { value: 'x' }, session: 'm-1' });
    current.disabledNativeTools = ['echo'];
    c.refresh();
    const refused = await call(c, 'call_tool', { tool_name: 'echo', arguments: {} }, caller);
    assert.equal(refused.isError, true);
    assert.deepEqual(payload(refused), { error: "Tool 'echo' is disabled by configuration", code: 'forbidden' });
    const found = payload(await call(c, 'search_tools', { query: 'echo test tool' }, caller));
    assert.ok(!(found['results'] as Array<{ name: string }>).some((r) => r.name === 'echo'), JSON.stringify(found));
  });
});

describe('ToolCatalog per-project upstream allowlist', () => {
  /** A scripted upstream source (the hub's side is covered end to end in hubEndToEnd.test.ts): two upstreams, one tool each. */
  function withUpstreams() {
    const defs = [
      { name: 'gh__create_issue', description: 'Create an issue on GitHub.', inputSchema: { type: 'object' } },
      { name: 'fs__read_file', description: 'Read a file from disk.', inputSchema: { type: 'object' } },
    ];
    const calls: string[] = [];
    const upstreams = {
      listFragment: () => JSON.stringify(defs).slice(1, -1),
      definitions: () => defs,
      settleGate: () => null,
      call: async (upstream: string, name: string) => {
        calls.push(`${upstream}/${name}`);
        return { content: [{ type: 'text', text: 'ran' }], isError: false } as CallToolResult;
      },
      onChanged: () => ({ dispose() {} }),
    };
    const current: CatalogSettings = { collapseTools: false, disabledNativeTools: [], progressTracking: true };
    return { c: new ToolCatalog({ nativeTools: [echo], settings: () => current, upstreams }), calls };
  }
  const listed = (bytes: Buffer) => names(bytes.toString('utf8').slice(0, -1));

  it('aggregated_tools_for_repo_filters_by_allowlist / test_mcp_tools_list_filtered_by_repo_mcp_upstreams', () => {
    const { c } = withUpstreams();
    assert.deepEqual(listed(c.toolsListResponseTail('classic')), ['echo', 'gh__create_issue', 'fs__read_file']);
    assert.deepEqual(listed(c.toolsListResponseTail('classic', new Set(['fs']))), ['echo', 'fs__read_file']);
    assert.deepEqual(listed(c.toolsListResponseTail('classic', new Set())), ['echo'], 'an empty allowlist keeps the natives only');
    assert.equal(c.toolsListResponseTail('classic', new Set(['fs'])), c.toolsListResponseTail('classic', new Set(['fs'])), 'narrowed once per allowlist');
  });

  it('test_mcp_tool_call_rejects_project_disabled_upstream: direct, through call_tool, and hidden from search and schema', async () => {
    const { c, calls } = withUpstreams();
    const project: CallerContext = { ...caller, upstreamAllowlist: new Set(['fs']) };
    const refused = await call(c, 'gh__create_issue', {}, project);
    assert.equal(refused.isError, true);
    assert.deepEqual(payload(refused), { error: "Upstream 'gh' is not enabled for this project", code: 'forbidden' });
    assert.deepEqual(payload(await call(c, 'call_tool', { tool_name: 'gh__create_issue' }, project)), {
      error: "Upstream 'gh' is not enabled for this project",
      code: 'forbidden',
    });
    assert.deepEqual(calls, [], 'nothing reached the hub');
    assert.equal((await call(c, 'fs__read_file', {}, project)).isError, false);
    assert.deepEqual(calls, ['fs/read_file']);
    const found = payload(await call(c, 'search_tools', { query: 'create issue github read file' }, project));
    assert.deepEqual(
      (found['results'] as Array<{ name: string }>).map((r) => r.name),
      ['fs__read_file'],
    );
    assert.equal((await call(c, 'get_tool_schema', { tool_name: 'gh__create_issue' }, project)).isError, true);
    assert.equal((await call(c, 'get_tool_schema', { tool_name: 'gh__create_issue' }, caller)).isError, false, 'no allowlist: every upstream');
  });
});
