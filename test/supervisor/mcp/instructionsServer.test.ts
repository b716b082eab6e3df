/**
 * The instructions a real tuicd hands out at initialize (and on GET /mcp/instructions): the pinned
 * Submit and Worktrees rules in both modes, the collapsed guide only when collapse_tools is on, and
 * the live session list.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { SUBMIT_RULE, WORKTREES_RULE } from '../../../supervisor/mcp/instructions.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';
import { initialize } from './transport/mcpHttp.js';

let t: Tuicd;
const work = mkdtempSync(join(tmpdir(), 'tuicd-instr-'));

before(async () => {
  t = await Tuicd.start();
});
after(async () => {
  await t?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function initializeInstructions(): Promise<string> {
  const { answer } = await initialize(t);
  assert.equal(answer.status, 200);
  const instructions = (answer.json() as { result: { instructions?: unknown } }).result.instructions;
  assert.equal(typeof instructions, 'string');
  return instructions as string;
}

async function putConfig(partial: object): Promise<void> {
  const r = await t.socket('PUT', '/config', JSON.stringify(partial), { 'content-type': 'application/json' });
  assert.equal(r.status, 200, r.text);
}

test('initialize_instructions_pin_the_one_call_submit_rule_in_both_modes, through a real tuicd', async () => {
  const classic = await initializeInstructions();
  assert.match(classic, /^# TUICommander v\d+\.\d+\.\d+\S*\n/);
  assert.ok(classic.includes(`- ${SUBMIT_RULE}\n`));
  assert.ok(classic.includes(`- ${WORKTREES_RULE}\n`));
  assert.ok(!classic.includes('search_tools'));
  const viaGet = await t.socket('GET', '/mcp/instructions');
  assert.equal((viaGet.json() as { instructions: string }).instructions, classic, 'GET /mcp/instructions renders the same text');

  await putConfig({ collapse_tools: true });
  try {
    const collapsed = await initializeInstructions();
    assert.ok(collapsed.includes(`- ${SUBMIT_RULE}\n`), 'the same Submit line, byte for byte');
    assert.ok(collapsed.includes(`- ${WORKTREES_RULE}\n`));
    assert.match(collapsed, /search_tools[^\n]*get_tool_schema[^\n]*call_tool/);
  } finally {
    await putConfig({ collapse_tools: false });
  }
});

test('the live session list in the instructions: a new session appears by its 8-char id, alias and cwd', async () => {
  const created = await t.socket('POST', '/sessions', JSON.stringify({ cwd: work, shell: '/bin/sh' }));
  assert.equal(created.status, 201, created.text);
  const { session_id: id, alias } = created.json() as { session_id: string; alias: string };
  try {
    const text = await initializeInstructions();
    assert.ok(text.includes(`\n- ${id.slice(0, 8)} ${alias} ${work}\n`), `session ${id} listed by short id, alias and cwd:\n${text}`);
    assert.ok(!text.includes(id), 'only the short id');
  } finally {
    await t.socket('DELETE', `/sessions/${id}`);
  }
});
