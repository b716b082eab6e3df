/**
 * tuicd as an MCP proxy hub for the proxy benches: its stdio upstreams written to
 * mcp-upstreams.json before it starts (server-everything, the synthetic fixture), and the MCP
 * session opened only once GET /mcp/upstream-status reports every one of them `ready`.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { EVERYTHING_JS, everythingStdio, freePort, stdioServer, type ServerEntry } from '../../test/helpers/upstreamServers.js';
import { spawnTracked } from '../http/children.js';
import { openSession, startTuicd, type CallCheck, type McpTarget, type TuicdSetup } from './toolsCallTargets.js';
import type { ToolCall } from './toolsCallShared.js';

export { EVERYTHING_JS, everythingStdio };

/** Spawning the upstreams and their handshakes (several Node processes on 2 cores) may take a while. */
const UPSTREAMS_READY_TIMEOUT_MS = 30_000;
const STATUS_POLL_MS = 100;

const FIXTURE_JS = fileURLToPath(new URL('./proxyFixtureUpstream.js', import.meta.url));

/** The synthetic upstream with `tools` tools, corpus entries from `offset` on (proxyFixtureUpstream.ts). */
export function fixtureStdio(name: string, tools: number, offset: number): ServerEntry {
  return stdioServer(name, [FIXTURE_JS, String(tools), String(offset)]);
}

/** The measured proxied call: server-everything's `echo`, whose answer is known. */
export const ECHO_ARGUMENTS = { message: 'hi' };
export const echoCall = (upstream: string | null): ToolCall => ({ name: upstream === null ? 'echo' : `${upstream}__echo`, arguments: ECHO_ARGUMENTS });

export function echoCheck(upstream: string | null): CallCheck {
  return {
    call: echoCall(upstream),
    verify(result) {
      const text = (result['content'] as Array<{ text?: string }> | undefined)?.[0]?.text;
      return result['isError'] !== true && text === `Echo: ${ECHO_ARGUMENTS.message}` ? undefined : 'did not echo';
    },
  };
}

interface StatusRow {
  name: string;
  status: string;
  tool_count?: number;
  last_error?: string | null;
}

function upstreamStatus(socketPath: string): Promise<StatusRow[]> {
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath, path: '/mcp/upstream-status', agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`GET /mcp/upstream-status answered ${res.statusCode}: ${text.slice(0, 200)}`));
          resolve((JSON.parse(text) as { upstreams: StatusRow[] }).upstreams);
        });
      })
      .on('error', reject);
  });
}

/** Polls until every named upstream is `ready`; the error names the ones that are not. */
async function waitUntilReady(socketPath: string, names: string[]): Promise<void> {
  const deadline = Date.now() + UPSTREAMS_READY_TIMEOUT_MS;
  for (;;) {
    const rows = await upstreamStatus(socketPath);
    const waiting = names.filter((n) => rows.find((r) => r.name === n)?.status !== 'ready');
    if (waiting.length === 0) return;
    if (Date.now() > deadline) {
      const state = waiting.map((n) => {
        const r = rows.find((x) => x.name === n);
        return `${n}: ${r ? `${r.status}${r.last_error ? ` (${r.last_error})` : ''}` : 'not registered'}`;
      });
      throw new Error(`upstreams not ready after ${UPSTREAMS_READY_TIMEOUT_MS / 1000} s: ${state.join('; ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
  }
}

/** tuicd (TCP, Basic Auth, no shells) with these upstreams, once all of them are ready. */
export function startHub(
  tmpDir: string,
  servers: ServerEntry[],
  setup: Pick<TuicdSetup, 'dirName' | 'config' | 'check' | 'engine' | 'main'>,
): Promise<McpTarget> {
  return startTuicd(tmpDir, {
    ...setup,
    shells: 0,
    files: { 'mcp-upstreams.json': JSON.stringify({ servers }) },
    ready: (socketPath) =>
      waitUntilReady(
        socketPath,
        servers.map((s) => s.name),
      ),
  });
}

const EVERYTHING_LISTEN_TIMEOUT_MS = 15_000;

/**
 * server-everything in its own Streamable HTTP mode: the SDK's StreamableHTTPServerTransport (on
 * express) in front of the same server tuicd proxies over stdio, a session opened and one echo
 * checked. What a user runs without a hub to reach server-everything over HTTP.
 */
export async function startEverythingStreamable(): Promise<McpTarget> {
  const port = await freePort();
  const proc = spawnTracked(process.execPath, [EVERYTHING_JS, 'streamableHttp'], { env: { ...process.env, PORT: String(port) } });
  try {
    await proc.waitForLine(/listening on port/, EVERYTHING_LISTEN_TIMEOUT_MS, 'stderr');
    return { name: 'server-everything', proc, port, socketPath: '', ...(await openSession('server-everything', port, {}, echoCheck(null))) };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/** Runs `work` with a fresh temporary directory (config dirs, sockets), removed afterwards and at exit. */
export async function withTempDir<T>(prefix: string, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const removeSync = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeSync);
  try {
    return await work(dir);
  } finally {
    process.removeListener('exit', removeSync);
    await rm(dir, { recursive: true, force: true });
  }
}
