/**
 * The event map tells the truth: a real tuicd's /events stream, driven through its HTTP and MCP
 * routes (sessions, repositories, worktrees, config, the ui/progress/agent tools), sends only
 * events the map names, each payload valid against the map's schema; GET /openapi.json describes
 * the stream from the same map; POST /events/types is checked as declared.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Compile } from 'typebox/compile';

import { EventBus } from '../../../supervisor/events/eventBus.js';
import { EVENT_NAMES, EVENT_SCHEMAS, eventSchema } from '../../../supervisor/events/eventMap.js';
import { gitSandbox } from '../../helpers/gitRepo.js';
import type { GitSandbox } from '../../helpers/gitRepo.js';
import { SseClient } from '../../helpers/sseClient.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const JSON_HEADERS = { 'content-type': 'application/json' };
const MCP_HEADERS = { ...JSON_HEADERS, accept: 'application/json, text/event-stream' };

/** What one run of the scenario below must have produced (the other events may or may not occur). */
const EXPECTED = [
  'repositories-changed',
  'session-created',
  'term-alias-assigned',
  'session-state-changed',
  'pty-exit',
  'session-closed',
  'config-changed',
  'mcp-toast',
  'ui-tab',
  'progress-recorded',
  'peer-registered',
  'mcp-confirm',
  'mcp-confirm-resolved',
  'worktree-created',
  'worktree-removed',
  'head-changed',
  'repo-changed',
] as const;

describe('events: live payloads match the event map', () => {
  let sb: GitSandbox;
  let repo: string;
  let t: Tuicd;
  let sse: SseClient;
  let rpcId = 0;

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': 'app\n' });
    t = await Tuicd.start({ env: { SHELL: '/bin/sh', ...sb.env } });
    sse = await SseClient.open({ socketPath: t.socketPath, path: '/events?stream_id=payload-test' });
    await sse.until(() => sse.raw.startsWith('retry: '), 'the stream head');
  });
  after(async () => {
    sse.close();
    await t.stop();
    sb.cleanup();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const r = await t.socket(method, path, body === undefined ? undefined : JSON.stringify(body), body === undefined ? {} : JSON_HEADERS);
    return { status: r.status, text: r.text, json: () => r.json() };
  };
  const expectStatus = async (status: number, method: string, path: string, body?: unknown) => {
    const r = await call(method, path, body);
    assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
    return r;
  };
  const rpc = async (method: string, params: object, headers: Record<string, string> = {}) => {
    const r = await t.socket('POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }), { ...MCP_HEADERS, ...headers });
    assert.equal(r.status, 200, r.text);
    return { body: r.json(), headers: r.headers };
  };
  const tool = async (name: string, args: object, headers: Record<string, string> = {}) => {
    const { body } = await rpc('tools/call', { name, arguments: args }, headers);
    assert.notEqual(body.result.isError, true, JSON.stringify(body.result));
    return JSON.parse(body.result.content[0].text);
  };
  const seen = (name: string) => sse.events.some((e) => e.event === name);
  const waitFor = (name: string, timeoutMs = 10_000) => sse.until(() => seen(name), name, timeoutMs);

  it('every event the routes and tools cause is in the map, and its payload matches its schema', async () => {
    await expectStatus(200, 'PUT', '/config/repositories', { repos: { [repo]: {} } });

    // A session whose process exits by itself, and one closed by DELETE.
    const created = await expectStatus(201, 'POST', '/sessions', { cwd: repo, shell: '/bin/sh' });
    const exiting = created.json().session_id as string;
    await expectStatus(200, 'POST', `/sessions/${exiting}/write`, { data: 'exit 3\n' });
    await sse.until(
      () => sse.events.some((e) => e.event === 'session-closed' && JSON.parse(e.data).session_id === exiting),
      'the exited session closed',
      10_000,
    );
    const closed = (await expectStatus(201, 'POST', '/sessions', { cwd: repo, shell: '/bin/sh' })).json().session_id as string;
    await expectStatus(200, 'DELETE', `/sessions/${closed}`);

    await expectStatus(200, 'PUT', '/config', { suggest_followups: false });

    // The tools: a toast, a tab, a progress report, a registration, a confirm answered by us.
    await tool('ui', { action: 'toast', title: 'Built', message: 'all green', level: 'info', sound: true });
    await tool('ui', { action: 'tab', id: 'report', title: 'Report', html: '<p>ok</p>' });
    await tool('progress', { type: 'done', text: 'event payloads checked' });
    const init = await rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'payload-test', version: '1' } });
    const mcpSession = init.headers['mcp-session-id'] as string;
    await tool('agent', { action: 'register', name: 'payload-test' }, { 'mcp-session-id': mcpSession });
    const confirm = tool('ui', { action: 'confirm', title: 'Proceed?' });
    await waitFor('mcp-confirm');
    const ask = JSON.parse(sse.events.find((e) => e.event === 'mcp-confirm')!.data);
    await expectStatus(200, 'POST', '/mcp/confirm-response', { request_id: ask.request_id, confirmed: true });
    assert.deepEqual(await confirm, { confirmed: true });

    // Worktrees, and the repository watcher (a new branch checked out).
    await expectStatus(201, 'POST', '/worktrees', { base_repo: repo, branch_name: 'payload-1' });
    await expectStatus(200, 'DELETE', `/worktrees/payload-1?repoPath=${encodeURIComponent(repo)}&force=true`);
    sb.git(repo, 'checkout', '-q', '-b', 'side');
    sb.write(repo, { 'new.txt': 'x\n' });

    for (const name of EXPECTED) await waitFor(name);

    const validators = new Map(Object.entries(EVENT_SCHEMAS).map(([name, schema]) => [name, Compile(schema)]));
    for (const e of sse.events) {
      const v = validators.get(e.event);
      assert.ok(v, `"${e.event}" is not in the event map (supervisor/events/eventMap.ts): ${e.data}`);
      const data: unknown = JSON.parse(e.data);
      assert.ok(v.Check(data), `${e.event} ${e.data} does not match its schema: ${JSON.stringify([...v.Errors(data)].slice(0, 3))}`);
      assert.match(e.id ?? '', /^\d+$/, `${e.event} carries an id`);
    }

    // The two closes, as the schema describes them.
    const closes = sse.events.filter((e) => e.event === 'session-closed').map((e) => JSON.parse(e.data));
    assert.deepEqual(
      closes.map((c) => c.reason),
      ['exit', 'explicit_close'],
    );
    const exit = JSON.parse(sse.events.find((e) => e.event === 'pty-exit')!.data);
    assert.deepEqual(exit, { session_id: exiting, exit_code: 3 });
  });

  it('GET /openapi.json describes /events with every event of the map and its payload schema', async () => {
    const doc = (await expectStatus(200, 'GET', '/openapi.json')).json();
    const op = doc.paths['/events'].get;
    assert.equal(op.tags[0], 'events');
    assert.equal(op['x-stream'], 'sse');
    const answer = op.responses['200'].content['text/event-stream'].schema;
    const frames = new Map<string, any>(answer.oneOf.map((f: any) => [f.properties.event.const, f]));
    assert.deepEqual([...frames.keys()].sort(), [...EVENT_NAMES, 'lagged'].sort());
    for (const name of EVENT_NAMES) assert.deepEqual(frames.get(name).properties.data, JSON.parse(JSON.stringify(eventSchema(name))), name);
    assert.deepEqual(
      op.parameters.map((p: any) => [p.name, p.in]),
      [
        ['types', 'query'],
        ['stream_id', 'query'],
      ],
    );
    const types = doc.paths['/events/types'].post;
    assert.deepEqual(types.requestBody.content['application/json'].schema.required.sort(), ['stream_id', 'types']);
  });

  it('POST /events/types: 204 for a live stream, 404 for an unknown one, 400 naming the field for a wrong body', async () => {
    await expectStatus(204, 'POST', '/events/types', { stream_id: 'payload-test', types: ['config-changed'] });
    const before = sse.events.length;
    await expectStatus(201, 'POST', '/sessions', { cwd: repo, shell: '/bin/sh' });
    await expectStatus(200, 'PUT', '/config', { suggest_followups: true });
    await waitFor('config-changed');
    await sse.until(() => sse.events.length > before, 'the filtered stream');
    // A repository watcher's debounced event published before the filter changed may still be in
    // flight; what the filter must stop is the session-created caused after it.
    const after = sse.events.slice(before).map((e) => e.event);
    assert.ok(after.includes('config-changed'), `the named event arrives: ${after.join(', ')}`);
    assert.ok(!after.includes('session-created'), `an event the filter does not name is held back: ${after.join(', ')}`);
    const missing = await expectStatus(404, 'POST', '/events/types', { stream_id: 'no-such-stream', types: null });
    assert.deepEqual(missing.json(), { error: 'Stream not found', code: 'not_found' });
    const cases: Array<[unknown, string, string]> = [
      [{ stream_id: 'payload-test', types: [1] }, 'types[0]', 'types must be an array of strings'],
      [{ stream_id: 'payload-test', types: 'config-changed' }, 'types', 'types must be an array of strings'],
      [{ stream_id: '', types: [] }, 'stream_id', 'stream_id is required'],
      [{ stream_id: 7, types: [] }, 'stream_id', 'stream_id is required'],
      [{ types: [] }, 'stream_id', 'stream_id is required'],
    ];
    for (const [body, field, error] of cases) {
      const r = await expectStatus(400, 'POST', '/events/types', body);
      assert.deepEqual(r.json(), { error, code: 'invalid_input', field, in: 'body' }, JSON.stringify(body));
    }
    const notJson = await t.socket('POST', '/events/types', '{nope', JSON_HEADERS);
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json().code, 'invalid_input');
  });

  it('publish and on are typed by the map: unknown names and wrong payloads do not compile', () => {
    const bus = new EventBus();
    const heard: string[] = [];
    bus.on('session-closed', (_name, payload) => heard.push(payload.reason));
    bus.publish('session-closed', { session_id: 's', reason: 'killed' });
    bus.publish('repositories-changed');
    assert.deepEqual(heard, ['killed']);
    bus.dispose();
    // Each line below is a compile error (the build fails if one is not): the bus accepts none of them.
    const other = new EventBus();
    // @ts-expect-error: not an event tuicd publishes
    other.publish('no-such-event', {});
    // @ts-expect-error: session-closed carries its reason
    other.publish('session-closed', { session_id: 's' });
    // @ts-expect-error: exit_code is a number or null
    other.publish('pty-exit', { session_id: 's', exit_code: 'three' });
    // @ts-expect-error: a listener's payload is the event's own
    other.on('pty-exit', (_name, payload) => payload.reason);
    other.dispose();
  });
});
