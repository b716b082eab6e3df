/**
 * The client side of the hub's two-way traffic. A client request the hub forwards to an upstream
 * (a proxied tools/call, resources/read, prompts/get, completion/complete) is opened here as an
 * exchange with a route the hub carries; whatever the upstream sends back before its answer
 * (progress, log messages, and its own requests: sampling/createMessage, elicitation/create,
 * roots/list) goes to that client on that request's stream, as MCP's Streamable HTTP transport
 * says: the POST's answer becomes `text/event-stream` at the first such message, and the response
 * ends the stream. Until then the answer stays plain JSON, so a call that sends nothing costs
 * nothing extra. A client that does not accept SSE gets those messages on its GET stream.
 *
 * An upstream's request waits here for the client's answer, which arrives as a POST carrying a
 * JSON-RPC response with the id we gave the request; only the session it was sent to can answer it.
 */
import type { Cancellation } from '../../shared/cancellation.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';
import { BodyParts } from '../http/bodyParts.js';
import { SseReply } from '../http/sseReply.js';
import type { Reply } from '../http/types.js';
import { errorResponse, JsonRpcCode, type JsonRpcClientResponse, type JsonRpcId } from './jsonRpc.js';
import { messageFrame } from './mcpStreams.js';
import type { McpSessionMeta, McpSessionStore } from './protocolSessions.js';
import type { RpcError, RpcOutcome } from './upstreamPrimitives.js';

export const ClientExchangeConstants = {
  /**
   * Longest an upstream's request waits for the client's answer. An elicitation waits on a person,
   * so it is long; the upstream's own timeout (timeout_secs) usually ends the wait first.
   */
  ANSWER_TIMEOUT_MS: 30 * 60_000,
} as const;

/** Where a message goes when its request's stream is gone: the session's GET stream, false when it has none. */
export type SessionPush = (sessionId: string, json: string) => boolean;

export interface ClientExchangesOptions {
  sessions: McpSessionStore;
  push: SessionPush;
  answerTimeoutMs?: number;
}

interface PendingQuestion {
  readonly exchange: ClientExchange | undefined;
  readonly resolve: (outcome: RpcOutcome) => void;
  readonly timer: NodeJS.Timeout;
}

/** One client request being served by an upstream. */
export class ClientExchange {
  private stream: SseReply | null = null;
  private early: ((reply: Reply) => void) | null = null;
  private finished = false;
  private readonly endListeners = new Set<() => void>();

  constructor(
    readonly route: string,
    readonly meta: McpSessionMeta,
    readonly upstream: string,
    private readonly acceptsSse: boolean,
    private readonly push: SessionPush,
  ) {}

  get open(): boolean {
    return !this.finished;
  }

  /**
   * One JSON-RPC message for the client: on this request's stream (which the answer becomes at the
   * first message), else on its GET stream. False when neither could take it.
   */
  send(json: string): boolean {
    if (this.finished) return this.push(this.meta.id, json);
    if (this.stream === null) {
      if (!this.acceptsSse || this.early === null) return this.push(this.meta.id, json);
      this.stream = new SseReply();
      this.stream.onClose(() => this.end());
      const answerEarly = this.early;
      this.early = null;
      answerEarly({ status: 200, headers: { 'Mcp-Session-Id': this.meta.id }, body: this.stream });
    }
    if (this.stream.push(messageFrame(json))) return true;
    return this.push(this.meta.id, json);
  }

  /** The handler's answer: plain when nothing was sent meanwhile, else the last frame of the stream. */
  reply(answer: Promise<Reply>): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      this.early = resolve;
      answer.then(
        (reply) => {
          this.early = null;
          if (this.stream === null) resolve(reply);
          else this.stream.end(messageFrame(bodyText(reply)));
          this.end();
        },
        (err: unknown) => {
          this.early = null;
          if (this.stream === null) reject(err);
          else this.stream.end(messageFrame(errorResponse(null, JsonRpcCode.INTERNAL_ERROR, (err as Error).message)));
          this.end();
        },
      );
    });
  }

  onEnd(listener: () => void): void {
    if (this.finished) listener();
    else this.endListeners.add(listener);
  }

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    for (const listener of [...this.endListeners]) listener();
    this.endListeners.clear();
  }
}

export class ClientExchanges {
  private nextRoute = 0;
  private nextQuestion = 0;
  private readonly byRoute = new Map<string, ClientExchange>();
  /** Each session's open exchanges, oldest first. */
  private readonly bySession = new Map<string, Set<ClientExchange>>();
  /** Questions awaiting the client's answer, by `<session>\n<id>`. */
  private readonly waiting = new Map<string, PendingQuestion>();
  private readonly answerTimeoutMs: number;

  constructor(private readonly opts: ClientExchangesOptions) {
    this.answerTimeoutMs = opts.answerTimeoutMs ?? ClientExchangeConstants.ANSWER_TIMEOUT_MS;
  }

  /** Opens the exchange for one request of `meta`'s session to `upstream`; `accept` is the request's Accept header. */
  open(meta: McpSessionMeta, upstream: string, accept: string | undefined, cancellation: Cancellation | undefined): ClientExchange {
    // The session id leads the route, so a question on a finished request still finds its client.
    const route = `${meta.id} ${(this.nextRoute++).toString(36)}`;
    const exchange = new ClientExchange(route, meta, upstream, accept?.includes('text/event-stream') === true, this.opts.push);
    this.byRoute.set(route, exchange);
    let open = this.bySession.get(meta.id);
    if (open === undefined) this.bySession.set(meta.id, (open = new Set()));
    open.add(exchange);
    const unlink = cancellation?.onCancel(() => this.abandonQuestionsOf(exchange, 'the client request that carried it ended'));
    exchange.onEnd(() => {
      unlink?.();
      this.byRoute.delete(route);
      const set = this.bySession.get(meta.id);
      set?.delete(exchange);
      if (set?.size === 0) this.bySession.delete(meta.id);
    });
    return exchange;
  }

  /** A message for the client request `route` names (progress); false when it went nowhere. */
  sendToRoute(route: string, json: string): boolean {
    const exchange = this.byRoute.get(route);
    if (exchange !== undefined) return exchange.send(json);
    const sessionId = sessionOfRoute(route);
    return sessionId !== null && this.opts.push(sessionId, json);
  }

  /** The session's most recent open exchange with `upstream` (where that upstream's log messages go). */
  latestWith(sessionId: string, upstream: string): ClientExchange | undefined {
    const open = this.bySession.get(sessionId);
    if (open === undefined) return undefined;
    let found: ClientExchange | undefined;
    for (const exchange of open) if (exchange.upstream === upstream) found = exchange;
    return found;
  }

  /**
   * An upstream's request to the client of `route` (the hub's ClientRequestHandler). Refused when
   * that client did not declare the capability, as the SDK's own client refuses: -32601 with no
   * capability at all, -32602 for an elicitation mode it does not take.
   */
  readonly ask = async (upstream: string, method: string, route: string | undefined, paramsJson: string): Promise<RpcOutcome> => {
    const sessionId = route === undefined ? null : sessionOfRoute(route);
    const meta = sessionId === null ? undefined : this.opts.sessions.get(sessionId);
    if (meta === undefined) return refusal(-32603, `no client of tuicd is in a request with upstream '${upstream}' to ask for ${method}`);
    const refused = capabilityRefusal(meta, method, paramsJson);
    if (refused !== null) return { error: refused };
    const id = `tuicd-${(this.nextQuestion++).toString(36)}`;
    const exchange = route === undefined ? undefined : this.byRoute.get(route);
    const json = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)},"params":${paramsJson}}`;
    const key = `${meta.id}\n${id}`;
    const answered = new Promise<RpcOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(key);
        resolve(refusal(-32603, `the client did not answer ${method} within ${Math.round(this.answerTimeoutMs / 1000)} s`));
      }, this.answerTimeoutMs);
      timer.unref();
      this.waiting.set(key, { exchange, resolve, timer });
    });
    const delivered = exchange !== undefined ? exchange.send(json) : this.opts.push(meta.id, json);
    if (!delivered) {
      this.settle(key, refusal(-32603, `the client has no open stream to receive ${method} (its request ended and it holds no GET /mcp stream)`));
    }
    return answered;
  };

  /** A client's JSON-RPC response; true when it answered a question of ours. */
  answer(sessionId: string, response: JsonRpcClientResponse): boolean {
    if (response.id === null) return false;
    const key = `${sessionId}\n${idText(response.id)}`;
    if (!this.waiting.has(key)) return false;
    if (response.error !== undefined) this.settle(key, { error: asRpcError(response.error) });
    else this.settle(key, { resultJson: JSON.stringify(response.result ?? {}) });
    return true;
  }

  /** The session is gone: its questions fail now instead of at their timeout. */
  dropSession(sessionId: string): void {
    for (const key of [...this.waiting.keys()])
      if (key.startsWith(`${sessionId}\n`)) this.settle(key, refusal(-32603, 'the client session ended before answering'));
  }

  private abandonQuestionsOf(exchange: ClientExchange, why: string): void {
    for (const [key, pending] of [...this.waiting]) if (pending.exchange === exchange) this.settle(key, refusal(-32603, why));
  }

  private settle(key: string, outcome: RpcOutcome): void {
    const pending = this.waiting.get(key);
    if (pending === undefined) return;
    this.waiting.delete(key);
    clearTimeout(pending.timer);
    pending.resolve(outcome);
  }
}

function refusal(code: number, message: string): RpcOutcome {
  return { error: { code, message } };
}

function sessionOfRoute(route: string): string | null {
  const space = route.lastIndexOf(' ');
  return space > 0 ? route.slice(0, space) : null;
}

/** Ids we send are strings; a client echoing one as a number is still matched by its text. */
function idText(id: JsonRpcId): string {
  return String(id);
}

function capabilityRefusal(meta: McpSessionMeta, method: string, paramsJson: string): RpcError | null {
  switch (method) {
    case 'sampling/createMessage':
      return meta.sampling ? null : { code: -32601, message: 'Method not found: the client did not declare the sampling capability' };
    case 'roots/list':
      return meta.roots ? null : { code: -32601, message: 'Method not found: the client did not declare the roots capability' };
    case 'elicitation/create': {
      if (!meta.form_elicitation && !meta.url_elicitation)
        return { code: -32601, message: 'Method not found: the client did not declare the elicitation capability' };
      const mode = elicitationMode(paramsJson);
      if (mode === 'url' && !meta.url_elicitation) return { code: -32602, message: 'the client does not support URL-mode elicitation requests' };
      if (mode !== 'url' && !meta.form_elicitation) return { code: -32602, message: 'the client does not support form-mode elicitation requests' };
      return null;
    }
    default:
      return { code: -32601, message: `Method not found: ${clipClientInput(method)}` };
  }
}

function elicitationMode(paramsJson: string): string {
  try {
    const mode = (JSON.parse(paramsJson) as { mode?: unknown }).mode;
    return typeof mode === 'string' ? mode : 'form';
  } catch {
    return 'form';
  }
}

function asRpcError(raw: unknown): RpcError {
  if (typeof raw !== 'object' || raw === null) return { code: -32603, message: String(raw) };
  const e = raw as Record<string, unknown>;
  const code = typeof e['code'] === 'number' && Number.isInteger(e['code']) ? e['code'] : -32603;
  const message = typeof e['message'] === 'string' ? e['message'] : 'the client answered with an error without a message';
  return e['data'] === undefined ? { code, message } : { code, message, data: e['data'] };
}

function bodyText(reply: Reply): string {
  const body = reply.body;
  if (typeof body === 'string') return body;
  if (body instanceof BodyParts) return body.join().toString('utf8');
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return JSON.stringify(body ?? null);
}
