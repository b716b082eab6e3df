import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { ConfigStore } from '../../../../supervisor/config/configStore.js';
import { redactForClient } from '../../../../supervisor/config/secrets.js';
import { createConfigTool } from '../../../../supervisor/mcp/tools/config.js';
import type { CallerContext, NativeTool } from '../../../../supervisor/mcp/tools/nativeTool.js';
import { PromptLibrary } from '../../../../supervisor/prompts/promptLibrary.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const HASH = '$2b$12$abcdefghijklmnopqrstuuQ6l2n1bJYl4mFq7gq8mO1O9s1vXyZ2a';

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

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'tuicd-configtool-'));
  dirs.push(dir);
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify({ services: { auth: { username: 'me', password_hash: HASH }, server: { enabled: true, port: 9999 } } }));
  const config = new ConfigStore({ path });
  await config.load();
  return { path, config, tool: createConfigTool({ config, prompts: new PromptLibrary(dir) }) };
}

test('test_config_strips_password_hash: get is exactly the GET /config view', async () => {
  const { config, tool } = await setup();
  const got: any = await call(tool, { action: 'get' });
  assert.equal(got.services.auth.password_hash, undefined);
  assert.equal(got.services.auth.password_hash_exists, true);
  assert.ok(!JSON.stringify(got).includes(HASH));
  // Remote readers may read (the HTTP layer authenticated them).
  assert.deepEqual(await call(tool, { action: 'get' }, caller({ isLoopback: false, listener: 'tcp' })), got);
  assert.deepEqual(got, redactForClient(config.get()));
});

test('save deep-merges a partial onto the file and keeps untouched siblings and secrets', async () => {
  const { path, config, tool } = await setup();
  assert.deepEqual(await call(tool, { action: 'save', config: { collapse_tools: true, services: { server: { port: 9100 } } } }), { ok: true });
  const disk = JSON.parse(readFileSync(path, 'utf8'));
  assert.equal(disk.collapse_tools, true);
  assert.equal(disk.services.server.port, 9100);
  assert.equal(disk.services.server.enabled, true, 'a partial save must not turn remote access off');
  assert.equal(disk.services.auth.password_hash, HASH);
  assert.equal(config.get().collapse_tools, true);
});

test('test_config_save_rejects_non_loopback, a type mismatch and a missing object, writing nothing', async () => {
  const { path, tool } = await setup();
  const before = readFileSync(path, 'utf8');
  await assert.rejects(call(tool, { action: 'save', config: { collapse_tools: true } }, caller({ isLoopback: false, listener: 'tcp' })), {
    message: /only available to local callers/,
    code: 'forbidden',
  });
  await assert.rejects(call(tool, { action: 'save', config: { collapse_tools: 'yes' } }), /^ToolError: Invalid config: collapse_tools/);
  await assert.rejects(call(tool, { action: 'save', config: { collapse_tools: 'yes' } }), { code: 'invalid_input' });
  await assert.rejects(call(tool, { action: 'save' }), { message: /requires 'config': an object/, code: 'invalid_input', extra: { field: 'config' } });
  await assert.rejects(call(tool, { action: 'save', config: [1] }), {
    message: /requires 'config': an object/,
    code: 'invalid_input',
    extra: { field: 'config' },
  });
  assert.equal(readFileSync(path, 'utf8'), before);
});

test('config lists the settings and prompt library actions, and nothing else', async () => {
  const { tool } = await setup();
  const actions = ['get', 'save', 'list_ai_prompts', 'load_ai_prompt', 'save_ai_prompt', 'list_prompts', 'load_prompt', 'save_prompt'];
  assert.deepEqual(tool.actions, actions);
  await assert.rejects(call(tool, { action: 'delete_prompt' }), {
    message: `Unknown action 'delete_prompt' for tool 'config'. Available: ${actions.join(', ')}`,
  });
});
