/**
 * Terminal sessions: the pty host process, the session service over it, the session and process
 * routes, the `session` tool and the session gauges. The pty host's entry is named by path: the
 * supervisor never imports worker code.
 */
import { IdleGc } from '../../shared/idleGc.js';
import type { Paths } from '../../shared/paths.js';
import { type AgentSettings, effective } from '../config/agentSettings.js';
import type { ConfigStore } from '../config/configStore.js';
import type { EventBus } from '../events/eventBus.js';
import { DetachedHostStarter } from '../hosts/detachedHostStarter.js';
import { takeEndedSessions } from '../hosts/ptyHostState.js';
import { ptyHostEnv, ptyHostNodeArgs } from '../hosts/ptyHostEnv.js';
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
  /** On dispose, leave the pty host running with its sessions (a stop with --keep-sessions, a restart). */
  keepSessionsOnStop(): void;
}

export function sessionsFeature(deps: SessionsDeps): SessionsFeature {
  const { config, log, metrics } = deps;
  // Detached: the host and its sessions outlive this process when it dies or stops keeping them,
  // and the next supervisor of this config dir and instance adopts them.
  const starter = new DetachedHostStarter({
    entry: PTY_HOST_ENTRY,
    env: ptyHostEnv(deps.env),
    nodeArgs: ptyHostNodeArgs(deps.env),
    configDir: deps.paths.configDir,
    logDir: deps.paths.logDir,
    instance: deps.paths.instance,
    orphanTimeoutMs: () => config.get().services.orphan_timeout_min * 60_000,
    log,
  });
  const ptyHost = new PtyHost(starter, log);
  let keepSessions = false;
  // The supervisor's own idle collection: after its start and after bursts of sessions created or
  // forgotten (shared/idleGc.ts). TUIC_IDLE_GC=0 turns it off.
  const idleGc = deps.env['TUIC_IDLE_GC'] === '0' ? undefined : new IdleGc();
  idleGc?.touched();
  const sessions = new SessionService({
    ...(idleGc ? { idleGc } : {}),
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
  metrics.gauge('output_payload_bytes', 'PTY output bytes whose payload crossed from the pty host (sessions a viewer watches)', () => c.output_payload_bytes);
  metrics.gauge('pauses_triggered', 'Times a session was paused', () => c.pauses_triggered);
  metrics.gauge('foreground_checks', "Checks of a session's foreground process group made on its output", () => c.foreground_checks);
  metrics.gauge('agent_classifications', "Classifications of a session's foreground program (agent detection)", () => c.agent_classifications);
  metrics.gauge('active_sessions', 'Sessions whose process runs', () => sessions.liveCount);
  metrics.gauge('records_synced', "Session records serialized to keep the pty host's copy current", () => c.records_synced);
  metrics.gauge('idle_collections', 'Memory-reducing collections the supervisor ran once idle', () => idleGc?.collections ?? 0);
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
    keepSessionsOnStop: () => {
      keepSessions = true;
    },
    // A host left running by the previous supervisor is adopted once this one holds the socket (a
    // second tuicd that fails to bind never touches the first one's host), before the start line.
    start: async () => {
      if (starter.hasLiveHost()) {
        try {
          await ptyHost.client();
        } catch (err) {
          log.error({ err: String(err) }, 'could not adopt the running pty host');
        }
      }
      // Sessions a host ended while no supervisor was there to say so (orphan timeout, the last one
      // exiting, or replaced
      // just now for a protocol change): closed here, with that reason.
      const ended = takeEndedSessions(starter.statePath);
      if (ended === null) return;
      log.warn({ reason: ended.reason, sessions: ended.sessions.length }, `pty host ended its sessions: ${ended.message}`);
      for (const s of ended.sessions) deps.bus.publish('session-closed', { session_id: s.session_id, reason: s.reason ?? ended.reason });
    },
    dispose: async () => {
      if (keepSessions) sessions.syncRecords();
      sessions.dispose();
      idleGc?.dispose();
      await (keepSessions ? ptyHost.detach() : ptyHost.stop());
    },
  };
}
