/**
 * Starts a real tuicd (the compiled dist/supervisor/main.js) in a temporary config dir and HOME,
 * asks it for what the generated docs are made of (GET /openapi.json, the MCP tools/list with
 * every native tool enabled and again with `collapse_tools`, config.schema.json), stops it, and
 * renders docs/*.md, formatted by Biome. scripts/docs.mjs writes the result;
 * test/docs/docsFresh.test.ts compares it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import type { Json } from './markdown.js';
import type { ToolListEntry } from './render.js';
import { renderConfiguration, renderHttpApi, renderMcpTools } from './render.js';

/** dist/scripts/docs → the repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const DOCS_DIR = join(REPO_ROOT, 'docs');
const MAIN_JS = fileURLToPath(new URL('../../supervisor/main.js', import.meta.url));

export const GENERATED_DOCS = ['http-api.md', 'mcp-tools.md', 'configuration.md'] as const;
export type GeneratedDoc = (typeof GENERATED_DOCS)[number];

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

export interface DocSources {
  openapi: Json;
  tools: ToolListEntry[];
  collapsedTools: ToolListEntry[];
  configSchema: Json;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(socketPath: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath,
        method,
        path,
        agent: false,
        headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function expectOk(answer: Answer, what: string): Answer {
  if (answer.status < 200 || answer.status >= 300) throw new Error(`${what}: HTTP ${answer.status}: ${answer.text.slice(0, 500)}`);
  return answer;
}

/** A JSON-RPC answer, sent as JSON or as one SSE `data:` line. */
function rpcResult(answer: Answer, what: string): Json {
  const body = answer.text.trim();
  const json = body.startsWith('{') ? body : (/^data: (.*)$/m.exec(body)?.[1] ?? '');
  const message = JSON.parse(json) as Json;
  if (message['error'] !== undefined) throw new Error(`${what}: ${JSON.stringify(message['error'])}`);
  return message['result'] as Json;
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

/** The MCP handshake, then tools/list in that protocol session. */
async function listTools(socketPath: string): Promise<ToolListEntry[]> {
  const init = expectOk(
    await send(
      socketPath,
      'POST',
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tuicd-docs', version: '1' } },
      },
      MCP_HEADERS,
    ),
    'initialize',
  );
  const result = rpcResult(init, 'initialize');
  const sessionId = init.headers['mcp-session-id'];
  const session: Record<string, string> = typeof sessionId === 'string' ? { 'mcp-session-id': sessionId } : {};
  const version: Record<string, string> = typeof result['protocolVersion'] === 'string' ? { 'mcp-protocol-version': result['protocolVersion'] } : {};
  const headers = { ...MCP_HEADERS, ...session, ...version };
  expectOk(await send(socketPath, 'POST', '/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, headers), 'notifications/initialized');
  const list = expectOk(await send(socketPath, 'POST', '/mcp', { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, headers), 'tools/list');
  const tools = rpcResult(list, 'tools/list')['tools'];
  if (!Array.isArray(tools)) throw new Error('tools/list: no tools array');
  return tools as ToolListEntry[];
}

/** Runs one tuicd for as long as `use` takes; it is stopped and its directories removed whatever happens. */
export async function withTuicd<T>(use: (socketPath: string, configDir: string) => Promise<T>): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), 'tuicd-docs-'));
  const configDir = join(root, 'config');
  const home = join(root, 'home');
  mkdirSync(configDir, { mode: 0o700 });
  mkdirSync(home, { mode: 0o700 });
  // Every native tool listed (config and debug are off by default, the ai_terminal_* tools too); nothing else differs from a fresh install.
  writeFileSync(join(configDir, 'config.json'), JSON.stringify({ disabled_native_tools: [], ai_terminal_mcp_enabled: true }));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TUIC_')) env[k] = v;
  Object.assign(env, { HOME: home, HISTFILE: '/dev/null', XDG_CONFIG_HOME: join(home, '.config'), TUIC_CREDENTIAL_STORE: 'file', TUIC_LOG_LEVEL: 'warn' });
  if (process.env['TUIC_HTTP_ENGINE']) env['TUIC_HTTP_ENGINE'] = process.env['TUIC_HTTP_ENGINE'];
  const child = spawn(process.execPath, [MAIN_JS, '--config-dir', configDir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let socketPath: string | undefined;
    while (socketPath === undefined) {
      socketPath = /serving on unix socket (\S+)/.exec(stdout)?.[1];
      if (socketPath !== undefined) break;
      if (child.exitCode !== null) throw new Error(`tuicd exited (${child.exitCode}) before serving: ${stderr}`);
      if (Date.now() > deadline) throw new Error(`tuicd did not start within ${START_TIMEOUT_MS} ms: ${stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return await use(socketPath, configDir);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    rmSync(root, { recursive: true, force: true });
  }
}

/** Everything the generated pages are rendered from, from one live tuicd. */
export function fetchDocSources(): Promise<DocSources> {
  return withTuicd(async (socketPath, configDir) => {
    const openapi = JSON.parse(expectOk(await send(socketPath, 'GET', '/openapi.json'), 'GET /openapi.json').text) as Json;
    const configSchema = JSON.parse(readFileSync(join(configDir, 'config.schema.json'), 'utf8')) as Json;
    const tools = await listTools(socketPath);
    expectOk(await send(socketPath, 'PUT', '/config', { collapse_tools: true }), 'PUT /config collapse_tools');
    const collapsedTools = await listTools(socketPath);
    return { openapi, tools, collapsedTools, configSchema };
  });
}

/**
 * The page as the repository's formatter (Biome, biome.json) prints it: `npm run lint` checks
 * docs/ too, so a page written any other way would fail there.
 */
export function formatMarkdown(name: string, markdown: string): string {
  const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');
  const run = spawnSync(process.execPath, [biome, 'format', `--stdin-file-path=docs/${name}`], { cwd: REPO_ROOT, input: markdown, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`biome could not format docs/${name} (exit ${run.status}): ${run.stderr.slice(-1000)}`);
  return run.stdout;
}

export function renderDocs(sources: DocSources): Map<GeneratedDoc, string> {
  const pages: Array<[GeneratedDoc, string]> = [
    ['http-api.md', renderHttpApi(sources.openapi)],
    ['mcp-tools.md', renderMcpTools(sources.tools, sources.collapsedTools)],
    ['configuration.md', renderConfiguration(sources.configSchema)],
  ];
  return new Map(pages.map(([name, markdown]) => [name, formatMarkdown(name, markdown)]));
}

export async function generateDocs(): Promise<Map<GeneratedDoc, string>> {
  return renderDocs(await fetchDocSources());
}

/** Where `actual` first differs from `expected`: its 1-based line and both lines, or null when equal. */
export function firstDifference(expected: string, actual: string): { line: number; expected: string; actual: string } | null {
  if (expected === actual) return null;
  const a = expected.split('\n');
  const b = actual.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return { line: i + 1, expected: a[i] ?? '(end of file)', actual: b[i] ?? '(end of file)' };
  }
  return { line: a.length, expected: '(same lines)', actual: '(different line endings)' };
}
