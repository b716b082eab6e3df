/**
 * The proxy hub end to end: a real tuicd, real upstreams (server-everything over stdio and
 * Streamable HTTP, server-filesystem over stdio), driven through /mcp, /mcp/upstreams* and /events.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import {
  everythingStdio,
  filesystemStdio,
  httpServer,
  processAlive,
  startEverythingHttp,
  writeUpstreams,
  type ServerEntry,
} from '../../helpers/upstreamServers.js';
import { initialize, McpStream, rpc } from '../mcp/transport/mcpHttp.js';

interface StatusRow {
  name: string;
  status: string;
  pid: number | null;
  tool_count: number;
  tools: string[];
  metrics: { call_count: number; error_count: number; last_latency_ms: number };
  last_error: string | null;
  transport: Record<string, unknown>;
}

async function statusRows(t: Tuicd): Promise<StatusRow[]> {
  const answer = await t.socket('GET', '/mcp/upstream-status');
  assert.equal(answer.status, 200, answer.text);
  return answer.json<{ upstreams: StatusRow[] }>().upstreams;
}

async function waitForRows(t: Tuicd, pred: (rows: StatusRow[]) => boolean, what: string, timeoutMs = 15_000): Promise<StatusRow[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await statusRows(t);
    if (pred(rows)) return rows;
    if (Date.now() > deadline) throw new Error(`upstream status never reached ${what}: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const toolNames = (answer: { json(): any }): string[] => answer.json().result.tools.map((x: { name: string }) => x.name);

async function callTool(t: Tuicd, name: string, args: object, headers: Record<string, string> = {}) {
  const answer = await rpc(t, 'tools/call', { name, arguments: args }, headers);
  assert.equal(answer.status, 200, answer.text);
  return answer.json().result as { content: Array<{ type: string; text: string }>; isError?: boolean; [k: string]: unknown };
}

async function putUpstreams(t: Tuicd, base: ServerEntry[], config: ServerEntry[]) {
  return t.socket('PUT', '/mcp/upstreams', JSON.stringify({ base: { servers: base }, config: { servers: config } }), { 'Content-Type': 'application/json' });
}

describe('proxy hub with real upstreams', () => {
  let t: Tuicd;
  let dir: string;
  let files: string;
  let servers: ServerEntry[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-hub-'));
    files = mkdtempSync(join(tmpdir(), 'tuicd-hub-files-'));
    writeFileSync(join(files, 'hello.txt'), 'hello from the filesystem upstream\n');
    servers = [
      everythingStdio('everything'),
      filesystemStdio('fs', files, { tool_filter: { mode: 'deny', patterns: ['write_*', 'edit_*', 'move_*', 'create_*'] } }),
    ];
    writeUpstreams(dir, servers);
    t = await Tuicd.start({ configDir: dir });
  });

  after(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  });

  test('once the boot connects are ready both upstreams are listed, namespaced, filters applied', async () => {
    // Not a settle-gate test (hubSettleGate.test.ts is): a loaded machine may start server-everything in over 3 s.
    await waitForRows(t, (rows) => rows.length === 2 && rows.every((r) => r.status === 'ready'), 'both ready', 30_000);
    const { id } = await initialize(t);
    const names = toolNames(await rpc(t, 'tools/list', {}, { 'Mcp-Session-Id': id }));
    assert.ok(names.includes('session'), 'natives stay');
    assert.ok(names.includes('everything__echo'), names.join(','));
    assert.ok(names.includes('fs__read_text_file') || names.includes('fs__read_file'), names.join(','));
    assert.ok(!names.some((n) => n.startsWith('fs__write_') || n.startsWith('fs__edit_')), 'denied tools are not listed');
    const rows = await statusRows(t);
    assert.deepEqual(
      rows.map((r) => [r.name, r.status]),
      [
        ['everything', 'ready'],
        ['fs', 'ready'],
      ],
    );
    assert.ok(rows.every((r) => typeof r.pid === 'number' && processAlive(r.pid)));
  });

  test('a proxied call returns the upstream result unchanged; a denied tool is refused at dispatch', async () => {
    const echo = await callTool(t, 'everything__echo', { message: 'through the hub' });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'Echo: through the hub' }]);
    const read = await callTool(t, 'fs__read_text_file', { path: join(files, 'hello.txt') });
    assert.match(read.content[0]!.text, /hello from the filesystem upstream/);
    const denied = await callTool(t, 'fs__write_file', { path: join(files, 'x'), content: 'no' });
    assert.equal(denied.isError, true);
    assert.match(denied.content[0]!.text, /Tool 'write_file' on upstream 'fs' is blocked by its allow\/deny filter/);
    const unknown = await callTool(t, 'nope__tool', {});
    assert.match(unknown.content[0]!.text, /Unknown upstream 'nope'/);
    const row = (await statusRows(t)).find((r) => r.name === 'everything')!;
    assert.ok(row.metrics.call_count >= 1);
  });

  test('collapsed surface: search_tools finds upstream tools, get_tool_schema and call_tool reach them', async () => {
    const { id } = await initialize(t, { clientInfo: { name: 'grok-shell-test', version: '1' } });
    const headers = { 'Mcp-Session-Id': id };
    const listed = toolNames(await rpc(t, 'tools/list', {}, headers));
    assert.ok(!listed.includes('everything__echo'), 'the collapsed surface lists only the meta-tools');
    const found = JSON.parse((await callTool(t, 'search_tools', { query: 'echo back the input message' }, headers)).content[0]!.text);
    assert.ok(
      found.results.some((r: { name: string }) => r.name === 'everything__echo'),
      JSON.stringify(found),
    );
    const schema = JSON.parse((await callTool(t, 'get_tool_schema', { tool_name: 'everything__echo' }, headers)).content[0]!.text);
    assert.equal(schema.inputSchema.type, 'object');
    const viaMeta = await callTool(t, 'call_tool', { tool_name: 'everything__echo', arguments: { message: 'meta' } }, headers);
    assert.deepEqual(viaMeta.content, [{ type: 'text', text: 'Echo: meta' }], 'passed through unchanged, not re-wrapped');
    const blocked = await callTool(t, 'call_tool', { tool_name: 'fs__write_file', arguments: {} }, headers);
    assert.match(blocked.content[0]!.text, /blocked by its allow\/deny filter/);
  });

  test('per-project allowlist (test_mcp_initialize_with_roots_populates_repo_path, test_mcp_tools_list_filtered_by_repo_mcp_upstreams): repo-settings.json and .tuic.json narrow list, search and dispatch', async (tt) => {
    const repoA = mkdtempSync(join(tmpdir(), 'tuicd-project-a-'));
    const repoB = mkdtempSync(join(tmpdir(), 'tuicd-project-b-'));
    tt.after(() => {
      rmSync(repoA, { recursive: true, force: true });
      rmSync(repoB, { recursive: true, force: true });
    });
    // Checked in with project B: only the filesystem upstream.
    writeFileSync(join(repoB, '.tuic.json'), JSON.stringify({ mcp_upstreams: ['fs'] }));
    const inRepo = async (repo: string, clientName = 'test-client') => {
      const { id } = await initialize(t, { clientInfo: { name: clientName, version: '1' }, roots: [{ uri: `file://${repo}`, name: 'repo' }] });
      return { 'Mcp-Session-Id': id };
    };
    const upstreamsListed = async (headers: Record<string, string>) =>
      [
        ...new Set(
          toolNames(await rpc(t, 'tools/list', {}, headers))
            .filter((n) => n.includes('__'))
            .map((n) => n.split('__')[0]),
        ),
      ].sort();

    const a = await inRepo(repoA);
    const b = await inRepo(repoB);
    const anywhere = { 'Mcp-Session-Id': (await initialize(t)).id };
    assert.deepEqual(await upstreamsListed(a), ['everything', 'fs'], 'no setting: every upstream');
    assert.deepEqual(await upstreamsListed(b), ['fs'], '.tuic.json narrows project B');
    assert.ok(toolNames(await rpc(t, 'tools/list', {}, b)).includes('session'), 'native tools stay');
    const refused = await callTool(t, 'everything__echo', { message: 'x' }, b);
    assert.equal(refused.isError, true);
    assert.match(refused.content[0]!.text, /Upstream 'everything' is not enabled for this project/);
    assert.match((await callTool(t, 'fs__read_text_file', { path: join(files, 'hello.txt') }, b)).content[0]!.text, /hello from the filesystem/);

    // The route writes repo-settings.json and tells open streams; project A now sees only server-everything.
    const stream = await McpStream.open({ socketPath: t.socketPath, headers: { ...a, Accept: 'text/event-stream' } });
    tt.after(() => stream.close());
    const set = await t.socket('POST', '/config/project-mcp-upstreams', JSON.stringify({ repoPath: repoA, upstreamNames: ['everything'] }), {
      'Content-Type': 'application/json',
    });
    assert.equal(set.status, 200, set.text);
    await stream.waitForMethod('notifications/tools/list_changed');
    assert.deepEqual(await upstreamsListed(a), ['everything']);
    assert.deepEqual(await upstreamsListed(anywhere), ['everything', 'fs'], 'a session with no repository is not narrowed');
    const saved = JSON.parse(readFileSync(join(dir, 'repo-settings.json'), 'utf8'));
    assert.deepEqual(saved[repoA].mcp_upstreams, ['everything']);
    assert.match(
      (await callTool(t, 'fs__read_text_file', { path: join(files, 'hello.txt') }, a)).content[0]!.text,
      /Upstream 'fs' is not enabled for this project/,
    );

    // The collapsed surface: search_tools and get_tool_schema see only what the project may call.
    const grokA = await inRepo(repoA, 'grok-shell-test');
    const found = JSON.parse((await callTool(t, 'search_tools', { query: 'read text file contents', limit: 100 }, grokA)).content[0]!.text) as {
      results: Array<{ name: string }>;
    };
    assert.ok(found.results.length > 0 && found.results.every((r) => !r.name.startsWith('fs__')), JSON.stringify(found));
    const schema = await callTool(t, 'get_tool_schema', { tool_name: 'fs__read_text_file' }, grokA);
    assert.match(schema.content[0]!.text, /not found/);
    const viaMeta = await callTool(t, 'call_tool', { tool_name: 'fs__read_text_file', arguments: { path: join(files, 'hello.txt') } }, grokA);
    assert.match(viaMeta.content[0]!.text, /Upstream 'fs' is not enabled for this project/);

    // The saved setting wins over the checked-in file; null means every upstream again.
    await t.socket('POST', '/config/project-mcp-upstreams', JSON.stringify({ repoPath: repoB, upstreamNames: null }), { 'Content-Type': 'application/json' });
    assert.deepEqual(await upstreamsListed(b), ['everything', 'fs']);
    await t.socket('POST', '/config/project-mcp-upstreams', JSON.stringify({ repoPath: repoA }), { 'Content-Type': 'application/json' });
    assert.deepEqual(await upstreamsListed(a), ['everything', 'fs']);

    for (const [body, message] of [
      [{}, 'repoPath is required'],
      [{ repoPath: 'relative/path' }, 'must be an absolute path'],
      [{ repoPath: repoA, upstreamNames: 'fs' }, "'upstreamNames' must be an array"],
    ] as const) {
      const bad = await t.socket('POST', '/config/project-mcp-upstreams', JSON.stringify(body), { 'Content-Type': 'application/json' });
      assert.equal(bad.status, 400, bad.text);
      const error = bad.json<{ error: string }>().error;
      assert.ok(error.includes(message), error);
    }
  });

  test('a save hot-reloads exactly what changed: an added HTTP upstream connects, unchanged stdio upstreams keep their process', async (tt) => {
    const http = await startEverythingHttp();
    tt.after(() => http.stop());
    const before = await statusRows(t);
    const { id } = await initialize(t);
    const stream = await McpStream.open({ socketPath: t.socketPath, headers: { 'Mcp-Session-Id': id, Accept: 'text/event-stream' } });
    const events = await SseClient.open({ socketPath: t.socketPath, path: '/events?types=upstream-status-changed' });
    tt.after(() => {
      stream.close();
      events.close();
    });
    const added = [...servers, httpServer('remote', http.url)];
    const put = await putUpstreams(t, servers, added);
    assert.equal(put.status, 200, put.text);
    assert.equal(put.text, 'null');
    await stream.waitForMethod('notifications/tools/list_changed');
    const names = toolNames(await rpc(t, 'tools/list', {}, { 'Mcp-Session-Id': id }));
    assert.ok(names.includes('remote__echo'), names.join(','));
    const viaHttp = await callTool(t, 'remote__echo', { message: 'over http' });
    assert.deepEqual(viaHttp.content, [{ type: 'text', text: 'Echo: over http' }]);
    await events.until(() => events.events.some((e) => JSON.parse(e.data).name === 'remote' && JSON.parse(e.data).status === 'ready'), 'remote ready event');
    const after = await statusRows(t);
    for (const name of ['everything', 'fs']) {
      assert.equal(after.find((r) => r.name === name)!.pid, before.find((r) => r.name === name)!.pid, `${name} was not restarted`);
    }
    assert.deepEqual(after.find((r) => r.name === 'remote')!.transport, { type: 'http', url: http.url });

    // Removing it again disconnects it; the others still keep their processes.
    const removed = await putUpstreams(t, added, servers);
    assert.equal(removed.status, 200, removed.text);
    await waitForRows(t, (rows) => !rows.some((r) => r.name === 'remote'), 'remote removed');
    assert.ok(!toolNames(await rpc(t, 'tools/list', {}, { 'Mcp-Session-Id': id })).includes('remote__echo'));
    await events.until(
      () => events.events.some((e) => JSON.parse(e.data).name === 'remote' && JSON.parse(e.data).status === 'disconnected'),
      'remote disconnected event',
    );
  });

  test('a changed upstream restarts (new pid, old process gone); reconnect restarts on demand; unknown names get 404', async () => {
    const old = (await statusRows(t)).find((r) => r.name === 'fs')!;
    const changed = servers.map((s) => (s.name === 'fs' ? { ...s, tool_filter: { mode: 'allow' as const, patterns: ['read_*', 'list_*'] } } : s));
    const put = await putUpstreams(t, servers, changed);
    assert.equal(put.status, 200, put.text);
    servers = changed;
    const rows = await waitForRows(
      t,
      (r) => r.find((x) => x.name === 'fs')?.status === 'ready' && r.find((x) => x.name === 'fs')!.pid !== old.pid,
      'fs restarted',
    );
    const fs = rows.find((r) => r.name === 'fs')!;
    assert.ok(
      fs.tools.every((n) => n.startsWith('read_') || n.startsWith('list_')),
      fs.tools.join(','),
    );
    for (let i = 0; i < 100 && processAlive(old.pid!); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(processAlive(old.pid!), false, 'the old upstream process was shut down');

    const everythingPid = rows.find((r) => r.name === 'everything')!.pid;
    const reconnect = await t.socket('POST', '/mcp/upstreams/reconnect', JSON.stringify({ name: 'everything' }), { 'Content-Type': 'application/json' });
    assert.equal(reconnect.status, 200, reconnect.text);
    await waitForRows(
      t,
      (r) => r.find((x) => x.name === 'everything')?.status === 'ready' && r.find((x) => x.name === 'everything')!.pid !== everythingPid,
      'everything reconnected',
    );
    const missing = await t.socket('POST', '/mcp/upstreams/reconnect', JSON.stringify({ name: 'ghost' }), { 'Content-Type': 'application/json' });
    assert.equal(missing.status, 404);
    assert.match(missing.text, /Upstream 'ghost' not found/);
  });

  test('an invalid save is refused with every error and changes nothing that runs', async () => {
    const before = await statusRows(t);
    const bad = [...servers, { ...everythingStdio('Bad Name') }, { ...httpServer('loop', 'ftp://example.com/mcp') }];
    const put = await putUpstreams(t, servers, bad);
    assert.equal(put.status, 400);
    assert.match(put.json().error, /^Invalid upstream config: /);
    assert.match(put.json().error, /Name 'Bad Name' is invalid/);
    assert.match(put.json().error, /URL 'ftp:\/\/example.com\/mcp' must use http:\/\/ or https:\/\/ scheme/);
    assert.deepEqual(
      (await statusRows(t)).map((r) => [r.name, r.pid]),
      before.map((r) => [r.name, r.pid]),
    );
  });

  test('stopping tuicd shuts every upstream process down', async () => {
    const pids = (await statusRows(t)).map((r) => r.pid).filter((p): p is number => p !== null);
    assert.ok(pids.length >= 2);
    await t.stop();
    for (let i = 0; i < 100 && pids.some(processAlive); i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(pids.filter(processAlive), [], 'no upstream outlives the server');
  });
});
