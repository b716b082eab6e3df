/**
 * What /mcp needs from the upstream hub beyond tools (supervisor/hosts/mcpHubHost.ts provides it):
 * the merged resources, resource templates and prompts, the upstream requests those name, the
 * upstreams' notifications for clients, and a way for an upstream to ask a client something.
 */
import type { Cancellation } from '../../shared/cancellation.js';
import type { Disposable } from '../../shared/disposable.js';
import type { ForwardedMethod, McpLogLevel } from '../../shared/protocol/mcpHub.js';

/** A JSON-RPC error object. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** An answer: the raw `result` JSON, or an error. */
export type RpcOutcome = { resultJson: string; error?: undefined } | { error: RpcError; resultJson?: undefined };

/** What any ready upstream can do (initialize's capabilities follow it). */
export interface HubCapabilities {
  resources: boolean;
  subscribe: boolean;
  prompts: boolean;
  completions: boolean;
  logging: boolean;
}

/** The merged lists, namespaced by the hub: resource URIs `tuic://<upstream>/…`, prompt names `<upstream>__<name>`. */
export interface HubLists {
  resources: readonly Record<string, unknown>[];
  resourceTemplates: readonly Record<string, unknown>[];
  prompts: readonly Record<string, unknown>[];
  capabilities: HubCapabilities;
}

export type ListKind = 'resources' | 'prompts';

/** The client request a forwarded request serves: where the upstream's progress and questions go. */
export interface ClientRoute {
  route: string;
  progressToken?: string | number;
}

export interface ForwardOptions {
  route?: ClientRoute;
  cancellation?: Cancellation;
}

/** An upstream asks the client a question (sampling/createMessage, elicitation/create, roots/list). */
export type ClientRequestHandler = (upstream: string, method: string, route: string | undefined, paramsJson: string) => Promise<RpcOutcome>;

export interface UpstreamPrimitiveSource {
  lists(): HubLists;
  onListsChanged(listener: (changed: readonly ListKind[]) => void): Disposable;
  /** One FORWARDED_METHODS request to `upstream`; never rejects (refusals are errors). */
  request(upstream: string, method: ForwardedMethod, paramsJson: string, options?: ForwardOptions): Promise<RpcOutcome>;
  /** The lowest level any client asked for, for every upstream that logs. */
  setLogLevel(level: McpLogLevel): Promise<void>;
  /** A client notification for every ready upstream. */
  notifyUpstreams(method: string, paramsJson?: string): Promise<void>;
  /** An upstream notification for clients (message, progress with its route, resources/updated). */
  onNotification(listener: (upstream: string, method: string, route: string | undefined, paramsJson: string) => void): Disposable;
  setClientRequestHandler(handler: ClientRequestHandler): void;
}

export const EMPTY_LISTS: HubLists = {
  resources: [],
  resourceTemplates: [],
  prompts: [],
  capabilities: { resources: false, subscribe: false, prompts: false, completions: false, logging: false },
};
