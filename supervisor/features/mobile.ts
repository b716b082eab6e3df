/**
 * The phone: the /mobile page and its login, confirm answers from it, and Web Push subscriptions
 * with their notifications (none for a session a viewer shows right now).
 */
import type { Paths } from '../../shared/paths.js';
import type { ConfigStore } from '../config/configStore.js';
import type { EventBus } from '../events/eventBus.js';
import type { TcpAuth } from '../http/auth.js';
import type { Logger } from '../log.js';
import type { ConfirmBroker } from '../mcp/confirmBroker.js';
import { PushService } from '../push/pushService.js';
import { mobileRoutes } from '../routes/mobile.js';
import { pushRoutes } from '../routes/push.js';
import type { ViewerPresence } from '../streaming/viewerPresence.js';
import type { Feature } from './feature.js';

export interface MobileDeps {
  paths: Paths;
  config: ConfigStore;
  bus: EventBus;
  log: Logger;
  presence: ViewerPresence;
  auth: TcpAuth;
  confirms: ConfirmBroker;
}

export function mobileFeature(deps: MobileDeps): Feature {
  const push = new PushService({ configDir: deps.paths.configDir, config: deps.config, bus: deps.bus, presence: deps.presence, log: deps.log });
  return {
    name: 'mobile',
    routes: [...mobileRoutes({ auth: deps.auth, confirms: deps.confirms }), ...pushRoutes(push)],
    dispose: () => push.dispose(),
  };
}
