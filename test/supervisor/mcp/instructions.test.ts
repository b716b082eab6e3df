/**
 * initialize.instructions: the rules it owns (Submit, Worktrees, markers, live state) and the one
 * it obeys — nothing a tool description already says is said again, in either direction.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { textEnvelope } from '../../../shared/mcpEnvelope.js';
import { renderInstructions, SUBMIT_RULE, WORKTREES_RULE } from '../../../supervisor/mcp/instructions.js';
import type { InstructionContext } from '../../../supervisor/mcp/surface.js';
import { createMetaTools } from '../../../supervisor/mcp/tools/meta.js';
import { ACTION_LINE } from '../../../supervisor/mcp/tools/nativeTool.js';
import { instructionContext, nativeTools } from './surfaceFixtures.js';

/** The Submit rule as pinned: a change to it must be deliberate (it is what stopped agents splitting submits). */
const PINNED_SUBMIT_RULE =
  "Submit: to give another terminal's agent a prompt or command, make one `session action=submit` call with the complete text. Never split it into `action=input` text and a separate Enter, and never poll the screen to decide when to press Enter.";

const SURFACES = ['classic', 'collapsed'] as const;

/** Every rendering the server can produce from the measurement fixtures, flags on and off. */
function everyRendering(): Array<{ label: string; text: string }> {
  const out: Array<{ label: string; text: string }> = [];
  for (const surface of SURFACES) {
    for (const load of ['empty', 'loaded'] as const) {
      for (const flags of [true, false]) {
        const ctx: InstructionContext = { ...instructionContext(surface, load), progressTracking: flags, intentMarkers: flags, suggestFollowups: flags };
        out.push({ label: `${surface}/${load}/${flags ? 'flags on' : 'flags off'}`, text: renderInstructions(ctx) });
      }
    }
  }
  return out;
}

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

test('initialize_instructions_pin_the_one_call_submit_rule_in_both_modes', () => {
  assert.equal(SUBMIT_RULE, PINNED_SUBMIT_RULE);
  for (const { label, text } of everyRendering()) {
    assert.equal(occurrences(text, `- ${PINNED_SUBMIT_RULE}\n`), 1, `${label}: the Submit rule, byte-exact, once`);
    assert.equal(occurrences(text, `- ${WORKTREES_RULE}\n`), 1, `${label}: the Worktrees rule once`);
    assert.match(WORKTREES_RULE, /never run `git worktree add` or `git worktree remove` yourself/);
  }
});

test('the header names the version, and the connection acknowledgement is asked for once per connection', () => {
  const text = renderInstructions({ ...instructionContext('classic', 'empty'), version: '9.8.7' });
  assert.equal(text.split('\n')[0], '# TUICommander v9.8.7');
  assert.equal(occurrences(text, '`TUICommander v9.8.7 is connected.`'), 1);
  assert.match(text, /Once per connection, never once per turn\./);
});

test('collapsed mode explains search_tools → get_tool_schema → call_tool; classic mode does not mention them', () => {
  const collapsed = renderInstructions(instructionContext('collapsed', 'empty'));
  const classic = renderInstructions(instructionContext('classic', 'empty'));
  const order = ['search_tools', 'get_tool_schema', 'call_tool'].map((n) => collapsed.indexOf(n));
  assert.ok(order.every((i) => i > 0) && order[0]! < order[1]! && order[1]! < order[2]!, 'the three steps, in order');
  for (const n of ['search_tools', 'get_tool_schema', 'call_tool']) assert.ok(!classic.includes(n), `classic has no ${n}`);
});

test('intent and suggest markers and the Progress section appear only when switched on', () => {
  const on = renderInstructions(instructionContext('classic', 'empty'));
  assert.match(on, /`intent: <what you are doing> \(<title of at most 3 words>\)`/);
  assert.match(on, /`suggest: \[ A \| B \| C \]`/);
  assert.match(on, /\n## Progress — mandatory\n/);
  const off = renderInstructions({ ...instructionContext('classic', 'empty'), intentMarkers: false, suggestFollowups: false, progressTracking: false });
  assert.ok(!off.includes('intent:'));
  assert.ok(!off.includes('suggest:'));
  assert.ok(!off.includes('Progress'));
  const absent = renderInstructions({ version: '1.0.0', surface: 'classic', progressTracking: false, sessions: [], repos: [], peerCount: 0 });
  assert.ok(!absent.includes('intent:') && !absent.includes('suggest:'), 'absent flags mean off');
});

test('live state: sessions by 8-char id, alias and cwd; repos; peer count — each only when there is some', () => {
  const text = renderInstructions({
    version: '1.0.0',
    surface: 'classic',
    progressTracking: false,
    sessions: [
      { session_id: '0123456789abcdef', cwd: '/srv/app', alias: 'app-1' },
      { session_id: 'fedcba9876543210', cwd: '/tmp' },
    ],
    repos: ['/srv/app', '/srv/lib'],
    peerCount: 3,
  });
  assert.ok(text.includes('\n## Sessions (2)\n- 01234567 app-1 /srv/app\n- fedcba98 /tmp\n'), text);
  assert.ok(text.includes('\n## Repos (2)\n- /srv/app\n- /srv/lib\n'), text);
  assert.ok(text.includes('\nConnected peer agents: 3\n'), text);
  assert.ok(!text.includes('0123456789'), 'full ids are not repeated');

  const empty = renderInstructions(instructionContext('classic', 'empty'));
  for (const absent of ['## Sessions', '## Repos', 'peer']) assert.ok(!empty.includes(absent), `empty state has no ${absent}`);
});

// ---------------------------------------------------------------------------------------------
// instructions_do_not_repeat_what_tool_descriptions_already_say

/** Sentences of at least this many words count; shorter ones ("Actions:") are shared vocabulary, not statements. */
const MIN_WORDS = 6;

function normalize(text: string): string {
  return text.toLowerCase().replace(/[`*_]/g, '').replace(/\s+/g, ' ').trim();
}

/** Sentences (split at sentence ends and line breaks, list markers dropped) with at least MIN_WORDS words. */
function statements(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((s) => normalize(s.replace(/^\s*(?:[-•]|#+)\s*/, '')))
    .filter((s) => s.split(' ').length >= MIN_WORDS);
}

/** Each statement of `from` found inside `into`. */
function repeated(from: string, into: string): string[] {
  const target = normalize(into);
  return statements(from).filter((s) => target.includes(s));
}

function toolDescriptions(): Array<{ name: string; description: string }> {
  const meta = createMetaTools({ corpus: () => [], dispatch: async () => textEnvelope({}) }).tools;
  return [...nativeTools(), ...meta].map((t) => ({ name: t.definition.name, description: t.definition.description }));
}

test('instructions_do_not_repeat_what_tool_descriptions_already_say, in both directions', () => {
  const descriptions = toolDescriptions();
  assert.ok(descriptions.length >= 3, 'at least the meta-tools are checked');
  const renderings = everyRendering();
  for (const { label, text } of renderings) {
    assert.ok(statements(text).length >= 4, `${label}: the check sees the instructions' statements`);
    for (const { name, description } of descriptions) {
      assert.deepEqual(repeated(text, description), [], `${label}: instructions repeat ${name}'s description`);
      assert.deepEqual(repeated(description, text), [], `${label}: ${name}'s description is restated in the instructions`);
    }
  }
});

test('no per-tool catalogue in the instructions: no action line of any tool, no tool section', () => {
  for (const tool of nativeTools()) {
    for (const { text, label } of everyRendering()) {
      for (const action of tool.actions) {
        const line = tool.definition.description.split('\n').find((l) => l.startsWith(ACTION_LINE(action, '')));
        assert.ok(line !== undefined && !text.includes(line), `${label}: ${tool.definition.name} action ${action} is listed`);
      }
      assert.ok(!text.includes(`## ${tool.definition.name}`), `${label}: a section for ${tool.definition.name}`);
    }
  }
  for (const { text } of everyRendering()) assert.ok(!/^## Workflow/m.test(text) && !text.includes('**UI feedback:**'));
});

test('the repetition check finds a restated sentence either way (so it can fail)', () => {
  const description = 'Manage terminal sessions.\n\nA session keeps its output after the process exits, until closed.';
  const instructions = renderInstructions(instructionContext('classic', 'empty'));
  assert.deepEqual(repeated(instructions, description), []);
  const restating = `${instructions}\nNote: a session keeps its output   after the process exits, until closed.\n`;
  assert.deepEqual(repeated(description, restating), ['a session keeps its output after the process exits, until closed.']);
  assert.deepEqual(repeated(restating, `Tools.\n${SUBMIT_RULE}`), [
    "submit: to give another terminal's agent a prompt or command, make one session action=submit call with the complete text.",
    'never split it into action=input text and a separate enter, and never poll the screen to decide when to press enter.',
  ]);
});
