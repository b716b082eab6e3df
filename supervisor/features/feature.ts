/**
 * A feature of the supervisor, as its composition root (supervisor.ts) sees it. Each module in this
 * folder builds one feature from a small typed deps object and returns this, plus whatever later
 * features build on (its services); the event handlers it needs it registers itself, and its
 * dispose removes them. The root serves every feature's routes, hands every feature's tools to the
 * MCP endpoint in composition order (the order tools/list shows), runs `prepare` and `start` in
 * that order and `dispose` in the reverse one.
 */
import type { ConfigChangeEvent } from '../config/configStore.js';
import type { Route, WsRoute } from '../http/types.js';
import type { NativeTool } from '../mcp/tools/nativeTool.js';

export interface Feature {
  /** Names the feature in logs and errors. */
  readonly name: string;
  readonly routes?: readonly Route[];
  readonly wsRoutes?: readonly WsRoute[];
  /** Native MCP tools. */
  readonly tools?: readonly NativeTool[];
  /** Before the socket listener serves: what the first request must find ready (files read, watchers set). */
  prepare?(): Promise<void>;
  /** Once both listeners are up and the credential store is known: background work (upstreams connecting). */
  start?(): Promise<void>;
  /** After a config save, once `config-changed` is published. */
  configChanged?(event: ConfigChangeEvent): void;
  /** Stops what the feature runs: timers, children, subscriptions. */
  dispose?(): void | Promise<void>;
}
