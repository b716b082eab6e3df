/**
 * POST /mcp method dispatch (MCP's Streamable HTTP transport, answered as JSON): one JSON-RPC
 * message per request, the answer in the body as JSON — or, for a request speaking MCP 2025-03-26,
 * a JSON-RPC batch answered with an array. Identity is resolved per call: only initialize mints
 * session ids, every other method serves a caller with no id, and a presented id we no longer hold
 * is recreated silently. A MCP-Protocol-Version header naming no supported revision is refused.
 *
 * Hand-written rather than the SDK's `Server` (with its Streamable HTTP transport), also for the
 * methods the hub forwards (resources, prompts, completion, logging), because it measured faster
 * even with a hop to the hub worker and an upstream behind it: bench mcp/hubPrimitives, 16
 * callers, resources/read through tuicd at 3.1× (idle) and 2.3× (one core busy) the calls/s of
 * server-everything answering it itself behind the SDK's Server and transport, prompts/get 3.6×,
 * tools/call 4.0× / 2.8×. The SDK would add its per-message schema validation and, by default, an
 * SSE stream per answer; here an answer is plain JSON until a message must precede it.
 */
import { randomUUID } from 'node:crypto';

import { CancelSource, cancellationOf } from '../../shared/cancellation.js';
import { RawToolResult, serializeToolOutcome, type ToolCallOutcome } from '../../shared/mcpEnvelope.js';
import { BodyParts } from '../http/bodyParts.js';
import type { Reply, RequestContext } from '../http/types.js';
import { errorResponse, JsonRpcCode, parseBody, resultResponse, resultResponseParts } from './jsonRpc.js';
import type { JsonRpcCall, JsonRpcClientResponse, JsonRpcId, ParsedMessage } from './jsonRpc.js';
import { clipClientInput, quoteClientInput } from '../../shared/quoteClientInput.js';
import { HubConstants } from '../../shared/protocol/mcpHub.js';
import { negotiateProtocolVersion, SERVER_NAME, SUPPORTED_PROTOCOL_VERSIONS } from '../../shared/mcpRevisions.js';
import type { McpSessionMeta, McpSessionStore } from './protocolSessions.js';
import type { ToolCatalogView, ToolSurface } from './surface.js';
import type { CallerContext } from './tools/nativeTool.js';
import type { ClientExchange, ClientExchanges } from './clientExchanges.js';
import { PRIMITIVE_METHODS, type PrimitiveMethods } from './primitiveMethods.js';
import type { ClientRoute, HubCapabilities, RpcOutcome } from './upstreamPrimitives.js';

/**
 * The revision of a request that has no MCP-Protocol-Version header and no negotiated session: MCP
 * 2025-11-25 ("Protocol Version Header") tells servers to assume 2025-03-26 for backwards compatibility.
 */
export const ASSUMED_PROTOCOL_VERSION = '2025-03-26';
/** Revisions whose POST body may be a JSON-RPC batch (2025-06-18 removed batching). */
const BATCH_PROTOCOL_VERSIONS: ReadonlySet<string> = new Set(['2025-03-26']);

const SESSION_HEADER = 'mcp-session-id';
const PROTOCOL_VERSION_HEADER = 'mcp-protocol-version';
const TUIC_SESSION_HEADER = 'x-tuic-session';
/** Session ids are visible ASCII (MCP transport spec); the bound keeps a hostile header from growing our map keys. */
const SESSION_ID_PATTERN = /^[\x21-\x7e]{1,256}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Clients whose name (or User-Agent) says Claude Code or our bridge. */
const CLAUDE_CLIENT_PATTERN = /claude|tuic-bridge/i;
const GROK_CLIENT_PREFIX = 'grok-shell-';

const JSON_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'application/json' };

export interface TransportLog {
  info(obj: object, msg: string): void;
}

export interface McpTransportDeps {
  sessions: McpSessionStore;
  catalog: ToolCatalogView;
  log: TransportLog;
  version: string;
  /** initialize's instructions for a session on `surface` (renderInstructions over live state). */
  instructions(surface: ToolSurface, meta: McpSessionMeta): string;
  /** The live PTY session a TUIC identity runs in (by tuic_session or session id). */
  boundSessionFor(tuicSession: string): string | null;
  /** The upstreams a project (an MCP session's repo_path) may use; absent or null = every upstream. */
  allowlistFor?(repoPath: string | null): ReadonlySet<string> | null;
  /** The identity `agent register` bound to a protocol session without x-tuic-session (a generated one). */
  registeredIdentity?(mcpSessionId: string): string | null;
  /** After each initialize (fresh or resumed), before its answer: identity binding (Protocol 0 auto-identity). */
  onInitialized?(meta: McpSessionMeta): void;
  /**
   * The authorization URL for an upstream waiting for OAuth (a pending flow's, or a new one's);
   * null when the upstream does not wait for one. Asked after a call to its tool failed, for a
   * client that takes URL elicitations.
   */
  authorizeUpstream?(upstream: string): Promise<{ url: string; asOrigin: string; elicitationId: string } | null>;
  /** Resources, prompts, completion and logging from the upstreams; absent = tools only. */
  primitives?: PrimitiveMethods;
  /** Where upstream progress and requests to the client meet the client's requests and answers. */
  exchanges?: ClientExchanges;
  /** What the upstreams can do, for initialize's capabilities. */
  hubCapabilities?(): HubCapabilities;
  /** A client notification every upstream should hear (roots/list_changed). */
  notifyUpstreams?(method: string, paramsJson?: string): void;
}

/** Why a presented session header could not be used. */
export class BadSessionHeader extends Error {}

/**
 * The presented `Mcp-Session-Id`, null when absent; throws BadSessionHeader when malformed. A header
 * sent empty is malformed too: uWS hands a value with bytes outside ASCII (`ñññ`) over as '', so
 * taking '' for "no header" served such an id as a session-less caller.
 */
export function presentedSessionId(headers: Readonly<Record<string, string>>): string | null {
  const raw = headers[SESSION_HEADER];
  if (raw === undefined) return null;
  if (!SESSION_ID_PATTERN.test(raw)) throw new BadSessionHeader('Bad Request: Mcp-Session-Id must be 1-256 visible ASCII characters');
  return raw;
}

/**
 * The 400 for a MCP-Protocol-Version header naming no revision this endpoint serves (MCP 2025-11-25:
 * an invalid or unsupported one MUST be refused with 400), null when the header is absent or supported.
 */
export function protocolVersionRefusal(headers: Readonly<Record<string, string>>, id: JsonRpcId | null = null): Reply | null {
  const raw = headers[PROTOCOL_VERSION_HEADER];
  if (raw === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(raw)) return null;
  return jsonRpcErrorReply(
    400,
    JsonRpcCode.SERVER_ERROR,
    `Bad Request: unsupported MCP-Protocol-Version header ${quoteClientInput(raw)}; supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')} (without the header ${ASSUMED_PROTOCOL_VERSION} is assumed)`,
    id,
  );
}

/** A JSON-RPC error as a complete reply (transport refusals use the SDK's shape: id null, -32000), `data.code` included. */
export function jsonRpcErrorReply(
  status: number,
  code: number,
  message: string,
  id: JsonRpcId | null = null,
  headers?: Record<string, string>,
  data?: Readonly<Record<string, unknown>>,
): Reply {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: errorResponse(id, code, message, data) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A request's key among its session's in-flight calls; 7 and "7" are different JSON-RPC ids. */
function inFlightKey(sessionId: string, id: JsonRpcId): string {
  return `${sessionId}\n${typeof id === 'number' ? 'n' : 's'}${id}`;
}

function stringField(obj: unknown, key: string): string | null {
  if (!isPlainObject(obj)) return null;
  const value = obj[key];
  return typeof value === 'string' ? value : null;
}

/** The repository an initialize declares: `params.roots[0].uri` with `file://` stripped. */
function repoPathOf(params: Record<string, unknown> | undefined): string | null {
  const roots = params?.['roots'];
  if (!Array.isArray(roots) || roots.length === 0) return null;
  const uri = stringField(roots[0], 'uri');
  if (uri === null || uri === '') return null;
  if (!uri.startsWith('file://')) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri.slice('file://'.length);
  }
}

export class McpTransport {
  /**
   * tools/call requests a `notifications/cancelled` may stop, keyed by protocol session and id.
   * Streamable HTTP clients cancel with that notification on a new POST while the request's own
   * POST stays open, so watching the connection alone keeps a cancelled wait running to its deadline.
   */
  private readonly inFlight = new Map<string, CancelSource>();

  constructor(private readonly deps: McpTransportDeps) {}

  async handlePost(ctx: RequestContext): Promise<Reply> {
    const body = parseBody(ctx.body);
    if (body.kind === 'invalid') return jsonRpcErrorReply(body.status, body.code, body.message, body.id);
    const requestId = body.kind === 'request' ? body.id! : null;
    let presented: string | null;
    try {
      presented = presentedSessionId(ctx.headers);
    } catch (err) {
      return jsonRpcErrorReply(400, JsonRpcCode.SERVER_ERROR, (err as Error).message, requestId);
    }
    // initialize negotiates from its params; every other POST is held to the header it sends.
    if (!(body.kind === 'request' && body.method === 'initialize')) {
      const refusal = protocolVersionRefusal(ctx.headers, requestId);
      if (refusal !== null) return refusal;
    }
    if (body.kind === 'batch') return this.batch(ctx, body.messages, presented);
    return this.dispatch(ctx, body, presented);
  }

  /** One valid message: requests get their answer, notifications and client responses a bodiless 202. */
  /**
   * `inBatch`: the message is part of a batch, whose answers are joined into one JSON array: none
   * of them may turn into a stream, so messages for the client go on its GET stream instead.
   */
  private dispatch(ctx: RequestContext, message: JsonRpcCall | JsonRpcClientResponse, presented: string | null, inBatch = false): Reply | Promise<Reply> {
    // Answers to server requests and notifications are acknowledged without a body.
    if (message.kind === 'response') {
      if (presented !== null) this.deps.exchanges?.answer(presented, message);
      return { status: 202 };
    }
    if (message.kind === 'notification') {
      if (presented !== null && this.deps.sessions.has(presented)) this.deps.sessions.touch(presented);
      if (message.method === 'notifications/cancelled' && presented !== null) this.cancel(presented, message.params);
      if (message.method === 'notifications/roots/list_changed')
        this.deps.notifyUpstreams?.(message.method, message.params === undefined ? undefined : JSON.stringify(message.params));
      return { status: 202 };
    }
    const id = message.id!;
    switch (message.method) {
      case 'initialize': {
        // What the upstreams can do is known once boot connects settle (≤ 3 s, then latched).
        const gate = this.deps.hubCapabilities === undefined ? null : this.deps.catalog.settleGate();
        if (gate !== null) return gate.then(() => this.initialize(ctx, message, presented));
        return this.initialize(ctx, message, presented);
      }
      case 'ping':
        return this.reply(id, '{}', presented === null ? null : this.deps.sessions.touch(presented).meta);
      case 'tools/list': {
        const meta = presented === null ? null : this.deps.sessions.touch(presented).meta;
        const surface = this.deps.catalog.surfaceFor({ requiresMetaTools: meta?.requires_meta_tools ?? false });
        // Only until boot connects settle (≤ 3 s, then latched): clients that never refresh get the full list.
        const gate = this.deps.catalog.settleGate();
        if (gate !== null)
          return this.busy(
            meta,
            gate.then(() => this.listReply(id, surface, meta)),
          );
        return this.listReply(id, surface, meta);
      }
      case 'tools/call':
        return this.callTool(ctx, message, presented, inBatch);
      default:
        if (this.deps.primitives !== undefined && PRIMITIVE_METHODS.has(message.method))
          return this.primitive(ctx, message, presented, this.deps.primitives, inBatch);
        return this.reply(id, null, null, JsonRpcCode.METHOD_NOT_FOUND, `Method not found: ${clipClientInput(message.method)}`);
    }
  }

  /**
   * A JSON-RPC batch, which only MCP 2025-03-26 has (2025-06-18 removed it). The revision is the
   * MCP-Protocol-Version header's, else the one the presented session negotiated, else 2025-03-26,
   * the revision MCP says to assume when nothing names one. Every message is started in array
   * order and served concurrently (JSON-RPC allows either); the answers come back in array order,
   * one per request, none for notifications and client responses, and 202 when there are none.
   */
  private async batch(ctx: RequestContext, messages: readonly ParsedMessage[], presented: string | null): Promise<Reply> {
    const header = ctx.headers[PROTOCOL_VERSION_HEADER];
    const negotiated = presented === null ? null : (this.deps.sessions.get(presented)?.protocol_version ?? null);
    const version = header ?? negotiated ?? ASSUMED_PROTOCOL_VERSION;
    if (!BATCH_PROTOCOL_VERSIONS.has(version)) {
      const source = header !== undefined ? 'the MCP-Protocol-Version header' : 'the version this session negotiated';
      return jsonRpcErrorReply(
        400,
        JsonRpcCode.INVALID_REQUEST,
        `Invalid Request: JSON-RPC batches exist only in MCP ${[...BATCH_PROTOCOL_VERSIONS].join(', ')}; this request speaks ${version} (${source}): send one JSON-RPC message per POST`,
      );
    }
    if (messages.some((m) => m.kind === 'request' && m.method === 'initialize')) {
      return jsonRpcErrorReply(400, JsonRpcCode.INVALID_REQUEST, 'Invalid Request: initialize must not be part of a JSON-RPC batch; send it alone');
    }
    const replies = await Promise.all(
      messages.map((m): Reply | Promise<Reply> =>
        m.kind === 'invalid' ? { status: m.status, body: errorResponse(m.id, m.code, m.message) } : this.dispatch(ctx, m, presented, true),
      ),
    );
    const parts: Buffer[] = [];
    for (const reply of replies) {
      if (reply.body === undefined || reply.body === null) continue;
      parts.push(Buffer.from(parts.length === 0 ? '[' : ','));
      if (reply.body instanceof BodyParts) parts.push(...reply.body.parts);
      else parts.push(Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(String(reply.body)));
    }
    if (parts.length === 0) return { status: 202 };
    parts.push(Buffer.from(']'));
    const headers: Record<string, string> =
      presented !== null && this.deps.sessions.has(presented) ? { ...JSON_HEADERS, 'Mcp-Session-Id': presented } : { ...JSON_HEADERS };
    return { status: 200, headers, body: new BodyParts(parts) };
  }

  /** Holds a session busy (never evicted by the cap) while `work` runs. */
  private async busy<T>(meta: McpSessionMeta | null, work: Promise<T>): Promise<T> {
    if (meta === null) return work;
    meta.in_flight++;
    try {
      return await work;
    } finally {
      meta.in_flight--;
    }
  }

  private listReply(id: JsonRpcId, surface: ToolSurface, meta: McpSessionMeta | null): Reply {
    const headers: Record<string, string> = meta ? { ...JSON_HEADERS, 'Mcp-Session-Id': meta.id } : { ...JSON_HEADERS };
    const tail = this.deps.catalog.toolsListResponseTail(surface, this.allowlistOf(meta));
    return { status: 200, headers, body: new BodyParts(resultResponseParts(id, tail)) };
  }

  private reply(id: JsonRpcId, resultJson: string | null, meta: McpSessionMeta | null, code?: number, message?: string): Reply {
    const headers: Record<string, string> = meta ? { ...JSON_HEADERS, 'Mcp-Session-Id': meta.id } : { ...JSON_HEADERS };
    const body = resultJson !== null ? resultResponse(id, resultJson) : errorResponse(id, code ?? JsonRpcCode.INTERNAL_ERROR, message ?? 'Internal error');
    return { status: 200, headers, body };
  }

  private initialize(ctx: RequestContext, call: JsonRpcCall, presented: string | null): Reply {
    const params = call.params;
    const clientName = stringField(params?.['clientInfo'], 'name');
    const userAgent = ctx.headers['user-agent'] ?? '';
    const tuicHeader = ctx.headers[TUIC_SESSION_HEADER];
    const init = {
      client_name: clientName,
      is_claude_code: CLAUDE_CLIENT_PATTERN.test(clientName ?? '') || CLAUDE_CLIENT_PATTERN.test(userAgent),
      requires_meta_tools: clientName?.startsWith(GROK_CLIENT_PREFIX),
      repo_path: repoPathOf(params),
      // An invalid identity is ignored, not refused: the connection still works, just unbound.
      tuic_session: tuicHeader !== undefined && UUID_PATTERN.test(tuicHeader) ? tuicHeader : null,
      url_elicitation: declaresUrlElicitation(params),
      ...declaredClientCapabilities(params),
    };

    let meta: McpSessionMeta;
    let event: 'fresh' | 'resumed' | 'reconnected';
    const known = presented === null ? undefined : this.deps.sessions.get(presented);
    const protocolVersion = negotiateProtocolVersion(params?.['protocolVersion']);
    if (known) {
      event = 'resumed';
      // A touch, not just a timestamp: the session becomes the most recently used for the cap.
      meta = this.deps.sessions.touch(known.id).meta;
      Object.assign(meta, init, { protocol_version: protocolVersion });
    } else {
      event = presented === null ? 'fresh' : 'reconnected';
      meta = this.deps.sessions.create(randomUUID(), { ...init, protocol_version: protocolVersion });
    }
    const record: Record<string, unknown> = { source: 'mcp_initialize', event, session_id: meta.id, protocol_version: protocolVersion, listener: ctx.listener };
    if (event === 'reconnected') record['presented_session'] = presented;
    if (clientName !== null) record['client_name'] = clientName;
    if (meta.tuic_session !== null) record['tuic_session'] = meta.tuic_session;
    this.deps.log.info(record, `mcp initialize (${event})`);
    this.deps.onInitialized?.(meta);

    const surface = this.deps.catalog.surfaceFor({ requiresMetaTools: meta.requires_meta_tools });
    const result = {
      protocolVersion,
      capabilities: serverCapabilities(this.deps.hubCapabilities?.()),
      serverInfo: { name: SERVER_NAME, version: this.deps.version },
      instructions: this.deps.instructions(surface, meta),
    };
    return this.reply(call.id!, JSON.stringify(result), meta);
  }

  private async callTool(ctx: RequestContext, call: JsonRpcCall, presented: string | null, inBatch: boolean): Promise<Reply> {
    const id = call.id!;
    const name = call.params?.['name'];
    if (typeof name !== 'string' || name.length === 0) {
      return this.reply(id, null, null, JsonRpcCode.INVALID_PARAMS, "Invalid params: tools/call requires a non-empty string 'name'");
    }
    const rawArgs = call.params?.['arguments'];
    if (rawArgs !== undefined && rawArgs !== null && !isPlainObject(rawArgs)) {
      return this.reply(id, null, null, JsonRpcCode.INVALID_PARAMS, "Invalid params: 'arguments' must be an object");
    }
    if (presented === null) {
      // No session, nothing can name this call in a notifications/cancelled: the connection is its only end.
      const result = await this.deps.catalog.call(name, rawArgs ?? {}, this.callerContext(ctx, null, null));
      return this.reply(id, serializeToolOutcome(result), null);
    }
    const meta = this.deps.sessions.touch(presented).meta;
    const separator = name.indexOf(HubConstants.SEPARATOR);
    return this.tracked(ctx, meta, id, separator > 0 ? name.slice(0, separator) : null, inBatch, (source, exchange) =>
      this.finishCall(ctx, call, name, rawArgs, meta, source, exchange),
    );
  }

  /**
   * A session's request, cancelled by whichever comes first: the connection ending or the client's
   * notifications/cancelled naming it. While it runs its session is busy (the cap never evicts it);
   * one an upstream serves runs as an exchange, where the upstream's messages for the client ride.
   */
  private async tracked(
    ctx: RequestContext,
    meta: McpSessionMeta,
    id: JsonRpcId,
    upstream: string | null,
    inBatch: boolean,
    work: (source: CancelSource, exchange: ClientExchange | undefined) => Promise<Reply>,
  ): Promise<Reply> {
    const source = new CancelSource();
    const connection = ctx.cancellation ?? cancellationOf(ctx.signal);
    if (connection.cancelReason !== undefined) source.cancel(connection.cancelReason);
    const unlink = connection.onCancel((reason) => source.cancel(reason));
    const key = inFlightKey(meta.id, id);
    // An id reused while still in flight: a cancel naming it can only mean the newest request.
    this.inFlight.set(key, source);
    meta.in_flight++;
    const exchange = upstream === null ? undefined : this.deps.exchanges?.open(meta, upstream, inBatch ? undefined : ctx.headers['accept'], source);
    const answer = work(source, exchange);
    try {
      return await (exchange === undefined ? answer : exchange.reply(answer));
    } finally {
      meta.in_flight--;
      unlink();
      if (this.inFlight.get(key) === source) this.inFlight.delete(key);
    }
  }

  /** A proxied or native call of a session, its URL elicitation included. */
  private async finishCall(
    ctx: RequestContext,
    call: JsonRpcCall,
    name: string,
    rawArgs: unknown,
    meta: McpSessionMeta,
    source: CancelSource,
    exchange: ClientExchange | undefined,
  ): Promise<Reply> {
    const id = call.id!;
    const caller = this.callerContext(ctx, meta, source, exchange && routeOf(exchange, call.params));
    const result = await this.deps.catalog.call(name, (rawArgs as Record<string, unknown> | null | undefined) ?? {}, caller);
    if (meta.url_elicitation && isErrorOutcome(result)) {
      const elicited = await this.urlElicitation(name);
      if (elicited !== null)
        return jsonRpcErrorReply(
          200,
          JsonRpcCode.URL_ELICITATION_REQUIRED,
          `Authorization required: ${elicited.message}`,
          id,
          { 'Mcp-Session-Id': meta.id },
          {
            elicitations: [elicited],
          },
        );
    }
    return this.reply(id, serializeToolOutcome(result), meta);
  }

  /**
   * resources/*, prompts/*, completion/complete, logging/setLevel. A request that goes to an
   * upstream runs as an exchange (its progress and the upstream's questions come back on it) and
   * is cancelled as tools/call is: the connection ending or the client's notifications/cancelled.
   */
  private async primitive(ctx: RequestContext, message: JsonRpcCall, presented: string | null, primitives: PrimitiveMethods, inBatch: boolean): Promise<Reply> {
    const id = message.id!;
    const meta = presented === null ? null : this.deps.sessions.touch(presented).meta;
    const allowlist = this.allowlistOf(meta);
    const upstream = meta === null ? null : primitives.upstreamOf(message.method, message.params);
    if (meta === null || upstream === null) {
      const outcome = await primitives.handle(message.method, message.params, {
        meta,
        allowlist,
        cancellation: ctx.cancellation ?? cancellationOf(ctx.signal),
      });
      return this.outcomeReply(id, outcome, meta);
    }
    return this.tracked(ctx, meta, id, upstream, inBatch, async (source, exchange) => {
      const route = exchange && routeOf(exchange, message.params);
      const outcome = await primitives.handle(message.method, message.params, { meta, allowlist, cancellation: source, ...(route ? { route } : {}) });
      return this.outcomeReply(id, outcome, meta);
    });
  }

  private outcomeReply(id: JsonRpcId, outcome: RpcOutcome, meta: McpSessionMeta | null): Reply {
    if (outcome.error === undefined) return this.reply(id, outcome.resultJson, meta);
    const headers: Record<string, string> = meta ? { ...JSON_HEADERS, 'Mcp-Session-Id': meta.id } : { ...JSON_HEADERS };
    const { code, message, data } = outcome.error;
    return { status: 200, headers, body: errorResponse(id, code, message, isPlainObject(data) ? data : data === undefined ? undefined : { detail: data }) };
  }

  /** For a failed call to an upstream waiting for OAuth: the elicitation that sends the person to authorize it. */
  private async urlElicitation(toolName: string): Promise<UrlElicitation | null> {
    const separator = toolName.indexOf(HubConstants.SEPARATOR);
    if (separator <= 0 || !this.deps.authorizeUpstream) return null;
    const upstream = toolName.slice(0, separator);
    const found = await this.deps.authorizeUpstream(upstream).catch(() => null);
    if (found === null) return null;
    return {
      mode: 'url',
      elicitationId: found.elicitationId,
      url: found.url,
      message: `tuicd needs your authorization for the upstream MCP server '${upstream}' at ${found.asOrigin}. Open the link, sign in, then retry.`,
    };
  }

  /** `notifications/cancelled {requestId, reason?}` from the session that sent the request; anything else is ignored, as MCP allows. */
  private cancel(sessionId: string, params: Record<string, unknown> | undefined): void {
    const requestId = params?.['requestId'];
    if (typeof requestId !== 'string' && (typeof requestId !== 'number' || !Number.isFinite(requestId))) return;
    const source = this.inFlight.get(inFlightKey(sessionId, requestId));
    if (source === undefined) return;
    const reason = params?.['reason'];
    source.cancel(
      new DOMException(typeof reason === 'string' && reason !== '' ? `cancelled by the client: ${reason}` : 'cancelled by the client', 'AbortError'),
    );
  }

  /** `cancellation`: the call's own source (connection or notifications/cancelled); null = the connection's. */
  private callerContext(ctx: RequestContext, meta: McpSessionMeta | null, cancellation: CancelSource | null, clientRoute?: ClientRoute): CallerContext {
    const tuicSession = meta === null ? null : (meta.tuic_session ?? this.deps.registeredIdentity?.(meta.id) ?? null);
    return {
      isLoopback: ctx.isLoopback,
      listener: ctx.listener,
      mcpSessionId: meta?.id ?? null,
      tuicSession,
      boundSessionId: tuicSession === null ? null : this.deps.boundSessionFor(tuicSession),
      clientName: meta?.client_name ?? null,
      // A getter: most calls never need an AbortSignal, and building one per call is not free.
      get signal() {
        return cancellation === null ? ctx.signal : cancellation.signal;
      },
      cancellation: cancellation ?? ctx.cancellation,
      upstreamAllowlist: this.allowlistOf(meta),
      ...(clientRoute ? { clientRoute } : {}),
    };
  }

  private allowlistOf(meta: McpSessionMeta | null): ReadonlySet<string> | null {
    return meta === null || !this.deps.allowlistFor ? null : this.deps.allowlistFor(meta.repo_path);
  }
}

interface UrlElicitation {
  mode: 'url';
  elicitationId: string;
  url: string;
  message: string;
}

/** Asked only for clients that take URL elicitations: a spliced result is looked into as text. */
function isErrorOutcome(outcome: ToolCallOutcome): boolean {
  return outcome instanceof RawToolResult ? /"isError"\s*:\s*true/.test(outcome.json) : outcome.isError === true;
}

/** The route a forwarded request carries: its exchange, and the client's progress token if it asked for progress. */
function routeOf(exchange: ClientExchange, params: Record<string, unknown> | undefined): ClientRoute {
  const meta = params?.['_meta'];
  const token = isPlainObject(meta) ? meta['progressToken'] : undefined;
  return typeof token === 'string' || (typeof token === 'number' && Number.isFinite(token))
    ? { route: exchange.route, progressToken: token }
    : { route: exchange.route };
}

/** initialize's capabilities: tools always; the rest when an upstream offers it (the hub routes it there). */
function serverCapabilities(hub: HubCapabilities | undefined): Record<string, unknown> {
  const capabilities: Record<string, unknown> = { tools: { listChanged: true } };
  if (hub?.resources) capabilities['resources'] = { listChanged: true, ...(hub.subscribe ? { subscribe: true } : {}) };
  if (hub?.prompts) capabilities['prompts'] = { listChanged: true };
  if (hub?.completions) capabilities['completions'] = {};
  if (hub?.logging) capabilities['logging'] = {};
  capabilities['experimental'] = { 'claude/channel': {} };
  return capabilities;
}

/** What else the client can do for an upstream: sampling, form elicitation (`elicitation: {}` means form), roots. */
function declaredClientCapabilities(params: Record<string, unknown> | undefined): { sampling: boolean; form_elicitation: boolean; roots: boolean } {
  const capabilities = params?.['capabilities'];
  if (!isPlainObject(capabilities)) return { sampling: false, form_elicitation: false, roots: false };
  const elicitation = capabilities['elicitation'];
  const formDeclared = isPlainObject(elicitation) && (isPlainObject(elicitation['form']) || !isPlainObject(elicitation['url']));
  return { sampling: isPlainObject(capabilities['sampling']), form_elicitation: formDeclared, roots: isPlainObject(capabilities['roots']) };
}

/** initialize's `capabilities.elicitation.url` is an object: the client can send its user to a URL. */
function declaresUrlElicitation(params: Record<string, unknown> | undefined): boolean {
  const capabilities = params?.['capabilities'];
  if (!isPlainObject(capabilities)) return false;
  const elicitation = (capabilities as Record<string, unknown>)['elicitation'];
  return isPlainObject(elicitation) && isPlainObject((elicitation as Record<string, unknown>)['url']);
}
