/**
 * Upstream notifications to the clients they are for: progress to the request whose token it
 * carries, log messages to each client whose logging/setLevel they meet (tagged with the upstream
 * as `logger`), resources/updated to the clients subscribed to that URI, and list_changed for
 * resources and prompts to every open stream, as tools/list_changed goes. A client in a request
 * with that upstream gets them on that request's stream, in order with its answer; otherwise on
 * its GET stream.
 */
import { DisposableStore, type Disposable } from '../../shared/disposable.js';
import { LOG_LEVELS, type McpLogLevel } from '../../shared/protocol/mcpHub.js';
import type { ClientExchanges } from './clientExchanges.js';
import { notificationJson } from './jsonRpc.js';
import type { McpStreams } from './mcpStreams.js';
import type { PrimitiveMethods } from './primitiveMethods.js';
import type { McpSessionStore } from './protocolSessions.js';
import type { UpstreamPrimitiveSource } from './upstreamPrimitives.js';

export interface UpstreamNotificationDeps {
  source: UpstreamPrimitiveSource;
  sessions: McpSessionStore;
  streams: McpStreams;
  exchanges: ClientExchanges;
  primitives: PrimitiveMethods;
}

export function deliverUpstreamNotifications(deps: UpstreamNotificationDeps): Disposable {
  const store = new DisposableStore();
  const toSession = (sessionId: string, upstream: string, json: string): void => {
    const exchange = deps.exchanges.latestWith(sessionId, upstream);
    if (exchange === undefined || !exchange.send(json)) deps.streams.push(sessionId, json);
  };
  store.add(
    deps.source.onNotification((upstream, method, route, paramsJson) => {
      switch (method) {
        case 'notifications/progress':
          if (route !== undefined) deps.exchanges.sendToRoute(route, `{"jsonrpc":"2.0","method":"notifications/progress","params":${paramsJson}}`);
          return;
        case 'notifications/message': {
          const params = parseObject(paramsJson);
          const level = LOG_LEVELS.indexOf(params['level'] as McpLogLevel);
          if (level < 0) return;
          const logger = typeof params['logger'] === 'string' && params['logger'] !== '' ? `${upstream}/${params['logger']}` : upstream;
          const json = notificationJson(method, { ...params, logger });
          for (const meta of deps.sessions.values())
            if (meta.log_level !== null && level >= LOG_LEVELS.indexOf(meta.log_level)) toSession(meta.id, upstream, json);
          return;
        }
        case 'notifications/resources/updated': {
          const uri = parseObject(paramsJson)['uri'];
          if (typeof uri !== 'string') return;
          const json = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":${paramsJson}}`;
          for (const sessionId of deps.primitives.subscribersOf(uri)) toSession(sessionId, upstream, json);
          return;
        }
        default:
          return;
      }
    }),
  );
  store.add(
    deps.source.onListsChanged((changed) => {
      for (const kind of changed) deps.streams.broadcast(notificationJson(`notifications/${kind}/list_changed`));
    }),
  );
  store.add(
    deps.sessions.onRemoved((meta) => {
      deps.exchanges.dropSession(meta.id);
      deps.primitives.dropSession(meta.id);
    }),
  );
  return store;
}

function parseObject(json: string): Record<string, unknown> {
  try {
    const value = JSON.parse(json) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
