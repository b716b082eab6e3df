/**
 * ACP: connections to Agent Client Protocol agents (the `ego_executable` setting), their sessions,
 * turns and questions over HTTP, one resumable WebSocket stream per connection, and `acp-notice` on
 * the bus (which also drives Web Push for a question nobody watches). Every agent process ends
 * with its connection or with tuicd.
 */
import type { ConfigStore } from '../config/configStore.js';
import type { EventBus } from '../events/eventBus.js';
import type { Logger } from '../log.js';
import { AcpRegistry } from '../acp/acpRegistry.js';
import { acpRoutes, acpStreamRoute } from '../routes/acp.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { ViewerPresence } from '../streaming/viewerPresence.js';
import type { Feature } from './feature.js';

export interface AcpDeps {
  env: NodeJS.ProcessEnv;
  config: ConfigStore;
  bus: EventBus;
  log: Logger;
  sessions: SessionService;
  presence: ViewerPresence;
}

export interface AcpFeature extends Feature {
  readonly registry: AcpRegistry;
}

export function acpFeature(deps: AcpDeps): AcpFeature {
  const registry = new AcpRegistry({
    bus: deps.bus,
    log: deps.log,
    sessions: deps.sessions,
    env: deps.env,
    executable: () => deps.config.get().ego_executable,
  });
  return {
    name: 'acp',
    registry,
    routes: acpRoutes(registry),
    wsRoutes: [acpStreamRoute(registry, deps.presence)],
    dispose: () => registry.dispose(),
  };
}
