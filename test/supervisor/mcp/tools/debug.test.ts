import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { EventBus } from '../../../../supervisor/events/eventBus.js';
import { ProcessStarter } from '../../../../supervisor/hosts/processStarter.js';
import { PtyHost } from '../../../../supervisor/hosts/ptyHost.js';
import { createLogger } from '../../../../supervisor/log.js';
import { createDebugTool, DEBUG_HELP } from '../../../../supervisor/mcp/tools/debug.js';
import type { CallerContext, NativeTool } from '../../../../supervisor/mcp/tools/nativeTool.js';
import { SessionService } from '../../../../supervisor/sessions/sessionService.js';
import { shellHomeEnv } from '../../../helpers/testHome.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tuicd-debugtool-'));
  dirs.push(d);
  return d;
};

const PTY_HOST_ENTRY = new URL('../../../../workers/pty/main.js', import.meta.url).pathname;
const SECRET = `ghp_${'Z9y8X7w6V5'.repeat(3)}123456`;
const quiet = { info() {}, warn() {}, error() {} };

function caller(): CallerContext {
  return {
    isLoopback: true,
    listener: 'socket',
    mcpSessionId: null,
    tuicSession: null,
    boundSessionId: null,
    clientName: null,
    signal: new AbortController().signal,
  };
}
const call = async (tool: NativeTool, args: Record<string, unknown>) => tool.handler(args, caller()) as Promise<any>;

test('debug sessions lists live sessions of a real pty host with their state; session_id filters by any address', async (t) => {
  const host = new PtyHost(new ProcessStarter({ entry: PTY_HOST_ENTRY, onOutput: () => {} }), quiet);
  const sessions = new SessionService({
    host,
    bus: new EventBus(),
    configDir: tempDir(),
    env: { ...process.env, ...shellHomeEnv() },
    maxSessions: () => 10,
    defaultShell: () => '/bin/sh',
  });
  t.after(async () => {
    sessions.dispose();
    await host.stop();
  });
  const tool = createDebugTool({ sessions, logDir: tempDir() });
  assert.deepEqual(await call(tool, { action: 'sessions' }), { sessions: [] });
  const a = await sessions.create({ shell: '/bin/sh', cwd: '/tmp' });
  const b = await sessions.create({ shell: '/bin/sh', cwd: '/' });
  const all = (await call(tool, { action: 'sessions' })).sessions;
  assert.deepEqual(all.map((s: any) => s.session_id).sort(), [a.session_id, b.session_id].sort());
  const row = all.find((s: any) => s.session_id === a.session_id);
  assert.equal(row.cwd, '/tmp');
  assert.equal(typeof row.pid, 'number');
  assert.equal(typeof row.state, 'object');
  const byAlias = (await call(tool, { action: 'sessions', session_id: b.alias })).sessions;
  assert.deepEqual(
    byAlias.map((s: any) => s.session_id),
    [b.session_id],
  );
});

test('debug logs: newest first from the real log file, level/source filters, limit, secrets redacted', async () => {
  const logDir = tempDir();
  const log = createLogger({ logDir, level: 'debug', stderr: false });
  log.debug('first-debug');
  log.info({ source: 'pty-host' }, 'from-the-host');
  log.warn(`leaked ${SECRET}`);
  log.error({ source: 'http' }, 'last-error');
  const tool = createDebugTool({ sessions: { list: () => [], recentParsed: () => [] }, logDir });
  let logs: any[] = [];
  for (let i = 0; i < 250 && logs.length < 4; i++) {
    await new Promise((r) => setTimeout(r, 20));
    logs = (await call(tool, { action: 'logs' })).logs;
  }
  assert.deepEqual(
    logs.map((r) => r.msg),
    ['last-error', `leaked [REDACTED:github_pat]`, 'from-the-host', 'first-debug'],
  );
  assert.deepEqual(
    (await call(tool, { action: 'logs', level: 'warn' })).logs.map((r: any) => r.msg),
    ['last-error', 'leaked [REDACTED:github_pat]'],
  );
  assert.deepEqual(
    (await call(tool, { action: 'logs', source: 'pty-host' })).logs.map((r: any) => r.msg),
    ['from-the-host'],
  );
  assert.deepEqual(
    (await call(tool, { action: 'logs', limit: 1 })).logs.map((r: any) => r.msg),
    ['last-error'],
  );
  await assert.rejects(call(tool, { action: 'logs', level: 'loud' }), {
    message: "Invalid level 'loud'. Must be: trace, debug, info, warn, error, fatal",
    code: 'invalid_input',
    extra: { field: 'level' },
  });
  await assert.rejects(call(tool, { action: 'logs', limit: 'all' }), { message: '\'limit\' must be an integer, got "all"', extra: { field: 'limit' } });
  await assert.rejects(call(tool, { action: 'logs', source: 7 }), { message: "'source' must be a string", extra: { field: 'source' } });
  log.flush();
});

test('debug logs: no log dir yet → empty; a torn first line of a long file is skipped', async () => {
  const tool = createDebugTool({ sessions: { list: () => [], recentParsed: () => [] }, logDir: join(tempDir(), 'missing') });
  assert.deepEqual(await call(tool, { action: 'logs' }), { logs: [] });
  const logDir = tempDir();
  const filler = `${JSON.stringify({ level: 30, msg: 'x'.repeat(1000) })}\n`.repeat(400);
  writeFileSync(join(logDir, 'tuicd.1.log'), filler + `${JSON.stringify({ level: 30, msg: 'tail' })}\n`);
  const logs = (await call(createDebugTool({ sessions: { list: () => [], recentParsed: () => [] }, logDir }), { action: 'logs', limit: 500 })).logs;
  assert.equal(logs[0].msg, 'tail');
  assert.ok(logs.length > 200 && logs.length < 401, `read only the tail: ${logs.length}`);
});

test('debug help, agent_detection and invoke_js', async () => {
  const tool = createDebugTool({ sessions: { list: () => [], recentParsed: () => [] }, logDir: tempDir() });
  assert.match(tool.definition.description, /action=help/);
  assert.deepEqual(await call(tool, { action: 'help' }), { help: DEBUG_HELP });
  for (const action of tool.actions) assert.ok(DEBUG_HELP.includes(`action=${action}`), `help documents ${action}`);
  assert.deepEqual(await call(tool, { action: 'agent_detection' }), { sessions: [] });
  await assert.rejects(call(tool, { action: 'invoke_js', script: '1+1' }), {
    message: 'invoke_js needs the desktop WebView and is not available in headless tuicd',
    code: 'not_implemented',
  });
});
