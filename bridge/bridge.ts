/**
 * The bridge's state machine: one MCP protocol session on tuicd, carried across tuicd restarts.
 *
 * - Connecting sends the client's stored initialize (or the bridge's own before the client sent
 *   one) and keeps the session id tuicd gives; a reconnect replays the client's initialize, so its
 *   session metadata (a Grok client's collapsed surface, the caller's TUIC identity) comes back
 *   without a second initialize answer reaching the client.
 * - Every other message is forwarded as its own POST, concurrently: answers may come back out of
 *   order, and a slow wait never holds up a quick call.
 * - A 3 s `ping` health loop owns disconnects: 3 failures in a row and the bridge is offline (it
 *   answers by itself, see offline.ts) until a reconnect succeeds. Connectivity changes and the
 *   notifications on tuicd's GET /mcp stream reach the client as JSON-RPC notifications.
 */
import { deadlineFor } from './deadlines.js';
import { type EventStream, type IpcAnswer, IpcError, ipcEventStream, ipcRequest } from './ipcHttp.js';
import { DEFAULT_PROTOCOL_VERSION } from '../shared/mcpRevisions.js';
import { errorLine, JsonRpcErrors, type JsonRpcId, offlineAnswer, offlineInitializeResult } from './offline.js';

export const BridgeTimings = {
  HEALTH_INTERVAL_MS: 3_000,
  /** Consecutive failed pings that mark tuicd gone (HEALTH_FAIL_THRESHOLD). */
  HEALTH_FAIL_THRESHOLD: 3,
  SSE_BACKOFF_MIN_MS: 1_000,
  SSE_BACKOFF_MAX_MS: 8_000,
  /** A stream that stayed up this long was healthy: the next drop starts the backoff over. */
  SSE_HEALTHY_MS: 10_000,
  /** stdin closed: in-flight calls get this long to finish (SHUTDOWN_GRACE). */
  SHUTDOWN_GRACE_MS: 5_000,
} as const;

const LIST_CHANGED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });

export interface BridgeOptions {
  /** Socket paths to try, best first; asked again at every connect (tuicd may have moved). */
  candidates: () => string[];
  /** `$TUIC_SESSION`, read once at start: sent as `x-tuic-session`. */
  tuicSession: string | null;
  version: string;
  /** One whole line to the client (no newline). */
  write: (line: string) => void;
  log: (message: string) => void;
  timings?: Partial<typeof BridgeTimings>;
}

type Message = Record<string, unknown>;

function isObject(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A request: has a method and an id (notifications have no id; responses no method). */
function isRequest(m: unknown): m is Message {
  return isObject(m) && typeof m['method'] === 'string' && 'id' in m && m['id'] !== undefined;
}

/** The id of a JSON-RPC response in an event's data; undefined for anything else (a notification, a request). */
function responseIdOf(data: string): JsonRpcId | undefined {
  try {
    const m: unknown = JSON.parse(data);
    return isObject(m) && !('method' in m) && ('result' in m || 'error' in m) ? idOf(m) : undefined;
  } catch {
    return undefined;
  }
}

function idOf(m: Message): JsonRpcId {
  const id = m['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

export class Bridge {
  private readonly timings: typeof BridgeTimings;
  private socketPath: string | null = null;
  private sessionId: string | null = null;
  private protocolVersion: string | null = null;
  private connected = false;
  /** The client's initialize, exactly as it sent it: replayed on every reconnect. */
  private clientInitialize: string | null = null;
  /** The client has its initialize answer: notifications may go to it from now on. */
  private clientReady = false;
  private connecting: Promise<boolean> | null = null;
  /** Why the last connect or request failed, for offline answers. */
  private lastFailure = 'tuicd has not been reached yet.';
  private healthFailures = 0;
  private healthTimer: NodeJS.Timeout | undefined;
  private healthBusy = false;
  private sse: EventStream | null = null;
  private sseTimer: NodeJS.Timeout | undefined;
  private sseBackoffMs: number;
  private sseOpenedAt = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private closing = false;

  constructor(private readonly opts: BridgeOptions) {
    this.timings = { ...BridgeTimings, ...opts.timings };
    this.sseBackoffMs = this.timings.SSE_BACKOFF_MIN_MS;
  }

  /** Connects eagerly (for a session id before the client asks) and starts the health loop. */
  start(): void {
    void this.ensureConnected();
    this.healthTimer = setInterval(() => void this.healthTick(), this.timings.HEALTH_INTERVAL_MS);
  }

  /**
   * One line from the client. initialize is handled before the next line is read (the caller
   * awaits this); everything else runs on its own and this returns at once.
   */
  async handleLine(line: string): Promise<void> {
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (err) {
      this.opts.write(errorLine(null, JsonRpcErrors.PARSE_ERROR, `Parse error: ${(err as Error).message}`));
      return;
    }
    if (isRequest(message) && message['method'] === 'initialize') return this.initialize(line, message);
    // The client's initialized notification: tuicd's session is live since its initialize answer.
    if (isObject(message) && message['method'] === 'notifications/initialized' && !('id' in message)) return;
    const task = this.forward(line, message).finally(() => this.inFlight.delete(task));
    this.inFlight.add(task);
  }

  /** stdin ended: in-flight calls get the grace period, then everything stops. */
  async shutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.healthTimer);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => (grace = setTimeout(r, this.timings.SHUTDOWN_GRACE_MS)))]);
    clearTimeout(grace);
    this.stopSse();
  }

  private async initialize(line: string, message: Message): Promise<void> {
    this.clientInitialize = line;
    const id = idOf(message);
    const params = isObject(message['params']) ? message['params'] : {};
    if (await this.ensureConnected()) {
      try {
        const answer = await this.post(line, deadlineFor(message), { initialize: true });
        const reply: unknown = JSON.parse(answer.body);
        if (isObject(reply) && isObject(reply['result'])) {
          const result = reply['result'];
          if (typeof result['protocolVersion'] === 'string') this.protocolVersion = result['protocolVersion'];
          // The bridge itself emits list_changed on connectivity changes, whatever tuicd says.
          const capabilities = isObject(result['capabilities']) ? result['capabilities'] : (result['capabilities'] = {});
          capabilities['tools'] = { ...(isObject(capabilities['tools']) ? capabilities['tools'] : {}), listChanged: true };
          this.opts.write(JSON.stringify(reply));
          this.clientReady = true;
          return;
        }
      } catch (err) {
        this.lastFailure = this.failureText(err);
      }
    }
    const result = offlineInitializeResult(params['protocolVersion'], this.opts.version);
    this.protocolVersion = (result as { protocolVersion: string }).protocolVersion;
    this.opts.write(JSON.stringify({ jsonrpc: '2.0', id, result }));
    this.clientReady = true;
  }

  private async forward(line: string, message: unknown): Promise<void> {
    const requests = Array.isArray(message) ? message.filter(isRequest) : isRequest(message) ? [message] : [];
    const wantsAnswer = requests.length > 0;
    if (!this.connected && !(await this.ensureConnected())) {
      if (wantsAnswer) this.writeOffline(message, requests);
      return;
    }
    const deadline = requests.length === 1 ? deadlineFor(requests[0]) : Math.max(deadlineFor(message), ...requests.map(deadlineFor));
    // tuicd answers as an event stream when messages must reach the client before the answer
    // (progress, an upstream's sampling or elicitation request): each goes out as it arrives.
    const answered = new Set<JsonRpcId>();
    const onEvent = (data: string): void => {
      const id = responseIdOf(data);
      if (id !== undefined) answered.add(id);
      if (!data.includes('\n')) return this.opts.write(data);
      try {
        this.opts.write(JSON.stringify(JSON.parse(data)));
      } catch {
        this.opts.log(`tuicd sent an event that is not JSON; dropped: ${data.slice(0, 120)}`);
      }
    };
    let answer: IpcAnswer;
    try {
      answer = await this.post(line, deadline, { onEvent });
    } catch (err) {
      if (!wantsAnswer) return;
      const why = this.failureText(err);
      // A transport error answers this request only: the health loop decides whether tuicd is gone.
      for (const r of requests) this.opts.write(errorLine(idOf(r), JsonRpcErrors.TRANSPORT_FAILED, `TUICommander IPC request failed: ${why}`));
      return;
    }
    if (!wantsAnswer) return;
    if ((answer.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      for (const r of requests)
        if (!answered.has(idOf(r)))
          this.opts.write(errorLine(idOf(r), JsonRpcErrors.TRANSPORT_FAILED, 'TUICommander IPC request failed: the answer stream ended without a response'));
      return;
    }
    this.writeAnswer(answer, requests);
  }

  private writeOffline(message: unknown, requests: Message[]): void {
    const answers = requests.map((r) => offlineAnswer(idOf(r), String(r['method']), this.lastFailure));
    this.opts.write(Array.isArray(message) ? `[${answers.join(',')}]` : answers[0]!);
  }

  /** tuicd's JSON-RPC answer as it is; anything else becomes an error naming what came back. */
  private writeAnswer(answer: IpcAnswer, requests: Message[]): void {
    // tuicd's own single-line JSON-RPC answers go out as they are, unparsed (the hot path).
    if (answer.body.startsWith('{"jsonrpc":"2.0",') && answer.body.endsWith('}') && !answer.body.includes('\n')) {
      this.opts.write(answer.body);
      return;
    }
    let parsed: unknown;
    try {
      parsed = answer.body === '' ? undefined : JSON.parse(answer.body);
    } catch {
      parsed = undefined;
    }
    const isJsonRpc = (v: unknown) => isObject(v) && v['jsonrpc'] === '2.0';
    if (parsed !== undefined && (isJsonRpc(parsed) || (Array.isArray(parsed) && parsed.every(isJsonRpc)))) {
      // One line per message: re-serialize only if tuicd's body spans lines.
      this.opts.write(answer.body.includes('\n') ? JSON.stringify(parsed) : answer.body);
      return;
    }
    const why =
      answer.status === 404
        ? `tuicd answers on ${this.socketPath} but its MCP endpoint is unavailable (HTTP 404)`
        : `HTTP ${answer.status}: ${answer.body.slice(0, 200) || 'no body'}`;
    for (const r of requests) this.opts.write(errorLine(idOf(r), JsonRpcErrors.TRANSPORT_FAILED, `TUICommander IPC request failed: ${why}`));
  }

  /** Single-flight: callers during a connect share its outcome. */
  private ensureConnected(): Promise<boolean> {
    if (this.connected) return Promise.resolve(true);
    if (this.closing) return Promise.resolve(false);
    return (this.connecting ??= this.connect().finally(() => (this.connecting = null)));
  }

  private async connect(): Promise<boolean> {
    const initialize = this.clientInitialize ?? this.ownInitialize();
    for (const path of this.opts.candidates()) {
      try {
        // The previous session id, if any, is presented: tuicd resumes a session it still knows
        // (so this bridge stays the owner of its identity) and opens a new one otherwise.
        this.socketPath = path;
        const answer = await this.post(initialize, deadlineFor(null), { initialize: true });
        if (answer.status === 404) throw new IpcError('failed', `tuicd answers on ${path} but its MCP endpoint is unavailable (HTTP 404)`);
        const reply: unknown = JSON.parse(answer.body);
        if (!isObject(reply) || !isObject(reply['result'])) throw new IpcError('failed', `initialize was refused: ${answer.body.slice(0, 200)}`);
        if (typeof answer.headers['mcp-session-id'] !== 'string') throw new IpcError('failed', 'initialize answered without an Mcp-Session-Id');
        const version = reply['result']['protocolVersion'];
        if (typeof version === 'string') this.protocolVersion = version;
        const wasOffline = !this.connected;
        this.connected = true;
        this.healthFailures = 0;
        this.opts.log(`connected to tuicd at ${path} (MCP session ${this.sessionId})`);
        this.startSse();
        if (wasOffline) this.notify(LIST_CHANGED);
        return true;
      } catch (err) {
        this.lastFailure = this.failureText(err);
      }
    }
    this.socketPath = null;
    return false;
  }

  private ownInitialize(): string {
    return JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: DEFAULT_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'tuic-bridge', version: this.opts.version } },
    });
  }

  private disconnect(why: string): void {
    if (!this.connected) return;
    this.connected = false;
    this.lastFailure = why;
    this.stopSse();
    this.opts.log(`tuicd unreachable: ${why}`);
    this.notify(LIST_CHANGED);
  }

  private async healthTick(): Promise<void> {
    if (this.closing || this.healthBusy) return;
    this.healthBusy = true;
    try {
      if (!this.connected) {
        await this.ensureConnected();
        return;
      }
      try {
        const answer = await this.post('{"jsonrpc":"2.0","id":0,"method":"ping"}', this.timings.HEALTH_INTERVAL_MS);
        if (answer.status !== 200)
          throw new IpcError(
            'failed',
            answer.status === 404
              ? `tuicd answers on ${this.socketPath} but its MCP endpoint is unavailable (HTTP 404)`
              : `ping answered HTTP ${answer.status}`,
          );
        this.healthFailures = 0;
      } catch (err) {
        if (++this.healthFailures >= this.timings.HEALTH_FAIL_THRESHOLD) this.disconnect(this.failureText(err));
      }
    } finally {
      this.healthBusy = false;
    }
  }

  private headers(initialize: boolean): Record<string, string> {
    const h: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (this.sessionId !== null) h['Mcp-Session-Id'] = this.sessionId;
    if (this.opts.tuicSession) h['X-Tuic-Session'] = this.opts.tuicSession;
    // initialize negotiates the revision; every later request names it.
    if (!initialize) h['MCP-Protocol-Version'] = this.protocolVersion ?? DEFAULT_PROTOCOL_VERSION;
    return h;
  }

  private async post(body: string, timeoutMs: number, opts: { initialize?: boolean; onEvent?: (data: string) => void } = {}): Promise<IpcAnswer> {
    const path = this.socketPath;
    if (path === null) throw new IpcError('unreachable', this.lastFailure);
    const request = { method: 'POST' as const, path: '/mcp', headers: this.headers(opts.initialize ?? false), body, timeoutMs };
    const answer = await ipcRequest(path, opts.onEvent === undefined ? request : { ...request, onEvent: opts.onEvent });
    // A session tuicd no longer knew is recreated under a new id: follow it.
    const id = answer.headers['mcp-session-id'];
    if (typeof id === 'string' && id !== '' && path === this.socketPath) this.sessionId = id;
    return answer;
  }

  private failureText(err: unknown): string {
    if (err instanceof IpcError && err.kind === 'unreachable') return `tuicd is not running (${err.message}).`;
    return `${(err as Error)?.message ?? String(err)}`;
  }

  /** A notification to the client, once it has its initialize answer (none may precede it). */
  private notify(line: string): void {
    if (this.clientReady && !this.closing) this.opts.write(line);
  }

  private startSse(): void {
    this.stopSse();
    const path = this.socketPath;
    if (path === null || this.sessionId === null || this.closing) return;
    const headers = this.headers(false);
    delete headers['Content-Type'];
    this.sseOpenedAt = Date.now();
    const sessionAtStart = this.sessionId;
    this.sse = ipcEventStream(
      path,
      '/mcp',
      headers,
      (data) => this.onServerEvent(data),
      (why) => this.onSseEnd(sessionAtStart, why),
    );
  }

  private stopSse(): void {
    clearTimeout(this.sseTimer);
    this.sseTimer = undefined;
    this.sse?.close();
    this.sse = null;
  }

  /** Server notifications (tools/list_changed, claude/channel pushes) go to the client; requests and pings do not. */
  private onServerEvent(data: string): void {
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(message) || 'id' in message || typeof message['method'] !== 'string' || !message['method'].startsWith('notifications/')) return;
    this.notify(JSON.stringify(message));
  }

  /**
   * The stream ended while connected. tuicd may have restarted (and forgotten the session), so the
   * restart re-sends the client's initialize first: tuicd resumes a session it knows, or opens a new
   * one with the same metadata; then the stream is reopened. Backoff 1 → 2 → 4 → 8 s.
   */
  private onSseEnd(session: string, why: string): void {
    this.sse = null;
    if (this.closing || !this.connected || this.sessionId !== session) return;
    if (Date.now() - this.sseOpenedAt >= this.timings.SSE_HEALTHY_MS) this.sseBackoffMs = this.timings.SSE_BACKOFF_MIN_MS;
    const delay = this.sseBackoffMs;
    this.sseBackoffMs = Math.min(this.sseBackoffMs * 2, this.timings.SSE_BACKOFF_MAX_MS);
    this.opts.log(`tuicd's event stream ended (${why}); reopening in ${delay / 1000} s`);
    this.sseTimer = setTimeout(() => void this.reopen(session), delay);
  }

  private async reopen(session: string): Promise<void> {
    this.sseTimer = undefined;
    if (this.closing || !this.connected || this.sessionId !== session) return;
    try {
      const answer = await this.post(this.clientInitialize ?? this.ownInitialize(), deadlineFor(null), { initialize: true });
      if (answer.status !== 200) throw new IpcError('failed', `initialize answered HTTP ${answer.status}`);
    } catch (err) {
      // Not reachable now: try again on the backoff; the health loop decides when tuicd is gone.
      this.lastFailure = this.failureText(err);
      this.onSseEnd(session, this.lastFailure);
      return;
    }
    if (this.sessionId !== session) this.opts.log(`tuicd forgot MCP session ${session}; continuing as ${this.sessionId}`);
    this.startSse();
    // Whatever tuicd announced while the stream was down is lost: the client refreshes once instead.
    this.notify(LIST_CHANGED);
  }
}
