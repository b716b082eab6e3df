/**
 * Monitoring, logs and diagnostics: /health, /api/version, /metrics and the rest of the monitoring
 * routes, the log ring's routes (tuicd's own warnings and errors land there too), diagnostics, the
 * `debug` tool and the event-loop delay gauge.
 */
import { EventLoopLag } from '../../shared/eventLoopLag.js';
import type { Paths } from '../../shared/paths.js';
import { VERSION } from '../../shared/version.js';
import type { ConfigStore } from '../config/configStore.js';
import type { PtyHost } from '../hosts/ptyHost.js';
import type { HttpEngine } from '../http/engine/types.js';
import type { LogRing } from '../logs/logRing.js';
import { createDebugTool } from '../mcp/tools/debug.js';
import type { Metrics } from '../metrics.js';
import { diagnosticsRoutes } from '../routes/diagnostics.js';
import { logRoutes } from '../routes/logs.js';
import { monitoringRoutes } from '../routes/monitoring.js';
import type { CredentialStore } from '../secrets/credentialStore.js';
import type { SessionService } from '../sessions/sessionService.js';
import { GIT_HASH } from '../version.js';
import type { Feature } from './feature.js';
import type { Listeners } from './listeners.js';

/** How often the pty host's event-loop delay is read for /metrics. */
const HOST_LOOP_POLL_MS = 2_000;

export interface MonitoringDeps {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  engine: HttpEngine;
  instanceId: string;
  startedAtMs: number;
  config: ConfigStore;
  metrics: Metrics;
  logRing: LogRing;
  sessions: SessionService;
  ptyHost: PtyHost;
  /** Where TCP listens, or why it does not. */
  listeners: Pick<Listeners, 'tcpAddress' | 'tcpStartError'>;
  /** The credential store, once the keyring probe has answered (null before). */
  credentials: () => CredentialStore | null;
}

export function monitoringFeature(deps: MonitoringDeps): Feature {
  const { paths, config, metrics, sessions, listeners, credentials } = deps;
  const loopLag = new EventLoopLag();
  metrics.gauge('event_loop_delay_p99_ms', "The supervisor's event-loop delay, 99th percentile over the last 5-10 s (ms)", () => loopLag.p99Ms());
  // The pty host's, asked every few seconds while it runs (never starting it): a gauge reads synchronously.
  let hostLoopDelayMs = 0;
  const hostLoopPoll = setInterval(() => {
    const client = deps.ptyHost.runningClient();
    if (client === null) return;
    client.request('loopDelay', {}).then(
      (r) => (hostLoopDelayMs = r.p99_ms),
      () => undefined,
    );
  }, HOST_LOOP_POLL_MS);
  hostLoopPoll.unref();
  metrics.gauge(
    'pty_host_event_loop_delay_p99_ms',
    `The pty host's event-loop delay, 99th percentile over the last 5-10 s (ms), read every ${HOST_LOOP_POLL_MS / 1000} s`,
    () => hostLoopDelayMs,
  );
  return {
    name: 'monitoring',
    routes: [
      ...monitoringRoutes(
        {
          version: VERSION,
          gitHash: GIT_HASH,
          instanceId: deps.instanceId,
          startedAtMs: deps.startedAtMs,
          socketPath: paths.socketPath,
          tcp: () => listeners.tcpAddress(),
          tcpError: () => listeners.tcpStartError,
          sessionCount: () => sessions.liveCount,
          maxSessions: () => config.get().services.server.max_sessions,
          closedSessions: () => sessions.closedStats(),
          sessionBytes: () => sessions.sessionBytes(),
          credentialStore: () => credentials()?.status() ?? { backend: 'probing' },
          httpEngine: { name: deps.engine.name, detail: deps.engine.detail },
        },
        metrics,
      ),
      ...diagnosticsRoutes({ sessions, host: deps.ptyHost, configDir: paths.configDir, env: deps.env }),
      ...logRoutes(deps.logRing),
    ],
    tools: [createDebugTool({ sessions, logDir: paths.logDir })],
    dispose: () => {
      clearInterval(hostLoopPoll);
      loopLag.dispose();
    },
  };
}
