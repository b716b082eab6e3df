/**
 * `debug` (off by default through disabled_native_tools): what an operator needs to
 * see inside a running tuicd — its sessions, its recent log records — plus a usage guide. invoke_js
 * ran JavaScript in the desktop WebView and has no headless counterpart.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { Type } from 'typebox';

import { redactSecrets } from '../../../shared/redactor.js';
import { detectAgent } from '../../sessions/agentDetection.js';
import { agentState, sessionInfo, sessionState } from '../../sessions/sessionRecord.js';
import type { ParsedEvent } from '../../../shared/protocol/parsedEvents.js';
import type { SessionRecord } from '../../sessions/sessionRecord.js';
import { defineTool, ToolError } from './nativeTool.js';
import type { NativeTool } from './nativeTool.js';

export const DebugConstants = {
  LOGS_DEFAULT_LIMIT: 50,
  LOGS_MAX_LIMIT: 500,
  /** Only the end of the newest log file is read: bounded work however big the file grew. */
  LOG_TAIL_BYTES: 256 * 1024,
} as const;

/** pino's numeric levels. */
const LOG_LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/** The rotated files createLogger writes (pino-roll: tuicd.<n>.log). */
const LOG_FILE = /^tuicd\..*\.log$/;

export interface DebugToolDeps {
  sessions: { list(): SessionRecord[]; recentParsed(sessionId: string): Array<{ at_ms: number; event: ParsedEvent }> };
  /** Where createLogger writes its files. */
  logDir: string;
}

export const DEBUG_HELP = `debug — inspect a running tuicd (disabled by default; enable by removing "debug" from disabled_native_tools).

action=sessions
  Every live session: session_id,
  tuic_session, alias, cwd, pid, size, paused, state {shell_state busy|idle, …}.

action=logs [level=<min level>] [source=<source field>] [limit=50]
  The newest records of the daemon's own log (the end of the newest tuicd.*.log in the log dir),
  newest first. level: trace|debug|info|warn|error|fatal keeps that level and above. source keeps
  records whose "source" field equals it (e.g. pty-host). limit 1..500. Secrets are redacted.

action=agent_detection [session_id=<id>]
  Per live session: the terminal's foreground process (pid, name, executable and script paths), how
  it classifies (agent, shell, unknown), the agent_type that gives (an unknown program falls back to
  the type the session was created as) and its source, and the agent_state it implies.

action=help
  This text.

action=invoke_js
  Not available: it ran JavaScript in the desktop WebView, which headless tuicd does not have.`;

/** Applies redaction to every string in a parsed log record, so a JSON structure is never cut mid-string. */
function redactStrings(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(redactStrings);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactStrings(v)]));
  }
  return value;
}

async function newestLogFile(logDir: string): Promise<string | undefined> {
  let names: string[];
  try {
    names = (await readdir(logDir)).filter((n) => LOG_FILE.test(n));
  } catch {
    return undefined;
  }
  let newest: { path: string; mtimeMs: number } | undefined;
  for (const name of names) {
    const path = join(logDir, name);
    const { mtimeMs } = await stat(path);
    if (!newest || mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
  }
  return newest?.path;
}

async function readTail(path: string, bytes: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    await handle.read(buf, 0, buf.length, start);
    const text = buf.toString('utf8');
    // A tail that starts mid-file starts mid-record: drop the partial first line.
    return start > 0 ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    await handle.close();
  }
}

/** The logs action's arguments, as the schema checked them. */
interface LogsArgs {
  level?: string;
  source?: string;
  limit?: number;
}

async function recentLogs(logDir: string, args: LogsArgs): Promise<Record<string, unknown>> {
  const limit = Math.min(Math.max(args.limit ?? DebugConstants.LOGS_DEFAULT_LIMIT, 1), DebugConstants.LOGS_MAX_LIMIT);
  // The schema allows only the names LOG_LEVELS has ("toString" never reaches this lookup).
  const minLevel = args.level === undefined ? 0 : LOG_LEVELS[args.level]!;
  const { source } = args;
  const file = await newestLogFile(logDir);
  if (file === undefined) return { logs: [] };
  const lines = (await readTail(file, DebugConstants.LOG_TAIL_BYTES)).split('\n');
  const logs: unknown[] = [];
  for (let i = lines.length - 1; i >= 0 && logs.length < limit; i--) {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(lines[i]!) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof record['level'] === 'number' && record['level'] < minLevel) continue;
    if (source !== undefined && record['source'] !== source) continue;
    logs.push(redactStrings(record));
  }
  return { logs };
}

export function createDebugTool(deps: DebugToolDeps): NativeTool {
  const tool: NativeTool = defineTool({
    name: 'debug',
    summary: 'Inspect the running tuicd. Call action=help first: it returns the full usage guide.',
    actions: {
      sessions: 'every session with its state',
      logs: 'recent daemon log records (level, source, limit)',
      agent_detection: 'per live session: foreground process, its classification, agent_type and its source',
      help: 'the usage guide',
      invoke_js: 'desktop only; refused in headless tuicd',
    },
    properties: {
      level: Type.Optional(
        Type.String({
          enum: Object.keys(LOG_LEVELS),
          description: 'logs: minimum level',
          errorMessage: `Invalid level '{got}'. Must be: ${Object.keys(LOG_LEVELS).join(', ')}`,
        } as never),
      ),
      source: Type.Optional(Type.String({ description: 'logs: only records with this source', errorMessage: "'source' must be a string" })),
      // Any integer: clamped to 1..max.
      limit: Type.Optional(
        Type.Integer({
          description: `logs: records to return (default ${DebugConstants.LOGS_DEFAULT_LIMIT}, max ${DebugConstants.LOGS_MAX_LIMIT})`,
          errorMessage: "'limit' must be an integer, got {json}",
        }),
      ),
      session_id: Type.Optional(Type.String({ description: 'sessions, agent_detection: only this session (id, tuic_session or alias)' })),
      script: Type.Optional(Type.String({ description: 'invoke_js: not available headless' })),
    },
    handler: async (args) => {
      switch (args['action']) {
        case 'sessions': {
          const ref = args['session_id'] as string | undefined;
          let records = deps.sessions.list();
          if (ref !== undefined && ref !== '') records = records.filter((r) => r.session_id === ref || r.tuic_session === ref || r.alias === ref);
          return { sessions: records.map((r) => sessionInfo(r)) };
        }
        case 'logs':
          return recentLogs(deps.logDir, args as unknown as LogsArgs);
        case 'agent_detection': {
          const ref = args['session_id'] as string | undefined;
          let records = deps.sessions.list().filter((r) => !r.exit);
          if (ref !== undefined && ref !== '') records = records.filter((r) => r.session_id === ref || r.tuic_session === ref || r.alias === ref);
          return {
            sessions: records.map((r) => {
              const seen = detectAgent(r.pid, r.spawn_agent_type);
              return {
                session_id: r.session_id,
                agent_type: seen.agentType,
                source: seen.source,
                spawn_agent_type: r.spawn_agent_type,
                foreground: seen.foreground,
                agent_state: agentState({ ...r, agent_type: seen.agentType }),
                shell_state: r.shell_state,
                turn_epoch: r.turn_epoch,
                state: sessionState(r),
                last_signals: deps.sessions.recentParsed(r.session_id),
              };
            }),
          };
        }
        case 'help':
          return { help: DEBUG_HELP };
        default:
          throw new ToolError('not_implemented', 'invoke_js needs the desktop WebView and is not available in headless tuicd');
      }
    },
  });
  return tool;
}
