import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { ConfigStore } from '../../../supervisor/config/configStore.js';
import { createConfigTool } from '../../../supervisor/mcp/tools/config.js';
import type { CallerContext, NativeTool } from '../../../supervisor/mcp/tools/nativeTool.js';
import { AI_PROMPT_SERVICES, PROMPT_LIBRARY_FILE, PromptLibrary } from '../../../supervisor/prompts/promptLibrary.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

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
const remote = caller({ isLoopback: false, listener: 'tcp' });
const call = async (tool: NativeTool, args: Record<string, unknown>, c: CallerContext = caller()) => tool.handler(args, c);

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-prompts-'));
  dirs.push(dir);
  const config = new ConfigStore({ path: join(dir, 'config.json') });
  await config.load();
  const prompts = new PromptLibrary(dir);
  return { dir, file: join(dir, PROMPT_LIBRARY_FILE), tool: createConfigTool({ config, prompts }) };
}

test('save_prompt, list_prompts and load_prompt round-trip through prompt-library.json (atomic, owner-only)', async () => {
  const { dir, file, tool } = await setup();
  assert.deepEqual(await call(tool, { action: 'list_prompts' }), { prompts: [] });
  assert.deepEqual(await call(tool, { action: 'save_prompt', id: 'review', label: 'Review', text: 'Review the diff.' }), { ok: true });
  assert.deepEqual(await call(tool, { action: 'save_prompt', id: 'fix', label: 'Fix', text: 'Fix the tests.', pinned: true }), { ok: true });
  // Saving an existing id replaces it where it stands.
  assert.deepEqual(await call(tool, { action: 'save_prompt', id: 'review', label: 'Review 2', text: 'Review again.' }), { ok: true });
  assert.deepEqual(await call(tool, { action: 'list_prompts' }), {
    prompts: [
      { id: 'review', label: 'Review 2', pinned: false },
      { id: 'fix', label: 'Fix', pinned: true },
    ],
  });
  assert.deepEqual(await call(tool, { action: 'load_prompt', id: 'fix' }), { id: 'fix', label: 'Fix', text: 'Fix the tests.', pinned: true });
  const disk = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(disk.prompts.length, 2);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.endsWith('.tmp')),
    [],
    'no temp file is left behind',
  );
  // Remote callers may read.
  assert.deepEqual(await call(tool, { action: 'load_prompt', id: 'review' }, remote), {
    id: 'review',
    label: 'Review 2',
    text: 'Review again.',
    pinned: false,
  });
});

test('prompt and AI prompt saves are refused from a non-loopback caller, writing nothing', async () => {
  const { file, tool } = await setup();
  await assert.rejects(call(tool, { action: 'save_prompt', id: 'x', label: 'X', text: 't' }, remote), {
    code: 'forbidden',
    message: /config action=save_prompt is only available to local callers/,
  });
  await assert.rejects(call(tool, { action: 'save_ai_prompt', service: 'diff_triage', prompt: 'p' }, remote), {
    code: 'forbidden',
    message: /config action=save_ai_prompt is only available to local callers/,
  });
  assert.equal(existsSync(file), false);
});

test('load_prompt of an unknown id, and bad prompt input, get clear errors', async () => {
  const { tool } = await setup();
  await assert.rejects(call(tool, { action: 'load_prompt', id: 'nope' }), { code: 'not_found', message: 'Prompt not found: nope' });
  await assert.rejects(call(tool, { action: 'load_prompt' }), { code: 'invalid_input', extra: { field: 'id' } });
  await assert.rejects(call(tool, { action: 'save_prompt', id: 'a', text: 't' }), { code: 'invalid_input', extra: { field: 'label' } });
  await assert.rejects(call(tool, { action: 'save_prompt', id: '../etc', label: 'L', text: 't' }), { code: 'invalid_input', extra: { field: 'id' } });
  await assert.rejects(call(tool, { action: 'save_prompt', id: 'big', label: 'L', text: 'x'.repeat(64 * 1024 + 1) }), {
    code: 'invalid_input',
    extra: { field: 'text' },
  });
});

test('AI prompts: the default until saved, a saved one is custom, null or empty resets; unknown services refused', async () => {
  const { tool } = await setup();
  const def = AI_PROMPT_SERVICES['diff_triage']!.defaultPrompt;
  assert.deepEqual(await call(tool, { action: 'list_ai_prompts' }), {
    services: [{ name: 'diff_triage', description: AI_PROMPT_SERVICES['diff_triage']!.description, is_custom: false }],
  });
  assert.deepEqual(await call(tool, { action: 'load_ai_prompt', service: 'diff_triage' }), {
    service: 'diff_triage',
    prompt: def,
    default_prompt: def,
    is_custom: false,
  });
  assert.deepEqual(await call(tool, { action: 'save_ai_prompt', service: 'diff_triage', prompt: 'Mine.' }), { ok: true });
  assert.deepEqual(await call(tool, { action: 'load_ai_prompt', service: 'diff_triage' }), {
    service: 'diff_triage',
    prompt: 'Mine.',
    default_prompt: def,
    is_custom: true,
  });
  assert.equal(((await call(tool, { action: 'list_ai_prompts' })) as any).services[0].is_custom, true);
  await call(tool, { action: 'save_ai_prompt', service: 'diff_triage', prompt: '' });
  assert.equal(((await call(tool, { action: 'load_ai_prompt', service: 'diff_triage' })) as any).is_custom, false);
  await call(tool, { action: 'save_ai_prompt', service: 'diff_triage', prompt: 'Again.' });
  await call(tool, { action: 'save_ai_prompt', service: 'diff_triage', prompt: null });
  assert.equal(((await call(tool, { action: 'load_ai_prompt', service: 'diff_triage' })) as any).is_custom, false);
  await assert.rejects(call(tool, { action: 'load_ai_prompt', service: 'poetry' }), { code: 'invalid_input', message: /Unknown AI prompt service 'poetry'/ });
});

test('a corrupt prompt-library.json is refused as it stands, never overwritten', async () => {
  const { file, tool } = await setup();
  writeFileSync(file, '{"prompts": [');
  await assert.rejects(call(tool, { action: 'list_prompts' }), { code: 'conflict', message: /prompt-library.json is not valid JSON/ });
  await assert.rejects(call(tool, { action: 'save_prompt', id: 'a', label: 'A', text: 't' }), { code: 'conflict' });
  assert.equal(readFileSync(file, 'utf8'), '{"prompts": [');
});

test('concurrent saves all land (serialized read-modify-write)', async () => {
  const { tool } = await setup();
  await Promise.all(Array.from({ length: 20 }, (_, i) => call(tool, { action: 'save_prompt', id: `p${i}`, label: `P${i}`, text: String(i) })));
  assert.equal(((await call(tool, { action: 'list_prompts' })) as any).prompts.length, 20);
});

test('saves through two libraries on one file (as two tuicd processes would) all land: each is a read-modify-write under the file lock', async () => {
  const { dir } = await setup();
  const libraries = [new PromptLibrary(dir), new PromptLibrary(dir)];
  await Promise.all(Array.from({ length: 20 }, (_, i) => libraries[i % 2]!.save({ id: `p${i}`, label: `P${i}`, text: String(i), pinned: false })));
  assert.equal((await libraries[0]!.list()).length, 20);
});

test('REST face: GET/PUT /config/prompt-library on a real tuicd, shared with the config tool file', async () => {
  const t = await Tuicd.start();
  try {
    const empty = await t.socket('GET', '/config/prompt-library');
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.json(), { prompts: [], ai_prompts: {} });
    const library = { prompts: [{ id: 'a', label: 'A', text: 'Do A.', pinned: true }], ai_prompts: { diff_triage: 'Triage.' } };
    const put = await t.socket('PUT', '/config/prompt-library', JSON.stringify(library), { 'content-type': 'application/json' });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json(), { ok: true });
    assert.deepEqual((await t.socket('GET', '/config/prompt-library')).json(), library);
    assert.deepEqual(JSON.parse(readFileSync(join(t.configDir, PROMPT_LIBRARY_FILE), 'utf8')), library);
    // Refusals: duplicate ids, an unknown service, a malformed entry; the file stays as it was.
    const dup = { prompts: [library.prompts[0], library.prompts[0]], ai_prompts: {} };
    const r1 = await t.socket('PUT', '/config/prompt-library', JSON.stringify(dup), { 'content-type': 'application/json' });
    assert.equal(r1.status, 400);
    assert.match(r1.json().error, /duplicate prompt id 'a'/);
    const r2 = await t.socket('PUT', '/config/prompt-library', JSON.stringify({ prompts: [], ai_prompts: { poetry: 'x' } }), {
      'content-type': 'application/json',
    });
    assert.equal(r2.status, 400);
    assert.match(r2.json().error, /Unknown AI prompt service 'poetry'/);
    const r3 = await t.socket('PUT', '/config/prompt-library', JSON.stringify({ prompts: [{ id: 'b' }], ai_prompts: {} }), {
      'content-type': 'application/json',
    });
    assert.equal(r3.status, 400);
    assert.equal(r3.json().code, 'invalid_input');
    assert.deepEqual((await t.socket('GET', '/config/prompt-library')).json(), library);
  } finally {
    await t.stop();
  }
});
