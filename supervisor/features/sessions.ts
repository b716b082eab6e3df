/**
 * Terminal sessions: the pty host process, the session service over it, the session and process
 * routes, the `session` tool and the session gauges. The pty host's entry is named by path: the
 * supervisor never imports worker code.
 */
import type { Paths } from '../../shared/paths.js';
import { type AgentSettings, effective } from '../config/agentSettings.js';
import type { ConfigStore } from '../config/configStore.js';
import type { EventBus } from '../events/eventBus.js';
import { ProcessStarter } from '../hosts/processStarter.js';
import { PTY_HOST_NODE_ARGS, ptyHostEnv } from '../hosts/ptyHostEnv.js';
import { PtyHost } from '../hosts/ptyHost.js';
import type { Logger } from '../log.js';
import { createSessionTool } from '../mcp/tools/session.js';
import type { Metrics } from '../metrics.js';
import { processRoutes } from '../routes/process.js';
import { sessionControlRoutes } from '../routes/sessionControl.js';
import { sessionIntrospectionRoutes } from '../routes/sessionIntrospection.js';
import { sessionRoutes } from '../routes/sessions.js';
import { sessionTerminalRoutes } from '../routes/sessionTerminal.js';
import { SessionService } from '../sessions/sessionService.js';
import type { Feature } from './feature.js';

/** From dist/supervisor/features/ to the compiled pty host. */
const PTY_HOST_ENTRY = new URL('../../workers/pty/main.js', import.meta.url).pathname;

export interface SessionsDeps {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  config: ConfigStore;
  bus: EventBus;
  log: Logger;
  metrics: Metrics;
  /** agents.json: per-agent overrides of the intent and suggestion markers. */
  agentSettings: AgentSettings;
}

export interface SessionsFeature extends Feature {
  readonly ptyHost: PtyHost;
  readonly sessions: SessionService;
}

export function sessionsFeature(deps: SessionsDeps): SessionsFeature {
  const { config, log, metrics } = deps;
  const ptyHost = new PtyHost(
    new ProcessStarter({
      entry: PTY_HOST_ENTRY,
      env: ptyHostEnv(deps.env),
      nodeArgs: PTY_HOST_NODE_ARGS,
      onOutput: (line, stream) => log.info({ source: 'pty-host', stream }, line),
    }),
    log,
  );
  const sessions = new SessionService({
    host: ptyHost,
    bus: deps.bus,
    configDir: deps.paths.configDir,
    instance: deps.paths.instance,
    env: deps.env,
    maxSessions: () => config.get().services.server.max_sessions,
    defaultShell: () => config.get().shell ?? null,
    standbyAfterMs: () => config.get().standby_timeout_minutes * 60_000,
    markers: (agentType) => {
      const o = deps.agentSettings.forAgent(agentType);
      const c = config.get();
      return { intents: effective(c.intent_tab_title, o.intent_tab_title), suggests: effective(c.suggest_followups, o.suggest_followups) };
    },
  });
  const c = sessions.counters;
  metrics.gauge('total_spawned', 'Sessions spawned', () => c.total_spawned);
  metrics.gauge('failed_spawns', 'Session spawns that failed', () => c.failed_spawns);
  metrics.gauge('bytes_emitted', 'PTY output bytes received from the pty host', () => c.bytes_emitted);
  metrics.gauge('pauses_triggered', 'Times a session was paused', () => c.pauses_triggered);
  metrics.gauge('foreground_checks', "Checks of a session's foreground process group made on its output", () => c.foreground_checks);
  metrics.gauge('agent_classifications', "Classifications of a session's foreground program (agent detection)", () => c.agent_classifications);
  metrics.gauge('active_sessions', 'Sessions whose process runs', () => sessions.liveCount);
  return {
    name: 'sessions',
    ptyHost,
    sessions,
    routes: [
      ...sessionRoutes(sessions),
      ...sessionControlRoutes(sessions),
      ...sessionIntrospectionRoutes(sessions),
      ...sessionTerminalRoutes(sessions),
      ...processRoutes(sessions, () => ptyHost.pid),
    ],
    tools: [createSessionTool({ sessions })],
    dispose: async () => {
      sessions.dispose();
      await ptyHost.stop();
    },
  };
}
