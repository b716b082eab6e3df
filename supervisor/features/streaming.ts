/**
 * Streaming: the bus as GET /events (SSE) and the terminal WebSocket (/sessions/:id/stream), whose
 * viewers count as presence (a session someone watches gets no push notification) and hold their
 * session's producer to their pace (viewerFlow.ts).
 */
import type { EventBus } from '../events/eventBus.js';
import { eventRoutes } from '../routes/events.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { PtyHost } from '../hosts/ptyHost.js';
import { streamRoute } from '../streaming/streamRoute.js';
import { ViewerFlow } from '../streaming/viewerFlow.js';
import { ViewerPresence } from '../streaming/viewerPresence.js';
import { WatcherFrames } from '../streaming/watcherFrames.js';
import type { Feature } from './feature.js';

export interface StreamingFeature extends Feature {
  /** Sessions a viewer shows right now. */
  readonly presence: ViewerPresence;
  /** Viewers by the client they said they belong to: where output watcher matches go. */
  readonly watcherFrames: WatcherFrames;
}

export function streamingFeature(deps: { bus: EventBus; sessions: SessionService; ptyHost: PtyHost }): StreamingFeature {
  const presence = new ViewerPresence();
  const watcherFrames = new WatcherFrames();
  // A session's output is acked to the pty host only as far as its live raw viewers took it.
  const flow = new ViewerFlow();
  deps.ptyHost.limitAcks(flow);
  flow.onRelease((sessionId) => deps.ptyHost.releaseAcks(sessionId));
  return {
    name: 'streaming',
    presence,
    watcherFrames,
    routes: eventRoutes(deps.bus),
    wsRoutes: [streamRoute(deps.sessions, presence, watcherFrames, flow)],
  };
}
