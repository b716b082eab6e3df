/**
 * The MCP methods /mcp serves from its upstreams besides tools: resources (list, templates, read,
 * subscribe, unsubscribe), prompts (list, get), completion/complete and logging/setLevel. Lists
 * come from the hub's merged copy (no upstream is asked per list) in pages; the others go to the
 * upstream a namespaced name or URI names. A project allowlist narrows all of it as it narrows
 * tools. Subscriptions are counted per URI: the upstream hears the first subscribe and the last
 * unsubscribe, and a client that goes away unsubscribes.
 */
import { HubConstants, LOG_LEVELS, type ForwardedMethod, type McpLogLevel } from '../../shared/protocol/mcpHub.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';
import { namespacedUri, splitNamespacedUri } from '../../shared/upstreamUris.js';
import type { McpSessionMeta, McpSessionStore } from './protocolSessions.js';
import type { ClientRoute, ForwardOptions, RpcOutcome, UpstreamPrimitiveSource } from './upstreamPrimitives.js';
import type { Cancellation } from '../../shared/cancellation.js';

/** Entries per page of resources/list, resources/templates/list and prompts/list. */
export const LIST_PAGE_SIZE = 100;
/** MCP's "Resource not found". */
export const RESOURCE_NOT_FOUND = -32002;

const LIST_METHODS = { 'resources/list': 'resources', 'resources/templates/list': 'resourceTemplates', 'prompts/list': 'prompts' } as const;
type ListMethod = keyof typeof LIST_METHODS;

export const PRIMITIVE_METHODS: ReadonlySet<string> = new Set([
  ...Object.keys(LIST_METHODS),
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
]);

export interface PrimitiveCall {
  meta: McpSessionMeta | null;
  /** The upstreams the caller's project may use; null = all. */
  allowlist: ReadonlySet<string> | null;
  route?: ClientRoute;
  cancellation?: Cancellation;
}

/** A forwarded request made ready: the upstream and the params it gets, or the refusal. */
type Target = { upstream: string; params: Record<string, unknown> } | { error: RpcOutcome };

export class PrimitiveMethods {
  /** Namespaced URI → the sessions subscribed to it. */
  private readonly subscribers = new Map<string, Set<string>>();

  constructor(
    private readonly source: UpstreamPrimitiveSource,
    private readonly sessions: McpSessionStore,
  ) {}

  /** The upstream a request goes to, for its exchange; null when it is answered here or refused. */
  upstreamOf(method: string, params: Record<string, unknown> | undefined): string | null {
    const target = this.target(method, params ?? {});
    return target !== null && 'upstream' in target ? target.upstream : null;
  }

  async handle(method: string, params: Record<string, unknown> | undefined, call: PrimitiveCall): Promise<RpcOutcome> {
    const p = params ?? {};
    if (method in LIST_METHODS) return this.list(method as ListMethod, p, call.allowlist);
    if (method === 'logging/setLevel') return this.setLevel(p, call.meta);
    const target = this.target(method, p);
    if (target === null) return invalidParams(`${method}: unknown method`);
    if ('error' in target) return target.error;
    if (call.allowlist !== null && !call.allowlist.has(target.upstream))
      return { error: { code: -32602, message: `Upstream '${target.upstream}' is not enabled for this project`, data: { code: 'forbidden' } } };
    if (method === 'resources/subscribe' || method === 'resources/unsubscribe') return this.subscription(method, target, p, call);
    const options: ForwardOptions = {};
    if (call.route !== undefined) options.route = call.route;
    if (call.cancellation !== undefined) options.cancellation = call.cancellation;
    const outcome = await this.source.request(target.upstream, method as ForwardedMethod, JSON.stringify(target.params), options);
    if (method === 'resources/read' && outcome.resultJson !== undefined) return { resultJson: namespaceContents(target.upstream, outcome.resultJson) };
    return outcome;
  }

  /** The sessions subscribed to a namespaced URI. */
  subscribersOf(uri: string): ReadonlySet<string> {
    return this.subscribers.get(uri) ?? EMPTY;
  }

  /** A session went away: it holds no subscription any more (the upstream hears the last one go). */
  dropSession(sessionId: string): void {
    for (const [uri, set] of [...this.subscribers]) {
      if (!set.delete(sessionId) || set.size > 0) continue;
      this.subscribers.delete(uri);
      const split = splitNamespacedUri(uri);
      if (split !== null) void this.source.request(split.upstream, 'resources/unsubscribe', JSON.stringify({ uri: split.uri }));
    }
    void this.applyLogLevel();
  }

  private list(method: ListMethod, params: Record<string, unknown>, allowlist: ReadonlySet<string> | null): RpcOutcome {
    const key = LIST_METHODS[method];
    let entries = this.source.lists()[key];
    if (allowlist !== null) entries = entries.filter((e) => allowlist.has(ownerOf(key, e) ?? ''));
    const cursor = params['cursor'];
    let offset = 0;
    if (cursor !== undefined) {
      const decoded = typeof cursor === 'string' ? decodeCursor(cursor, key) : null;
      if (decoded === null) return invalidParams(`${method}: invalid cursor`);
      offset = decoded;
    }
    const page = entries.slice(offset, offset + LIST_PAGE_SIZE);
    const result: Record<string, unknown> = { [key]: page };
    if (offset + LIST_PAGE_SIZE < entries.length) result['nextCursor'] = encodeCursor(key, offset + LIST_PAGE_SIZE);
    return { resultJson: JSON.stringify(result) };
  }

  private target(method: string, params: Record<string, unknown>): Target | null {
    switch (method) {
      case 'resources/read':
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        const uri = params['uri'];
        if (typeof uri !== 'string' || uri === '') return { error: invalidParams(`${method} requires a non-empty string 'uri'`) };
        const split = splitNamespacedUri(uri);
        if (split === null) return { error: resourceNotFound(uri) };
        return { upstream: split.upstream, params: { ...withoutProgressToken(params), uri: split.uri } };
      }
      case 'prompts/get': {
        const name = params['name'];
        if (typeof name !== 'string' || name === '') return { error: invalidParams("prompts/get requires a non-empty string 'name'") };
        const split = splitPromptName(name);
        if (split === null) return { error: invalidParams(`Unknown prompt '${clipClientInput(name)}' (prompts are named '{upstream}__{prompt}')`) };
        return { upstream: split.upstream, params: { ...withoutProgressToken(params), name: split.name } };
      }
      case 'completion/complete': {
        const ref = params['ref'];
        if (typeof ref !== 'object' || ref === null) return { error: invalidParams("completion/complete requires an object 'ref'") };
        const r = ref as Record<string, unknown>;
        if (r['type'] === 'ref/prompt' && typeof r['name'] === 'string') {
          const split = splitPromptName(r['name']);
          if (split === null) return { error: invalidParams(`Unknown prompt '${clipClientInput(r['name'])}'`) };
          return { upstream: split.upstream, params: { ...withoutProgressToken(params), ref: { ...r, name: split.name } } };
        }
        if (r['type'] === 'ref/resource' && typeof r['uri'] === 'string') {
          const split = splitNamespacedUri(r['uri']);
          if (split === null) return { error: resourceNotFound(r['uri']) };
          return { upstream: split.upstream, params: { ...withoutProgressToken(params), ref: { ...r, uri: split.uri } } };
        }
        return { error: invalidParams("completion/complete: 'ref' must be {type:'ref/prompt', name} or {type:'ref/resource', uri}") };
      }
      default:
        return null;
    }
  }

  private async subscription(
    method: 'resources/subscribe' | 'resources/unsubscribe',
    target: { upstream: string; params: Record<string, unknown> },
    params: Record<string, unknown>,
    call: PrimitiveCall,
  ): Promise<RpcOutcome> {
    const uri = params['uri'] as string;
    // A session-less caller has no stream to be told on: the request is passed on, nothing is recorded.
    const sessionId = call.meta?.id ?? null;
    let set = this.subscribers.get(uri);
    if (method === 'resources/subscribe') {
      const first = set === undefined || set.size === 0;
      if (first || sessionId === null) {
        const outcome = await this.source.request(target.upstream, method, JSON.stringify(target.params));
        if (outcome.error !== undefined) return outcome;
      }
      if (sessionId !== null) {
        if (set === undefined) this.subscribers.set(uri, (set = new Set()));
        set.add(sessionId);
      }
      return { resultJson: '{}' };
    }
    if (sessionId !== null && set !== undefined) {
      set.delete(sessionId);
      if (set.size > 0) return { resultJson: '{}' };
      this.subscribers.delete(uri);
    }
    return this.source.request(target.upstream, method, JSON.stringify(target.params));
  }

  private async setLevel(params: Record<string, unknown>, meta: McpSessionMeta | null): Promise<RpcOutcome> {
    const level = params['level'];
    if (typeof level !== 'string' || !(LOG_LEVELS as readonly string[]).includes(level))
      return invalidParams(`logging/setLevel: 'level' must be one of ${LOG_LEVELS.join(', ')}`);
    if (meta !== null) meta.log_level = level as McpLogLevel;
    await this.applyLogLevel(meta === null ? (level as McpLogLevel) : undefined);
    return { resultJson: '{}' };
  }

  /** Upstreams log at the lowest level any live client asked for (`extra`: a session-less caller's). */
  private async applyLogLevel(extra?: McpLogLevel): Promise<void> {
    let lowest = extra === undefined ? LOG_LEVELS.length : LOG_LEVELS.indexOf(extra);
    for (const meta of this.sessions.values()) if (meta.log_level !== null) lowest = Math.min(lowest, LOG_LEVELS.indexOf(meta.log_level));
    if (lowest < LOG_LEVELS.length) await this.source.setLogLevel(LOG_LEVELS[lowest]!);
  }
}

const EMPTY: ReadonlySet<string> = new Set();

function invalidParams(message: string): RpcOutcome {
  return { error: { code: -32602, message: `Invalid params: ${message}`, data: { code: 'invalid_input' } } };
}

function resourceNotFound(uri: string): RpcOutcome {
  return {
    error: { code: RESOURCE_NOT_FOUND, message: `Resource not found: ${clipClientInput(uri)}`, data: { code: 'not_found', uri: clipClientInput(uri) } },
  };
}

/** A client's progress token travels beside the request (the hub swaps in its own), never inside it. */
function withoutProgressToken(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params['_meta'];
  if (typeof meta !== 'object' || meta === null || !('progressToken' in meta)) return params;
  const { progressToken: _token, ...rest } = meta as Record<string, unknown>;
  const copy = { ...params };
  if (Object.keys(rest).length === 0) delete copy['_meta'];
  else copy['_meta'] = rest;
  return copy;
}

function splitPromptName(name: string): { upstream: string; name: string } | null {
  const at = name.indexOf(HubConstants.SEPARATOR);
  if (at <= 0 || at + HubConstants.SEPARATOR.length >= name.length) return null;
  return { upstream: name.slice(0, at), name: name.slice(at + HubConstants.SEPARATOR.length) };
}

/** Which upstream a listed entry belongs to. */
function ownerOf(key: 'resources' | 'resourceTemplates' | 'prompts', entry: Record<string, unknown>): string | null {
  if (key === 'prompts') return typeof entry['name'] === 'string' ? (splitPromptName(entry['name'])?.upstream ?? null) : null;
  const uri = key === 'resources' ? entry['uri'] : entry['uriTemplate'];
  return typeof uri === 'string' ? (splitNamespacedUri(uri)?.upstream ?? null) : null;
}

/** A read's `contents[].uri` as the client knows the resource: namespaced, like the URI it read. */
function namespaceContents(upstream: string, resultJson: string): string {
  const result = JSON.parse(resultJson) as { contents?: unknown };
  if (!Array.isArray(result.contents)) return resultJson;
  for (const item of result.contents)
    if (typeof item === 'object' && item !== null && typeof (item as { uri?: unknown }).uri === 'string')
      (item as { uri: string }).uri = namespacedUri(upstream, (item as { uri: string }).uri);
  return JSON.stringify(result);
}

function encodeCursor(key: string, offset: number): string {
  return Buffer.from(`${key}:${offset}`).toString('base64url');
}

function decodeCursor(cursor: string, key: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(`${key}:`)) return null;
  const offset = Number(text.slice(key.length + 1));
  return Number.isSafeInteger(offset) && offset >= 0 ? offset : null;
}
