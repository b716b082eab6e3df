/**
 * Streaming: the bus as GET /events (SSE) and the terminal WebSocket (/sessions/:id/stream), whose
 * viewers count as presence: a session someone watches gets no push notification.
 */
import type { EventBus } from '../events/eventBus.js';
import { eventRoutes } from '../routes/events.js';
import type { SessionService } from '../sessions/sessionService.js';
import { streamRoute } from '../streaming/streamRoute.js';
import { ViewerPresence } from '../streaming/viewerPresence.js';
import { WatcherFrames } from '../streaming/watcherFrames.js';
import type { Feature } from './feature.js';

export interface StreamingFeature extends Feature {
  /** Sessions a viewer shows right now. */
  readonly presence: ViewerPresence;
  /** Viewers by the client they said they belong to: where output watcher matches go. */
  readonly watcherFrames: WatcherFrames;
}

export function streamingFeature(deps: { bus: EventBus; sessions: SessionService }): StreamingFeature {
  const presence = new ViewerPresence();
  const watcherFrames = new WatcherFrames();
  return { name: 'streaming', presence, watcherFrames, routes: eventRoutes(deps.bus), wsRoutes: [streamRoute(deps.sessions, presence, watcherFrames)] };
}
