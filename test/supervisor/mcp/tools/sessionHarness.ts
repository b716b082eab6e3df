/**
 * A real SessionService over a real pty host process (built as the supervisor builds it), the
 * session and task tools on top, and helpers to call a handler the way the transport does:
 * a ToolError (or any ApiError) becomes `{error, code, ...extra}`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { EventBus } from '../../../../supervisor/events/eventBus.js';
import { ProcessStarter } from '../../../../supervisor/hosts/processStarter.js';
import { PtyHost } from '../../../../supervisor/hosts/ptyHost.js';
import { TaskRegistry } from '../../../../supervisor/agents/tasks.js';
import { toolErrorBody } from '../../../../supervisor/mcp/tools/nativeTool.js';
import type { CallerContext, NativeTool } from '../../../../supervisor/mcp/tools/nativeTool.js';
import { createSessionTool } from '../../../../supervisor/mcp/tools/session.js';
import { createTaskTool } from '../../../../supervisor/mcp/tools/task.js';
import { SessionService } from '../../../../supervisor/sessions/sessionService.js';
import { shellHomeEnv } from '../../../helpers/testHome.js';

const PTY_HOST_ENTRY = new URL('../../../../workers/pty/main.js', import.meta.url).pathname;

const quiet = { info() {}, warn() {}, error() {} };

export interface Harness {
  sessions: SessionService;
  /** The real pty host behind `sessions`. */
  host: PtyHost;
  bus: EventBus;
  tasks: TaskRegistry;
  session: NativeTool;
  task: NativeTool;
  /** Scratch directory: the sessions' cwd and HOME (so no rc file of the machine runs, no history file is left). */
  work: string;
  /** Events published on the bus, in order. */
  events: Array<{ name: string; payload: unknown }>;
  /** Read on every create: a test may lower it. */
  limits: { maxSessions: number };
  stop(): Promise<void>;
}

export function startHarness(): Harness {
  const work = mkdtempSync(join(tmpdir(), 'tuicd-mcp-session-'));
  const bus = new EventBus();
  const events: Harness['events'] = [];
  const limits = { maxSessions: 50 };
  bus.on('*', (name, payload) => events.push({ name, payload }));
  const host = new PtyHost(new ProcessStarter({ entry: PTY_HOST_ENTRY }), quiet);
  const sessions = new SessionService({
    host,
    bus,
    configDir: work,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...shellHomeEnv(work), LANG: 'C.UTF-8', PS1: '$ ' },
    maxSessions: () => limits.maxSessions,
    defaultShell: () => '/bin/bash',
  });
  const tasks = new TaskRegistry({ sessions });
  return {
    sessions,
    host,
    bus,
    tasks,
    session: createSessionTool({ sessions }),
    task: createTaskTool({ tasks }),
    work,
    events,
    limits,
    async stop() {
      tasks.dispose();
      sessions.dispose();
      await host.stop();
      bus.dispose();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

export function caller(overrides: Partial<CallerContext> = {}): CallerContext {
  return {
    isLoopback: true,
    listener: 'socket',
    mcpSessionId: null,
    tuicSession: null,
    boundSessionId: null,
    clientName: null,
    signal: new AbortController().signal,
    ...overrides,
  };
}

export const LOCAL = caller();
export const REMOTE = caller({ isLoopback: false, listener: 'tcp' });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool answers are free-form JSON read by the tests
export type Answer = any;

/** Calls a handler as the catalog would: a ToolError or other ApiError comes back as `{error, code, ...extra}`. */
export async function call(tool: NativeTool, args: Record<string, unknown>, who: CallerContext = LOCAL): Promise<Answer> {
  try {
    return await tool.handler(args, who);
  } catch (err) {
    const body = toolErrorBody(err);
    if (body !== null) return body;
    throw err;
  }
}

/** Creates a bash session through the tool and waits until its prompt is up and quiet. */
export async function idleShell(h: Harness, args: Record<string, unknown> = {}): Promise<string> {
  const created = await call(h.session, { action: 'create', cwd: h.work, ...args });
  if (typeof created.session_id !== 'string') throw new Error(`create failed: ${JSON.stringify(created)}`);
  const waited = await call(h.session, { action: 'wait', session_id: created.session_id, until: 'idle', timeout_ms: 20_000 });
  if (waited.met !== true) throw new Error(`session never became idle: ${JSON.stringify(waited)}`);
  return created.session_id;
}

/** Reads text output until `ok` holds (tests only: the code under test never polls). */
export async function outputUntil(h: Harness, sessionId: string, ok: (data: string) => boolean, what: string, timeoutMs = 15_000): Promise<Answer> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const out = await call(h.session, { action: 'output', session_id: sessionId, limit: 500 });
    if (typeof out.data === 'string' && ok(out.data)) return out;
    if (Date.now() > deadline) throw new Error(`${what} not seen within ${timeoutMs} ms: ${JSON.stringify(out).slice(-600)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
