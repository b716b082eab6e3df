/**
 * The two servers of the tools/call bench, each in its own process and each with one initialized MCP
 * session: tuicd on its TCP listener with Basic Auth (two idle shells, so `session list` lists
 * something), and the bare SDK server (bareSdkServer.ts) answering the same call with two rows.
 * The proxy benches start them with another checked call, and tuicd with upstreams (TuicdSetup).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { hash } from '@node-rs/bcrypt';

import { errorText } from '../harness.js';
import { spawnTracked, type Tracked } from '../http/children.js';
import { engineArgs, engineOfReadyLine, engineUnavailable, type TuicdEngine } from '../http/engines.js';
import { parseReadyLine, READY_LINE_RE } from '../http/readyLine.js';
import { tuicdMainPath } from '../http/targets.js';
import { BARE_SESSION_ROWS, PROTOCOL_VERSION, SESSION_LIST_CALL, toolsCallBody, type ToolCall } from './toolsCallShared.js';

export type McpVariant = 'bare SDK' | 'tuicd' | 'server-everything';

const READY_TIMEOUT_MS = 10_000;
const BARE_MAX_SECONDS = 1800;
const BENCH_USER = 'bench';
const BENCH_PASSWORD = 'bench-password';
/** tuicd's real cost: the first request pays one bcrypt, later ones hit its verified-credentials cache. */
const BCRYPT_COST = 12;
/** As many shells in tuicd as the bare server lists rows, so both answers are alike. */
const TUICD_SHELLS = BARE_SESSION_ROWS.length;
/** What every request to tuicd's TCP listener carries. */
export const TUICD_AUTH: Record<string, string> = { Authorization: 'Basic ' + Buffer.from(`${BENCH_USER}:${BENCH_PASSWORD}`).toString('base64') };

/** The call checked once before timing, and what its result must show. */
export interface CallCheck {
  call: ToolCall;
  /** What is wrong with the result, or undefined when it is right. */
  verify(result: Record<string, unknown>): string | undefined;
}

/** The tools/call bench's check: `session list` answers one row per shell. */
export const SESSION_LIST_CHECK: CallCheck = {
  call: SESSION_LIST_CALL,
  verify(result) {
    const content = result['content'] as Array<{ text?: string }> | undefined;
    const rows: unknown = content?.[0]?.text ? JSON.parse(content[0].text) : undefined;
    return result['isError'] === false && Array.isArray(rows) && rows.length === TUICD_SHELLS ? undefined : `did not answer ${TUICD_SHELLS} rows`;
  },
};

/** How a tuicd differs from the tools/call bench's default one. */
export interface TuicdSetup {
  /** Its config directory under tmpDir (several tuicds in one run need their own). Default `tuicd-config`. */
  dirName?: string;
  /** Top-level config.json keys beside `services` and `auth` (e.g. `collapse_tools`). */
  config?: Record<string, unknown>;
  /** Other files of the config directory, by name (e.g. `mcp-upstreams.json`). */
  files?: Record<string, string>;
  /** Idle shells created first (default: as many as the bare server lists rows). */
  shells?: number;
  /** Awaited once tuicd listens, before the MCP session opens (e.g. until its upstreams are ready). */
  ready?: (socketPath: string) => Promise<void>;
  /** The call checked before timing (default: session list); null checks nothing. */
  check?: CallCheck | null;
  /** Forces tuicd's HTTP engine (`--http-engine`); its start line must confirm it. Default: tuicd picks. */
  engine?: TuicdEngine;
  /** Another build's dist/supervisor/main.js (--baseline-ref); default this checkout's (tuicdMainPath()). */
  main?: string;
}

export interface McpTarget {
  name: McpVariant;
  proc: Tracked;
  port: number;
  socketPath: string;
  /** Credentials, as `Name: value` lines: what the SDK Client driver is given (it opens its own session). */
  authHeaders: string[];
  /** What the raw generator sends besides the framing: credentials, the session opened here, the protocol version. */
  sessionHeaders: string[];
  /** Bytes of one tools/call answer's body, for the note (the two servers should answer alike); 0 when nothing was checked. */
  answerBytes: number;
}

export type StartedMcp = { ok: true; target: McpTarget } | { ok: false; name: McpVariant; error: string };

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export function post(port: number, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A JSON answer, or the last non-empty `data:` of an SSE answer (a server with an event store first
 * sends a priming event whose data is empty).
 */
function jsonRpcOf(a: Answer): { result?: Record<string, unknown>; error?: unknown } {
  const data = [...a.text.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]!).filter((d) => d.trim() !== '');
  const text = data.at(-1) ?? a.text;
  return JSON.parse(text) as { result?: Record<string, unknown>; error?: unknown };
}

/**
 * initialize (as `clientName`) + notifications/initialized, then one checked tools/call: the figures
 * must measure a working call.
 */
export async function openSession(
  name: McpVariant,
  port: number,
  auth: Record<string, string>,
  check: CallCheck | null = SESSION_LIST_CHECK,
  clientName = 'tuicd-bench',
): Promise<Pick<McpTarget, 'authHeaders' | 'sessionHeaders' | 'answerBytes'>> {
  const init = await post(
    port,
    auth,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: clientName, version: '0.0.0' } },
    }),
  );
  if (init.status !== 200) throw new Error(`${name}: initialize answered ${init.status}: ${init.text.slice(0, 200)}`);
  const sessionId = init.headers['mcp-session-id'];
  const session: Record<string, string> = {
    ...auth,
    'mcp-protocol-version': PROTOCOL_VERSION,
    ...(typeof sessionId === 'string' ? { 'mcp-session-id': sessionId } : {}),
  };
  const initialized = await post(port, session, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  if (initialized.status !== 202) throw new Error(`${name}: notifications/initialized answered ${initialized.status}`);
  const lines = (h: Record<string, string>): string[] => Object.entries(h).map(([k, v]) => `${k}: ${v}`);
  if (!check) return { authHeaders: lines(auth), sessionHeaders: lines(session), answerBytes: 0 };
  const call = await post(port, session, toolsCallBody(1, check.call));
  const result = call.status === 200 ? jsonRpcOf(call).result : undefined;
  const problem = result ? check.verify(result) : 'answered no result';
  if (problem) throw new Error(`${name}: tools/call ${check.call.name} ${problem}: ${call.status} ${call.text.slice(0, 300)}`);
  return { authHeaders: lines(auth), sessionHeaders: lines(session), answerBytes: Buffer.byteLength(call.text) };
}

async function startProcess(
  command: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
  checkLine?: (line: string) => void,
): Promise<{ proc: Tracked; port: number; socketPath: string }> {
  const proc = spawnTracked(command, args, env ? { env } : {});
  try {
    const m = await proc.waitForLine(READY_LINE_RE, READY_TIMEOUT_MS);
    checkLine?.(m.input ?? m[0]);
    const at = parseReadyLine(m);
    if (!at.tcp) throw new Error('no TCP listener in the ready line');
    return { proc, port: at.tcp.port, socketPath: at.socketPath };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/** The bare SDK server; `responses: 'sse'` is the SDK's default (each POST answered on an SSE stream), 'json' sets enableJsonResponse. */
export async function startBare(tmpDir: string, check: CallCheck = SESSION_LIST_CHECK, responses: 'json' | 'sse' = 'json'): Promise<McpTarget> {
  const script = fileURLToPath(new URL('./bareSdkServer.js', import.meta.url));
  const args = [script, '--socket', join(tmpDir, `bare-sdk-${responses}.sock`), '--max-seconds', String(BARE_MAX_SECONDS), '--responses', responses];
  const { proc, port, socketPath } = await startProcess(process.execPath, args);
  try {
    return { name: 'bare SDK', proc, port, socketPath, ...(await openSession('bare SDK', port, {}, check)) };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

export async function startTuicd(tmpDir: string, setup: TuicdSetup = {}): Promise<McpTarget> {
  const unavailable = engineUnavailable(setup.engine);
  if (unavailable) throw new Error(unavailable);
  const main = setup.main ?? tuicdMainPath();
  if (!existsSync(main)) throw new Error(`${main} not found: tuicd is not built yet (npm run build)`);
  const configDir = join(tmpDir, setup.dirName ?? 'tuicd-config');
  await mkdir(configDir, { recursive: true });
  const passwordHash = await hash(BENCH_PASSWORD, { cost: BCRYPT_COST });
  await writeFile(
    join(configDir, 'config.json'),
    JSON.stringify({ ...setup.config, services: { server: { enabled: true, port: 0 }, auth: { username: BENCH_USER, password_hash: passwordHash } } }),
  );
  for (const [file, text] of Object.entries(setup.files ?? {})) await writeFile(join(configDir, file), text);
  // The file vault: no keyring probe (a child process) during the run.
  const { proc, port, socketPath } = await startProcess(
    process.execPath,
    [main, '--config-dir', configDir, ...engineArgs(setup.engine)],
    { ...process.env, TUIC_CREDENTIAL_STORE: 'file' },
    (line) => void engineOfReadyLine(line, setup.engine),
  );
  try {
    for (let i = 0; i < (setup.shells ?? TUICD_SHELLS); i++) await createShell(socketPath, tmpDir);
    await setup.ready?.(socketPath);
    return {
      name: 'tuicd',
      proc,
      port,
      socketPath,
      ...(await openSession('tuicd', port, TUICD_AUTH, setup.check === undefined ? SESSION_LIST_CHECK : setup.check)),
    };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

function createShell(socketPath: string, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'POST', path: '/sessions', agent: false, headers: { 'Content-Type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 || res.statusCode === 201 ? resolve() : reject(new Error(`POST /sessions answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ shell: '/bin/bash', cwd }));
  });
}

/** Starts both, one at a time (one's start-up CPU must not delay the other); one that fails is reported, the other still runs. */
export async function startMcpTargets(tmpDir: string): Promise<StartedMcp[]> {
  const out: StartedMcp[] = [];
  for (const [name, start] of [
    ['bare SDK', () => startBare(tmpDir)],
    ['tuicd', () => startTuicd(tmpDir)],
  ] as const) {
    try {
      out.push({ ok: true, target: await start() });
    } catch (err) {
      out.push({ ok: false, name, error: `${name} did not start: ${errorText(err)}` });
    }
  }
  return out;
}

export async function stopMcpTargets(started: StartedMcp[]): Promise<void> {
  await Promise.all(started.map((s) => (s.ok ? s.target.proc.stop() : undefined)));
}
