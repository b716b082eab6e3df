/**
 * The handlers of ProxyStdioProtocol: one pump per stdio upstream, owning at most one child at a
 * time (StdioSession) and what must outlive a respawn: the request id counter (monotonic, so an
 * answer from a previous child can never match a request to the next one) and the time of the
 * last spawn (MIN_RESPAWN_INTERVAL_MS, so a crashing server cannot be respawned in a tight loop).
 */

import type { SendOptions } from '../../shared/channel.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import {
  type EventOf,
  type HandlerContext,
  type HandlersOf,
  type ParamsOf,
  type PayloadReply,
  type ResultOf,
  withPayload,
} from '../../shared/protocol/defineProtocol.js';
import { type ProxyStdioProtocolT, StdioLimits } from '../../shared/protocol/proxyStdio.js';
import { buildChildEnv, expandHome, resolveHome } from './childEnv.js';
import { hasNewline } from './jsonRpcLines.js';
import { type LogLevel, StdioSession, upstreamFailure } from './stdioSession.js';

type P = ProxyStdioProtocolT;

export interface PumpEvents {
  emit<E extends 'exited' | 'stderr' | 'log' | 'message'>(event: E, data: EventOf<P, E>, options?: SendOptions): void;
}

const EMPTY_TOOLS = Buffer.from('[]');

export class Pump implements HandlersOf<P> {
  private session: StdioSession | undefined;
  /** The last session's counters stay readable after it ended (why did it time out?). */
  private lastSession: StdioSession | undefined;
  private lastSpawnAt: number | undefined;
  private nextRequestId = 1;
  private starting = false;
  /** The upstream's name from the last `start`, for errors when no child runs. */
  private name = '';
  /** Bumped by `shutdown`: a `start` that was spawning meanwhile must not leave its child running. */
  private generation = 0;
  private readonly nextId = (): number => this.nextRequestId++;

  constructor(private readonly events: PumpEvents) {}

  async start(params: ParamsOf<P, 'start'>, ctx: HandlerContext): Promise<PayloadReply<ResultOf<P, 'start'>>> {
    if (this.starting) throw new SupervisorError(ErrorCode.UPSTREAM_SPAWN_FAILED, `Upstream '${params.name}' is already starting`);
    const now = Date.now();
    if (this.lastSpawnAt !== undefined && now - this.lastSpawnAt < StdioLimits.MIN_RESPAWN_INTERVAL_MS) {
      throw new SupervisorError(
        ErrorCode.UPSTREAM_SPAWN_FAILED,
        `Upstream '${params.name}' respawning too fast (${now - this.lastSpawnAt}ms since last spawn, min ${StdioLimits.MIN_RESPAWN_INTERVAL_MS}ms)`,
        // retry_after_ms: when a start would be taken (the hub waits that long instead of failing).
        { upstream: params.name, reason: 'respawn_rate_limit', retry_after_ms: StdioLimits.MIN_RESPAWN_INTERVAL_MS - (now - this.lastSpawnAt) },
      );
    }
    this.starting = true;
    this.name = params.name;
    try {
      if (this.session !== undefined) await this.session.shutdown();
      const generation = this.generation;
      const home = resolveHome();
      this.lastSpawnAt = Date.now();
      const session = await StdioSession.spawn(
        {
          name: params.name,
          command: expandHome(params.command, home),
          args: params.args.map((arg) => expandHome(arg, home)),
          env: buildChildEnv(params.env),
          ...(params.cwd !== undefined ? { cwd: expandHome(params.cwd, home) } : {}),
          timeoutMs: params.timeout_ms,
        },
        {
          log: (level, msg, fields) => this.log(level, msg, fields),
          stderr: (line) => this.events.emit('stderr', { line }),
          exited: (event) => {
            if (this.session === session) this.session = undefined;
            this.events.emit('exited', event);
          },
          message: ({ method, id, params }) => {
            const data = id === undefined ? { pid: session.pid, method } : { pid: session.pid, method, id };
            this.events.emit('message', data, params === undefined ? undefined : { payload: Buffer.from(JSON.stringify(params)) });
          },
        },
        this.nextId,
      );
      this.session = session;
      this.lastSession = session;
      if (generation !== this.generation) {
        await session.shutdown();
        throw new SupervisorError(ErrorCode.UPSTREAM_SPAWN_FAILED, `Upstream '${params.name}' was shut down while starting`);
      }
      return await this.handshake(session, params, ctx);
    } finally {
      this.starting = false;
    }
  }

  async rpc(params: ParamsOf<P, 'rpc'>, ctx: HandlerContext): Promise<ResultOf<P, 'rpc'> | PayloadReply<ResultOf<P, 'rpc'>>> {
    const session = this.runningSession(params.method);
    const body = ctx.payload;
    if (body !== undefined && hasNewline(body))
      throw new SupervisorError(ErrorCode.INVALID_MESSAGE, `params of '${params.method}' hold a raw newline; send compact JSON`);
    const reply = await session.request(params.method, body, params.timeout_ms ?? session.timeoutMs, ctx);
    if (reply.error !== undefined) return { error: reply.error };
    return withPayload({}, Buffer.from(JSON.stringify(reply.result)), { transfer: true });
  }

  notify(params: ParamsOf<P, 'notify'>, ctx: HandlerContext): ResultOf<P, 'notify'> {
    const session = this.runningSession(params.method);
    const body = ctx.payload;
    if (body !== undefined && hasNewline(body))
      throw new SupervisorError(ErrorCode.INVALID_MESSAGE, `params of '${params.method}' hold a raw newline; send compact JSON`);
    session.notify(params.method, body);
    return {};
  }

  answer(params: ParamsOf<P, 'answer'>, ctx: HandlerContext): ResultOf<P, 'answer'> {
    const session = this.session;
    // The child that asked is gone (or was replaced): nobody is waiting for this answer.
    if (session === undefined || !session.running || session.pid !== params.pid) return {};
    const body = params.error === undefined ? ctx.payload : undefined;
    if (body !== undefined && hasNewline(body)) throw new SupervisorError(ErrorCode.INVALID_MESSAGE, 'an answer holds a raw newline; send compact JSON');
    session.answer(params.id, body, params.error);
    return {};
  }

  status(): ResultOf<P, 'status'> {
    const session = this.session ?? this.lastSession;
    const counters = session?.counters() ?? { dropped_lines: 0, oversized_lines: 0, queued_lines: 0, queued_bytes: 0, in_flight: 0 };
    const alive = this.session?.running === true;
    return { alive, pid: alive ? this.session!.pid : null, ...counters };
  }

  private runningSession(method: string): StdioSession {
    const session = this.session;
    if (session === undefined || !session.running) {
      throw upstreamFailure(ErrorCode.HANDLER_FAILED, `Upstream '${this.name}' is not running; '${method}' not sent`, this.name, 'not_running');
    }
    return session;
  }

  async shutdown(): Promise<ResultOf<P, 'shutdown'>> {
    this.generation++;
    await this.session?.shutdown();
    return {};
  }

  private async handshake(session: StdioSession, params: ParamsOf<P, 'start'>, ctx: HandlerContext): Promise<PayloadReply<ResultOf<P, 'start'>>> {
    const onAbort = (): void => session.teardown('start was cancelled by the hub');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const initParams = {
        protocolVersion: params.protocol_version,
        capabilities: params.capabilities ?? {},
        clientInfo: { name: params.client_name, version: params.client_version },
      };
      const init = await session.request('initialize', Buffer.from(JSON.stringify(initParams)), params.timeout_ms);
      if (init.error !== undefined)
        throw new SupervisorError(
          ErrorCode.UPSTREAM_SPAWN_FAILED,
          `Upstream '${params.name}' refused initialize: ${init.error.message} (code ${init.error.code})`,
        );
      session.notify('notifications/initialized');
      const list = await session.request('tools/list', undefined, params.timeout_ms);
      if (list.error !== undefined)
        throw new SupervisorError(
          ErrorCode.UPSTREAM_SPAWN_FAILED,
          `Upstream '${params.name}' refused tools/list: ${list.error.message} (code ${list.error.code})`,
        );
      const tools = (list.result as { tools?: unknown } | null)?.tools;
      if (!Array.isArray(tools))
        this.log('warn', `Upstream '${params.name}' tools/list answer has no tools array; treating as no tools`, { upstream: params.name });
      const initResult = init.result as { serverInfo?: { name?: unknown }; capabilities?: unknown } | null;
      const serverName = typeof initResult?.serverInfo?.name === 'string' ? initResult.serverInfo.name : null;
      const declared = initResult?.capabilities;
      const capabilities = typeof declared === 'object' && declared !== null && !Array.isArray(declared) ? (declared as Record<string, unknown>) : {};
      return withPayload({ pid: session.pid, server_name: serverName, capabilities }, Array.isArray(tools) ? Buffer.from(JSON.stringify(tools)) : EMPTY_TOOLS);
    } catch (err) {
      session.teardown(`handshake failed: ${(err as Error).message}`);
      throw err;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  private log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    this.events.emit('log', fields === undefined ? { level, msg } : { level, msg, fields });
  }
}
