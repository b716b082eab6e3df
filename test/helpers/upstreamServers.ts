/** Real upstream MCP servers for hub tests: server-everything (stdio and Streamable HTTP) and server-filesystem. */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const modules = new URL('../../../node_modules/', import.meta.url).pathname;
export const EVERYTHING_JS = join(modules, '@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM_JS = join(modules, '@modelcontextprotocol/server-filesystem/dist/index.js');

export interface ServerEntry {
  id: string;
  name: string;
  transport: Record<string, unknown>;
  enabled?: boolean;
  timeout_secs?: number;
  tool_filter?: { mode: 'allow' | 'deny'; patterns: string[] };
}

export function stdioServer(name: string, args: string[], extra: Partial<ServerEntry> = {}, command = process.execPath): ServerEntry {
  return { id: randomUUID(), name, transport: { type: 'stdio', command, args, env: {} }, enabled: true, timeout_secs: 30, ...extra };
}

export const everythingStdio = (name = 'everything', extra: Partial<ServerEntry> = {}) => stdioServer(name, [EVERYTHING_JS, 'stdio'], extra);
export const filesystemStdio = (name: string, root: string, extra: Partial<ServerEntry> = {}) => stdioServer(name, [FILESYSTEM_JS, root], extra);

export function httpServer(name: string, url: string, extra: Partial<ServerEntry> = {}): ServerEntry {
  return { id: randomUUID(), name, transport: { type: 'http', url }, enabled: true, timeout_secs: 30, ...extra };
}

export function writeUpstreams(configDir: string, servers: ServerEntry[]): void {
  writeFileSync(join(configDir, 'mcp-upstreams.json'), JSON.stringify({ servers }));
}

/** A port on 127.0.0.1 nothing listens on right now, for servers that take their port from the environment. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** server-everything in its Streamable HTTP mode on a free port; resolves once it listens. */
export async function startEverythingHttp(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_JS, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen: ${stderr}`)), 15_000);
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
