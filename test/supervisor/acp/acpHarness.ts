/** A real tuicd with the scripted ACP agent as its ego_executable, and a reader of ACP stream frames. */
import { rmSync } from 'node:fs';

import WebSocket from 'ws';

import { scriptedAgentExecutable } from '../../fixtures/acp/scriptedAgentLauncher.js';
import { makeTestHome } from '../../helpers/testHome.js';
import { type HttpAnswer, Tuicd } from '../../helpers/tuicdProcess.js';

export interface Frame {
  kind: 'event' | 'end' | 'gap';
  seq: number;
  generation: number;
  event: { type: string; [k: string]: any };
  [k: string]: any;
}

export class AcpHarness {
  private constructor(
    readonly tuicd: Tuicd,
    readonly agentDir: string,
    /** The connection root the tests use. */
    readonly root: string,
  ) {}

  /** `env`: the agent's; `server`: tuicd's own environment and config additions. */
  static async start(
    env: Record<string, string> = {},
    executable?: string,
    server: { env?: Record<string, string>; config?: Record<string, unknown> } = {},
  ): Promise<AcpHarness> {
    const agent = scriptedAgentExecutable(env);
    const tuicd = await Tuicd.start({ ...(server.env ? { env: server.env } : {}), config: { ...server.config, ego_executable: executable ?? agent.path } });
    return new AcpHarness(tuicd, agent.dir, makeTestHome('acp-root-'));
  }

  async stop(): Promise<void> {
    await this.tuicd.stop();
    rmSync(this.agentDir, { recursive: true, force: true });
    rmSync(this.root, { recursive: true, force: true });
  }

  call(method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    return this.tuicd.socket(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      body === undefined ? {} : { 'content-type': 'application/json' },
    );
  }

  async ok<T = any>(method: string, path: string, body?: unknown, status = 200): Promise<T> {
    const r = await this.call(method, path, body);
    if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json<T>();
  }

  async connect(): Promise<{ id: string; [k: string]: any }> {
    return this.ok('POST', '/acp/connections', { root: this.root }, 201);
  }

  async newSession(id: string): Promise<string> {
    return (await this.ok<{ sessionId: string }>('POST', `/acp/connections/${id}/sessions`, {})).sessionId;
  }

  prompt(id: string, sid: string, text: string): Promise<{ turnId: string; seq: number }> {
    return this.ok('POST', `/acp/connections/${id}/sessions/${sid}/prompt`, { prompt: [{ type: 'text', text }] }, 202);
  }

  /** `after` as the query says it (a string tests a malformed one); `client` as `?client=`. */
  stream(id: string, after?: number | string, client?: string): Promise<AcpStreamReader> {
    const query = new URLSearchParams();
    if (after !== undefined) query.set('after', String(after));
    if (client !== undefined) query.set('client', client);
    const search = query.size === 0 ? '' : `?${query}`;
    return AcpStreamReader.open(`ws+unix://${this.tuicd.socketPath}:/acp/connections/${id}/stream${search}`);
  }
}

/** Frames of one stream socket, in arrival order. */
export class AcpStreamReader {
  readonly frames: Frame[] = [];
  closed = false;
  closeCode = 0;
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.frames.push(JSON.parse(data.toString('utf8')) as Frame);
      this.wake();
    });
    ws.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
      this.wake();
    });
  }

  static open(url: string): Promise<AcpStreamReader> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const reader = new AcpStreamReader(ws);
      ws.once('open', () => resolve(reader));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body })));
      });
      ws.once('error', reject);
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits for a frame matching `pred` (from the start of the stream); returns it. */
  async waitFor(pred: (f: Frame) => boolean, what: string, timeoutMs = 15_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(pred);
      if (found) return found;
      if (this.closed) throw new Error(`stream closed before ${what}; frames: ${JSON.stringify(this.frames.slice(-5))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what} not seen within ${timeoutMs} ms; last frames: ${JSON.stringify(this.frames.slice(-5))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async waitForClose(timeoutMs = 10_000): Promise<void> {
    await this.waitFor(() => false, 'close', timeoutMs).catch((err: Error) => {
      if (!this.closed) throw err;
    });
  }

  /** The event frames of a type. */
  events(type: string): Frame[] {
    return this.frames.filter((f) => f.kind === 'event' && f.event.type === type);
  }

  /** The text of agent_message_chunk updates, in order. */
  agentText(): string[] {
    return this.events('session_update')
      .filter((f) => f.event['notification'].update.sessionUpdate === 'agent_message_chunk')
      .map((f) => f.event['notification'].update.content.text as string);
  }

  close(): void {
    this.ws.close();
  }
}

export const turnEnded = (turnId: string) => (f: Frame) => f.kind === 'event' && f.event.type === 'turn_ended' && f.event['turnId'] === turnId;

/** Whether a process (or group, with a negative id) still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
