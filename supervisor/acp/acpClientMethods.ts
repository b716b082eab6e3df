/**
 * The client-side ACP methods tuicd serves an agent besides its questions: `fs/read_text_file` and
 * `fs/write_text_file` confined to the connection's root (symlinks resolved, so a link cannot lead
 * out), and `terminal/*` backed by real tuicd sessions — a phone can watch an agent's command run on
 * /sessions/:id/stream like any other terminal. Failures go back to the agent as JSON-RPC errors.
 */
import { isInside, realPathOrAncestor } from '../fs/rootGate.js';
import { constants as osConstants } from 'node:os';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';

import {
  type CreateTerminalRequest,
  type CreateTerminalResponse,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  RequestError,
  type TerminalExitStatus,
  type TerminalOutputResponse,
  type WriteTextFileRequest,
} from '@agentclientprotocol/sdk';

import type { Disposable } from '../../shared/disposable.js';
import type { SessionRecord } from '../sessions/sessionRecord.js';
import type { SessionService } from '../sessions/sessionService.js';

export const AcpClientLimits = {
  /** A file the agent reads or writes through us. */
  MAX_FILE_BYTES: 10 * 1024 * 1024,
  /** Terminals one connection may hold at once. */
  MAX_TERMINALS: 16,
  /** Output returned by terminal/output when the agent names no limit. */
  DEFAULT_OUTPUT_BYTES: 1024 * 1024,
} as const;

/** The real path of `path` (or of its nearest existing ancestor, plus the rest), refused outside `root` (the fs routes' rule, rootGate.ts). */
async function confined(root: string, path: string): Promise<string> {
  if (typeof path !== 'string' || !isAbsolute(path)) throw RequestError.invalidParams({ path }, 'path must be absolute');
  const real = realPathOrAncestor(resolve(path));
  if (!isInside(real, realPathOrAncestor(resolve(root)))) throw RequestError.invalidParams({ path }, 'path is outside the connection root');
  return real;
}

export async function readTextFile(root: string, params: ReadTextFileRequest): Promise<ReadTextFileResponse> {
  const path = await confined(root, params.path);
  const info = await stat(path).catch(() => null);
  if (info === null || !info.isFile()) throw RequestError.resourceNotFound(params.path);
  if (info.size > AcpClientLimits.MAX_FILE_BYTES)
    throw RequestError.invalidParams({ path: params.path }, `file is over ${AcpClientLimits.MAX_FILE_BYTES} bytes`);
  const text = await readFile(path, 'utf8');
  if (params.line == null && params.limit == null) return { content: text };
  const lines = text.split('\n');
  const start = Math.max(0, (params.line ?? 1) - 1);
  const end = params.limit == null ? lines.length : start + params.limit;
  return { content: lines.slice(start, end).join('\n') };
}

export async function writeTextFile(root: string, params: WriteTextFileRequest): Promise<void> {
  const path = await confined(root, params.path);
  if (Buffer.byteLength(params.content, 'utf8') > AcpClientLimits.MAX_FILE_BYTES)
    throw RequestError.invalidParams({ path: params.path }, `content is over ${AcpClientLimits.MAX_FILE_BYTES} bytes`);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, params.content, 'utf8');
}

const SIGNAL_NAMES = new Map<number, string>(Object.entries(osConstants.signals).map(([name, num]) => [num, name]));

function exitStatusOf(record: SessionRecord): TerminalExitStatus | null {
  if (record.exit === null) return null;
  return { exitCode: record.exit.exit_code, signal: record.exit.signal === null ? null : (SIGNAL_NAMES.get(record.exit.signal) ?? String(record.exit.signal)) };
}

/** The last `limit` bytes of `bytes` as text, cut on a character boundary. */
function tail(bytes: Uint8Array, limit: number): { output: string; truncated: boolean } {
  if (bytes.length <= limit) return { output: Buffer.from(bytes).toString('utf8'), truncated: false };
  let start = bytes.length - limit;
  // Skip UTF-8 continuation bytes so the first character is whole.
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return { output: Buffer.from(bytes.subarray(start)).toString('utf8'), truncated: true };
}

/** One connection's terminals: tuicd sessions it created, which only it may read, kill or release. */
export class AcpTerminals implements Disposable {
  private readonly owned = new Map<string, { outputByteLimit: number }>();

  constructor(
    private readonly sessions: SessionService,
    private readonly root: () => string,
  ) {}

  /** The tuicd session ids behind this connection's terminals. */
  ids(): string[] {
    return [...this.owned.keys()];
  }

  async create(params: CreateTerminalRequest): Promise<CreateTerminalResponse> {
    if (this.owned.size >= AcpClientLimits.MAX_TERMINALS)
      throw RequestError.invalidRequest(undefined, `at most ${AcpClientLimits.MAX_TERMINALS} terminals per connection`);
    const cwd = params.cwd == null ? this.root() : await confined(this.root(), params.cwd);
    const env: Record<string, string> = {};
    for (const v of params.env ?? []) env[v.name] = v.value;
    let record: SessionRecord;
    try {
      record = await this.sessions.create({ shell: params.command, args: params.args ?? [], cwd, ...(Object.keys(env).length > 0 ? { env } : {}) });
    } catch (err) {
      throw RequestError.internalError(undefined, `terminal not started: ${(err as Error).message}`);
    }
    this.owned.set(record.session_id, { outputByteLimit: params.outputByteLimit ?? AcpClientLimits.DEFAULT_OUTPUT_BYTES });
    return { terminalId: record.session_id };
  }

  async output(terminalId: string): Promise<TerminalOutputResponse> {
    const { record, limit } = this.terminal(terminalId);
    const raw = await this.sessions.readRaw(record.session_id, undefined, undefined).catch(() => ({ bytes: new Uint8Array(0) }));
    const { output, truncated } = tail(raw.bytes, limit);
    return { output, truncated, exitStatus: exitStatusOf(record) };
  }

  async waitForExit(terminalId: string, signal: AbortSignal): Promise<TerminalExitStatus> {
    const { record } = this.terminal(terminalId);
    if (record.exit !== null) return exitStatusOf(record)!;
    return new Promise<TerminalExitStatus>((resolveExit, reject) => {
      let listener: Disposable | undefined;
      const done = (): void => {
        listener?.dispose();
        signal.removeEventListener('abort', aborted);
      };
      const aborted = (): void => {
        done();
        reject(RequestError.requestCancelled());
      };
      listener = this.sessions.onLifecycle((_event, r) => {
        if (r.session_id !== record.session_id || r.exit === null) return;
        done();
        resolveExit(exitStatusOf(r)!);
      });
      signal.addEventListener('abort', aborted, { once: true });
    });
  }

  async kill(terminalId: string): Promise<void> {
    const { record } = this.terminal(terminalId);
    await this.sessions.kill(record.session_id);
  }

  async release(terminalId: string): Promise<void> {
    const { record } = this.terminal(terminalId);
    this.owned.delete(terminalId);
    await this.sessions.close(record.session_id, 'acp_terminal_released').catch(() => undefined);
  }

  /** Ends every terminal of the connection (it ended). */
  dispose(): void {
    for (const id of [...this.owned.keys()]) {
      this.owned.delete(id);
      if (this.sessions.resolve(id)) void this.sessions.close(id, 'acp_connection_ended').catch(() => undefined);
    }
  }

  private terminal(terminalId: string): { record: SessionRecord; limit: number } {
    const owned = this.owned.get(terminalId);
    const record = owned ? this.sessions.resolve(terminalId) : undefined;
    if (!owned || !record) throw RequestError.resourceNotFound(terminalId);
    return { record, limit: owned.outputByteLimit };
  }
}
