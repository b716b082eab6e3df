import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { ConfigStore } from '../../../../supervisor/config/configStore.js';
import { EventBus } from '../../../../supervisor/events/eventBus.js';
import type { RequestContext } from '../../../../supervisor/http/types.js';
import { ApiError } from '../../../../shared/apiError.js';
import type { CallerContext, NativeTool } from '../../../../supervisor/mcp/tools/nativeTool.js';
import { createProgressTool } from '../../../../supervisor/mcp/tools/progress.js';
import { PROGRESS_JOURNAL_FILE, ProgressJournal } from '../../../../supervisor/progress/progressJournal.js';
import { progressRoutes } from '../../../../supervisor/routes/progress.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PTY = 'pty-7';
const TUIC = '0b7e3f55-1d2a-4c6e-8f00-5a1b2c3d4e5f';
const SECRET = `ghp_${'A1b2C3d4E5'.repeat(3)}123456`;

function caller(over: Partial<CallerContext> = {}): CallerContext {
  return {
    isLoopback: true,
    listener: 'socket',
    mcpSessionId: null,
    tuicSession: null,
    boundSessionId: null,
    clientName: null,
    signal: new AbortController().signal,
    ...over,
  };
}
const call = async (tool: NativeTool, args: Record<string, unknown>, c: CallerContext = caller()) => tool.handler(args, c);

async function setup(configJson?: object) {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-progress-'));
  dirs.push(dir);
  if (configJson) writeFileSync(join(dir, 'config.json'), JSON.stringify(configJson));
  const config = new ConfigStore({ path: join(dir, 'config.json') });
  await config.load();
  const bus = new EventBus();
  const recorded: any[] = [];
  bus.on('progress-recorded', (_n, p) => recorded.push(p));
  const journalPath = join(dir, PROGRESS_JOURNAL_FILE);
  const progressJournal = new ProgressJournal({ path: journalPath });
  const tool = createProgressTool({ bus, config, progressJournal, sessionCwd: (id) => (id === PTY ? '/work/repo' : undefined) });
  return { dir, config, bus, recorded, journalPath, progressJournal, tool };
}

test('progress schema: type enum done|blocked, text ≤500, step ≤80, alwaysLoad meta, no actions', async () => {
  const { tool } = await setup();
  assert.deepEqual(tool.actions, []);
  assert.deepEqual(tool.definition._meta, { 'anthropic/alwaysLoad': true });
  const schema = tool.definition.inputSchema as any;
  assert.deepEqual(schema.required, ['type', 'text']);
  assert.deepEqual(schema.properties.type.enum, ['done', 'blocked']);
  assert.equal(schema.properties.text.maxLength, 500);
  assert.equal(schema.properties.step.maxLength, 80);
});

test('an entry from a bound caller is journaled against its PTY cwd and tuic_session, 0600, and published', async () => {
  const { tool, recorded, journalPath, progressJournal } = await setup();
  const result = (await call(tool, { type: 'done', text: 'tests pass', step: 'phase 1' }, caller({ tuicSession: TUIC, boundSessionId: PTY }))) as any;
  assert.equal(result.ok, true);
  const lines = readFileSync(journalPath, 'utf8').trim().split('\n');
  assert.equal(lines.length, 1);
  const entry = JSON.parse(lines[0]!);
  assert.equal(entry.id, result.id);
  assert.deepEqual(
    { ...entry, id: 'x', at_ms: 0 },
    { id: 'x', at_ms: 0, kind: 'done', project: '/work/repo', agent: TUIC, text: 'tests pass', step: 'phase 1', session_id: PTY },
  );
  assert.deepEqual(recorded, [{ entry }]);
  assert.equal(statSync(journalPath).mode & 0o777, 0o600);
  assert.deepEqual((await progressJournal.list({ project: '/work/repo' })).entries, [entry]);
});

test('an unbound caller reports as its client name against project "unknown", with no session_id', async () => {
  const { tool, recorded } = await setup();
  await call(tool, { type: 'blocked', text: 'need a token' }, caller({ clientName: 'claude-code' }));
  const entry = recorded[0].entry;
  assert.equal(entry.project, 'unknown');
  assert.equal(entry.agent, 'claude-code');
  assert.equal(entry.kind, 'blocked');
  assert.equal('session_id' in entry, false);
  assert.equal('step' in entry, false);
});

test('host-written kinds and unknown types are refused with a clear error; nothing is written', async () => {
  const { tool, recorded, journalPath } = await setup();
  for (const kind of ['intent', 'delegated', 'message']) {
    await assert.rejects(call(tool, { type: kind, text: 'x' }), {
      message: new RegExp(`Progress type '${kind}' is recorded by TUICommander itself`),
      code: 'invalid_input',
    });
  }
  await assert.rejects(call(tool, { type: 'started', text: 'x' }), { message: "Invalid type 'started'. Must be: done, blocked", code: 'invalid_input' });
  // Missing required arguments are named by the schema check, in the words every tool uses.
  await assert.rejects(call(tool, { text: 'x' }), { message: 'type is required', code: 'invalid_input', extra: { field: 'type' } });
  await assert.rejects(call(tool, { type: 'done' }), { message: 'text is required', code: 'invalid_input', extra: { field: 'text' } });
  await assert.rejects(call(tool, { type: 'done', text: '' }), /requires 'text'/);
  await assert.rejects(call(tool, { type: 'done', text: 42 }), { message: "'text' must be a string", extra: { field: 'text' } });
  await assert.rejects(call(tool, { type: 'done', text: 'x', step: ['a'] }), { message: "'step' must be a string", extra: { field: 'step' } });
  assert.equal(recorded.length, 0);
  assert.throws(() => statSync(journalPath), /ENOENT/);
});

test('over-long text and step are refused with the limit named', async () => {
  const { tool, recorded } = await setup();
  await assert.rejects(call(tool, { type: 'done', text: 'x'.repeat(501) }), { message: "'text' is 501 characters; the limit is 500" });
  await assert.rejects(call(tool, { type: 'done', text: 'ok', step: 's'.repeat(81) }), { message: "'step' is 81 characters; the limit is 80" });
  await call(tool, { type: 'done', text: 'x'.repeat(500), step: 's'.repeat(80) });
  assert.equal(recorded.length, 1);
});

test('redaction_precedes_progress_length_validation', async () => {
  const { tool, recorded } = await setup();
  // 470 chars of prose + a 40-char token: 511 raw, under 500 once the token becomes its marker.
  const text = `${'w'.repeat(470)} ${SECRET}`;
  assert.ok(text.length > 500);
  await call(tool, { type: 'done', text });
  const stored = recorded[0].entry.text as string;
  assert.ok(stored.length <= 500);
  assert.ok(!stored.includes(SECRET));
  assert.match(stored, /\[REDACTED:/);
});

test('every_progress_journal_write_redacts_secrets (text, step and agent, also for direct journal writers)', async () => {
  const { tool, journalPath, progressJournal } = await setup();
  await call(tool, { type: 'blocked', text: `token is ${SECRET}`, step: `use ${SECRET.slice(0, 40)}` });
  await progressJournal.append({ kind: 'intent', project: '/p', agent: `agent ${SECRET}`, text: `intent ${SECRET}` });
  const file = readFileSync(journalPath, 'utf8');
  assert.ok(!file.includes(SECRET), file);
  assert.equal(file.match(/\[REDACTED:/g)?.length, 4);
});

test('progress_names_are_bounded_before_storage', async () => {
  const { tool, recorded } = await setup();
  await call(tool, { type: 'done', text: 'x' }, caller({ clientName: 'n'.repeat(300) }));
  assert.equal(recorded[0].entry.agent, 'n'.repeat(80));
});

test('progress_tracking:false refuses a call that slipped past the hidden tool', async () => {
  const { tool, recorded } = await setup({ progress_tracking: false });
  await assert.rejects(call(tool, { type: 'done', text: 'x' }), /^ToolError: progress_tracking_disabled: Progress collection is off/);
  await assert.rejects(call(tool, { type: 'done', text: 'x' }), { code: 'forbidden' });
  assert.equal(recorded.length, 0);
});

test('journal: bounded per project with atomic compaction; survives a reload and skips a torn line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-journal-'));
  dirs.push(dir);
  const path = join(dir, PROGRESS_JOURNAL_FILE);
  const journal = new ProgressJournal({ path, keepPerProject: 5, compactSlack: 2 });
  for (let i = 0; i < 8; i++) await journal.append({ kind: 'done', project: '/a', agent: 'x', text: `a${i}` });
  await journal.append({ kind: 'done', project: '/b', agent: 'x', text: 'b0' });
  // 8 > 5 + 2 triggered one compaction down to the newest 5 of /a.
  const a = await journal.list({ project: '/a', limit: 100 });
  assert.deepEqual(
    a.entries.map((e) => e.text),
    ['a7', 'a6', 'a5', 'a4', 'a3'],
  );
  assert.equal(a.total, 5);
  assert.equal(readFileSync(path, 'utf8').trim().split('\n').length, 6);
  assert.equal(statSync(path).mode & 0o777, 0o600);

  writeFileSync(path, readFileSync(path, 'utf8') + '{"id":"torn', { flag: 'w' });
  const reloaded = new ProgressJournal({ path, keepPerProject: 5, compactSlack: 2 });
  const all = await reloaded.list({ limit: 100 });
  assert.deepEqual(
    all.entries.map((e) => e.text),
    ['b0', 'a7', 'a6', 'a5', 'a4', 'a3'],
  );
  assert.deepEqual(
    (await reloaded.list({ limit: 2 })).entries.map((e) => e.text),
    ['b0', 'a7'],
  );
});

test('GET /progress/list: newest first, filtered by project, limit validated', async () => {
  const { tool, progressJournal } = await setup();
  for (const text of ['one', 'two', 'three']) await call(tool, { type: 'done', text }, caller({ tuicSession: TUIC, boundSessionId: PTY }));
  await call(tool, { type: 'done', text: 'elsewhere' });
  const [route] = progressRoutes(progressJournal);
  assert.ok(route && route.method === 'GET' && route.pattern === '/progress/list');
  const get = async (qs: string) => (route.handler as (c: RequestContext) => Promise<any>)({ query: new URLSearchParams(qs) } as RequestContext);
  const page = (await get('project=/work/repo&limit=2')).body;
  assert.deepEqual(
    page.entries.map((e: any) => e.text),
    ['three', 'two'],
  );
  assert.equal(page.total, 3);
  assert.deepEqual(
    (await get('')).body.entries.map((e: any) => e.text),
    ['elsewhere', 'three', 'two', 'one'],
  );
  for (const bad of ['limit=0', 'limit=101', 'limit=abc']) {
    await assert.rejects(
      get(bad),
      (e: unknown) => e instanceof ApiError && e.code === 'invalid_input' && /limit must be an integer between 1 and 100/.test(e.message),
    );
  }
});
