import assert from 'node:assert/strict';
import { test } from 'node:test';

import { EventBus } from '../../../../supervisor/events/eventBus.js';
import { ConfirmBroker } from '../../../../supervisor/mcp/confirmBroker.js';
import { ToolError } from '../../../../supervisor/mcp/tools/nativeTool.js';
import type { CallerContext } from '../../../../supervisor/mcp/tools/nativeTool.js';
import type { NativeTool } from '../../../../supervisor/mcp/tools/nativeTool.js';
import { NOTIFICATION_SOUNDS, createUiTool, resolveToastSound } from '../../../../supervisor/mcp/tools/ui.js';

/** Handlers may throw synchronously or reject: both become a rejection here. */
const call = async (tool: NativeTool, args: Record<string, unknown>, c: CallerContext) => tool.handler(args, c);

const PTY = 'pty-1';
const TUIC = '6f1b6f0e-7f7c-4f53-9a55-3a8f5f0c2b11';

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
const bound = (over: Partial<CallerContext> = {}) => caller({ tuicSession: TUIC, boundSessionId: PTY, ...over });

function setup() {
  const bus = new EventBus();
  const events: Array<{ name: string; payload: any }> = [];
  bus.on('*', (name, payload) => events.push({ name, payload }));
  const broker = new ConfirmBroker({ bus, timeoutMs: 5000 });
  const cwds = new Map([[PTY, '/home/u/repo']]);
  const tool = createUiTool({ bus, confirmBroker: broker, sessionCwd: (id) => cwds.get(id) });
  return { bus, events, broker, tool };
}

test('toast_sound_resolves_to_a_notification_sound_or_silence', () => {
  assert.equal(resolveToastSound(undefined, 'info'), null);
  assert.equal(resolveToastSound(false, 'error'), null);
  assert.equal(resolveToastSound(true, 'info'), 'info');
  assert.equal(resolveToastSound(true, 'warn'), 'warning');
  assert.equal(resolveToastSound(true, 'error'), 'error');
  for (const name of NOTIFICATION_SOUNDS) assert.equal(resolveToastSound(name, 'info'), name);
});

test('toast_sound_rejects_unknown_names: the schema refuses them before the handler, naming the field', async () => {
  const { events, tool } = setup();
  await assert.rejects(
    call(tool, { action: 'toast', title: 't', sound: 'beep' }, caller()),
    (e: unknown) => e instanceof ToolError && e.code === 'invalid_input' && e.extra['field'] === 'sound' && /Invalid sound 'beep'.*attention/.test(e.message),
  );
  await assert.rejects(call(tool, { action: 'toast', title: 't', sound: 3 }, caller()), {
    message: /^Invalid sound '3'/,
    code: 'invalid_input',
    extra: { field: 'sound' },
  });
  assert.equal(events.length, 0);
});

test('ui_toast_puts_the_resolved_sound_on_the_bus (bound caller: origin session and repo)', async () => {
  const { events, tool } = setup();
  assert.deepEqual(await call(tool, { action: 'toast', title: 'Build', message: 'done', level: 'warn', sound: true }, bound()), { ok: true });
  assert.deepEqual(events, [
    {
      name: 'mcp-toast',
      payload: { title: 'Build', message: 'done', level: 'warn', sound: 'warning', origin_session_id: TUIC, origin_repo_path: '/home/u/repo' },
    },
  ]);
});

test('ui toast: defaults (level info, sound null) and an unbound caller gets no origin fields', async () => {
  const { events, tool } = setup();
  await call(tool, { action: 'toast', title: 'Hi' }, caller({ tuicSession: TUIC }));
  assert.deepEqual(events[0]?.payload, { title: 'Hi', level: 'info', sound: null });
});

test('ui_toast_includes_origin_repo_path_from_the_mcp_session_repo when not bound to a PTY', async () => {
  const bus = new EventBus();
  const seen: any[] = [];
  bus.on('mcp-toast', (_n, p) => seen.push(p));
  const tool = createUiTool({
    bus,
    confirmBroker: new ConfirmBroker({ bus }),
    sessionCwd: () => undefined,
    mcpRepoPath: (id) => (id === 'm1' ? '/srv/app' : undefined),
  });
  await call(tool, { action: 'toast', title: 't', sound: 'attention' }, caller({ mcpSessionId: 'm1' }));
  assert.deepEqual(seen, [{ title: 't', level: 'info', sound: 'attention', origin_repo_path: '/srv/app' }]);
});

test('ui toast: bad level and unknown sound are clear errors and publish nothing', async () => {
  const { events, tool } = setup();
  await assert.rejects(call(tool, { action: 'toast', title: 'x', level: 'debug' }, caller()), {
    message: "Invalid level 'debug'. Must be: info, warn, error",
    code: 'invalid_input',
    extra: { field: 'level' },
  });
  await assert.rejects(call(tool, { action: 'toast', title: 'x', sound: 'beep' }, caller()), /Invalid sound 'beep'/);
  await assert.rejects(call(tool, { action: 'toast' }, caller()), /requires 'title'/);
  await assert.rejects(call(tool, { action: 'toast', title: 'x', message: 5 }, caller()), {
    message: "'message' must be a string",
    extra: { field: 'message' },
  });
  assert.equal(events.length, 0);
});

test('ui schema: sound is anyOf boolean | enum of the notification sounds', () => {
  const { tool } = setup();
  const sound = (tool.definition.inputSchema['properties'] as any).sound;
  assert.deepEqual(sound, { anyOf: [{ type: 'boolean' }, { type: 'string', enum: [...NOTIFICATION_SOUNDS] }] });
});

test('ui tab: publishes ui-tab with defaults and the origin session, for every allowed scheme', async () => {
  const { events, tool } = setup();
  assert.deepEqual(await call(tool, { action: 'tab', id: 't1', title: 'Doc', html: '<b>x</b>' }, bound()), { ok: true });
  assert.deepEqual(events[0], { name: 'ui-tab', payload: { id: 't1', title: 'Doc', html: '<b>x</b>', pinned: false, focus: true, origin_session_id: TUIC } });
  for (const url of [
    'https://example.com/a',
    'http://localhost:3000',
    'file:///tmp/report.html',
    'tuic://edit//Users/x/file.rs?line=42',
    'tuic://edit/src/main.ts',
    'tuic://open/README.md',
  ]) {
    await call(tool, { action: 'tab', id: url, title: 'u', url, pinned: true, focus: false }, caller());
    assert.deepEqual(events.at(-1)?.payload, { id: url, title: 'u', url, pinned: true, focus: false });
  }
});

test('ui tab: refuses other schemes, html+url, neither, and a missing id/title', async () => {
  const { events, tool } = setup();
  for (const url of ['vscode://file/x', 'javascript:alert(1)', 'x-devonthink://item', 'tuic://oauth-callback', 'ftp://h/f', 'notaurl']) {
    await assert.rejects(call(tool, { action: 'tab', id: 'a', title: 'b', url }, caller()), /Unsupported url .* custom schemes/);
  }
  await assert.rejects(call(tool, { action: 'tab', id: 'a', title: 'b', url: 'https://x', html: 'y' }, caller()), /exactly one of 'html' or 'url'/);
  await assert.rejects(call(tool, { action: 'tab', id: 'a', title: 'b' }, caller()), /exactly one of 'html' or 'url'/);
  await assert.rejects(call(tool, { action: 'tab', title: 'b', html: 'x' }, caller()), /requires 'id'/);
  await assert.rejects(call(tool, { action: 'tab', id: 'a', html: 'x' }, caller()), /requires 'title'/);
  await assert.rejects(call(tool, { action: 'tab', id: 'a', title: 'b', html: 'x', pinned: 'yes' }, caller()), {
    message: "'pinned' must be a boolean",
    code: 'invalid_input',
    extra: { field: 'pinned' },
  });
  assert.equal(events.length, 0);
});

test('ui screenshot: a clear headless error', async () => {
  const { tool } = setup();
  await assert.rejects(
    call(tool, { action: 'screenshot', id: 'p' }, caller()),
    (e: unknown) => e instanceof ToolError && e.code === 'not_implemented' && /desktop WebView.*headless tuicd/.test(e.message),
  );
});

test('ui: missing and unknown action list the actions', async () => {
  const { tool } = setup();
  await assert.rejects(call(tool, {}, caller()), { message: "Missing required 'action' for tool 'ui'. Available: tab, toast, confirm, screenshot" });
  await assert.rejects(call(tool, { action: 'popup' }, caller()), {
    message: "Unknown action 'popup' for tool 'ui'. Available: tab, toast, confirm, screenshot",
  });
});

test('ui confirm: remote callers and a missing title are refused before anything is published', async () => {
  const { events, tool, broker } = setup();
  await assert.rejects(call(tool, { action: 'confirm', title: 'Deploy?' }, caller({ isLoopback: false, listener: 'tcp' })), {
    message: /only available to local callers/,
    code: 'forbidden',
  });
  await assert.rejects(call(tool, { action: 'confirm' }, caller()), /requires 'title'/);
  assert.equal(events.length, 0);
  assert.equal(broker.size, 0);
});

test('ui confirm: the first answer is the tool result, with origin session on the event', async () => {
  const { events, tool, broker } = setup();
  const pending = call(tool, { action: 'confirm', title: 'Deploy?', message: 'to prod' }, bound());
  const asked = events.find((e) => e.name === 'mcp-confirm');
  assert.ok(asked);
  assert.deepEqual(Object.keys(asked.payload).sort(), ['message', 'origin_session_id', 'request_id', 'title']);
  assert.equal(asked.payload.origin_session_id, TUIC);
  assert.equal(broker.answer(asked.payload.request_id, true), 'accepted');
  assert.deepEqual(await pending, { confirmed: true });
  assert.equal(broker.size, 0);
});

test('ui confirm: an aborted tool call (client gone, request timed out) resolves, publishes resolved and frees the entry', async () => {
  const { events, tool, broker } = setup();
  const ac = new AbortController();
  const pending = call(tool, { action: 'confirm', title: 'Still there?' }, caller({ signal: ac.signal }));
  assert.equal(broker.size, 1);
  ac.abort();
  assert.equal(((await pending) as { confirmed: boolean }).confirmed, false);
  assert.equal(broker.size, 0);
  assert.deepEqual(
    events.map((e) => e.name),
    ['mcp-confirm', 'mcp-confirm-resolved'],
  );
});
