/**
 * The composition root: loads config, starts the log, builds what every feature shares (the event
 * bus, metrics, agents.json, the progress journal, the MCP channels and the listeners) and then
 * each feature (features/*.ts) from what it needs, serves their routes on both listeners and owns
 * their lifecycle. A new feature is a module in features/ and one line here.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Paths } from '../shared/paths.js';
import { VERSION } from '../shared/version.js';
import { AGENTS_FILE, AgentSettings } from './config/agentSettings.js';
import { ConfigStore } from './config/configStore.js';
import { effectiveTcpPort } from './config/env.js';
import { writeSchema } from './config/jsonSchema.js';
import { EventBus } from './events/eventBus.js';
import { acpFeature } from './features/acp.js';
import { agentsFeature } from './features/agents.js';
import { aiTerminalFeature } from './features/aiTerminal.js';
import { configFeature } from './features/config.js';
import type { Feature } from './features/feature.js';
import { guideFeature } from './features/guide.js';
import { hubFeature } from './features/hub.js';
import { Listeners } from './features/listeners.js';
import { mcpFeature } from './features/mcp.js';
import { mobileFeature } from './features/mobile.js';
import { monitoringFeature } from './features/monitoring.js';
import { pluginsFeature } from './features/plugins.js';
import { progressFeature } from './features/progress.js';
import { reposFeature } from './features/repos.js';
import { type SessionsFeature, sessionsFeature } from './features/sessions.js';
import { streamingFeature } from './features/streaming.js';
import { uiFeature } from './features/ui.js';
import type { McpHubHost } from './hosts/mcpHubHost.js';
import type { HttpEngine } from './http/engine/types.js';
import type { Route, WsRoute } from './http/types.js';
import { createLogger, type Logger } from './log.js';
import { appLogSink } from './logs/appLogSink.js';
import { LogRing } from './logs/logRing.js';
import { McpChannels } from './mcp/channels.js';
import { Metrics } from './metrics.js';
import { PROGRESS_JOURNAL_FILE, ProgressJournal } from './progress/progressJournal.js';
import { openApiRoute } from './routes/openapi.js';
import { CredentialStore, DEFAULT_SERVICE } from './secrets/credentialStore.js';

export interface SupervisorOptions {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  logLevel?: string | undefined;
  /** The HTTP engine both listeners run on (selectEngine picks it at start). */
  engine: HttpEngine;
}

export class Supervisor {
  readonly instanceId = randomUUID();
  readonly startedAtMs = Date.now();
  readonly bus = new EventBus();
  readonly metrics = new Metrics();
  /** Set once the keyring probe has answered (it runs while the socket binds). */
  credentials: CredentialStore | null = null;
  /** The MCP proxy hub's host (tests reach its worker). */
  readonly hub: McpHubHost;
  private readonly listeners: Listeners;
  private readonly terminals: SessionsFeature;
  /** In composition order: prepared and started in it, disposed in reverse. */
  private readonly features: readonly Feature[];

  private constructor(
    opts: SupervisorOptions,
    readonly log: Logger,
    readonly config: ConfigStore,
    /** Behind GET/POST/DELETE /logs; tuicd's own warnings and errors land here too. */
    logRing: LogRing,
  ) {
    const { paths, env, engine } = opts;
    const { bus, metrics } = this;
    this.listeners = new Listeners({ paths, env, engine, config, log, metrics });
    const listeners = this.listeners;
    metrics.gauge('uptime_seconds', 'Seconds since start', () => Math.floor((Date.now() - this.startedAtMs) / 1000));
    metrics.gauge('sse_subscribers', 'Live /events subscribers', () => bus.stats.subscribers);
    metrics.gauge('events_published_total', 'Events published on the bus', () => bus.stats.published);
    // Shared by several features: agents.json (sessions, agents, progress), the progress journal
    // (progress, repo tool), the MCP protocol sessions and streams (the endpoint, and agents pushing mail).
    const agentSettings = new AgentSettings(join(paths.configDir, AGENTS_FILE), log);
    const progressJournal = new ProgressJournal({ path: join(paths.configDir, PROGRESS_JOURNAL_FILE) });
    // The cap is read on every insert, so a PUT /config lowering it applies to the next session.
    const channels = new McpChannels({ maxSessions: () => config.get().services.server.max_mcp_sessions });
    const credentials = () => this.credentials;

    // Features in composition order, which is also the order tools/list shows their tools in.
    const features: Feature[] = [];
    const add = <F extends Feature>(feature: F): F => {
      features.push(feature);
      return feature;
    };
    const terminalsFeature = add(sessionsFeature({ paths, env, config, bus, log, metrics, agentSettings }));
    const { sessions, ptyHost } = terminalsFeature;
    this.terminals = terminalsFeature;
    const agents = add(agentsFeature({ env, config, bus, log, metrics, sessions, agentSettings, channels }));
    const { hub, projects, oauth } = add(hubFeature({ paths, env, bus, log, credentials, ownPort: () => listeners.ownPort() }));
    const { repos, pool } = add(reposFeature({ paths, env, bus, log, sessions, progressJournal, projects, channels }));
    add(progressFeature({ config, bus, log, sessions, agentSettings, journal: progressJournal, channels }));
    const { confirms } = add(uiFeature({ env, bus, sessions, channels }));
    add(guideFeature());
    add(configFeature({ config, configDir: paths.configDir }));
    add(
      monitoringFeature({
        paths,
        env,
        engine,
        instanceId: this.instanceId,
        startedAtMs: this.startedAtMs,
        config,
        metrics,
        logRing,
        sessions,
        ptyHost,
        listeners,
        credentials,
      }),
    );
    add(aiTerminalFeature({ sessions, confirms, pool }));
    const { presence, watcherFrames } = add(streamingFeature({ bus, sessions, ptyHost }));
    add(acpFeature({ env, config, bus, log, sessions, presence }));
    add(pluginsFeature({ configDir: paths.configDir, bus, ptyHost, watcherFrames }));
    add(mobileFeature({ paths, config, bus, log, presence, auth: listeners.auth, confirms }));
    // Last: the endpoint serves every tool composed before it.
    add(
      mcpFeature({
        config,
        log,
        metrics,
        channels,
        tools: features.flatMap((f) => f.tools ?? []),
        sessions,
        hub,
        projects,
        repos,
        agents,
        agentSettings,
        authorizeUpstream: (upstream) => oauth.authorizationFor(upstream),
      }),
    );
    this.features = features;
    this.hub = hub;

    const routes = features.flatMap((f) => f.routes ?? []);
    const wsRoutes = features.flatMap((f) => f.wsRoutes ?? []);
    routes.push(
      openApiRoute(
        VERSION,
        () => routes,
        () => wsRoutes,
      ),
    );
    listeners.serve(routes, wsRoutes);
  }

  static async start(opts: SupervisorOptions): Promise<Supervisor> {
    mkdirSync(opts.paths.configDir, { recursive: true, mode: 0o700 });
    const config = new ConfigStore({ path: opts.paths.configFile });
    // A corrupt config refuses the start; the error names the file and the parse error.
    await config.load();
    effectiveTcpPort(config.get(), opts.env); // a bad TUIC_PORT fails the start, not the first rebind
    const logRing = new LogRing();
    const log = createLogger({ logDir: opts.paths.logDir, level: opts.logLevel ?? opts.env['TUIC_LOG_LEVEL'] ?? 'info', warnings: appLogSink(logRing) });
    const sup = new Supervisor(opts, log, config, logRing);
    const { listeners } = sup;
    try {
      // The keyring probe runs in a child process (a hung D-Bus must not hang us): overlap it with binding.
      const service = opts.paths.instance === null ? DEFAULT_SERVICE : `${DEFAULT_SERVICE}-${opts.paths.instance}`;
      const credentials = CredentialStore.open({ configDir: opts.paths.configDir, service, env: opts.env });
      credentials.catch(() => undefined); // observed below; avoids an unhandled rejection while binding
      await writeSchema(opts.paths.configFile);
      // What the first request must find ready (a project's allowlist, the registered repositories).
      for (const feature of sup.features) await feature.prepare?.();
      await listeners.bindSocket();
      sup.credentials = await credentials;
      // The session token and the other config secrets live in the store: load them before TCP serves.
      await config.attachVault(sup.credentials);
      // A taken port must not take the always-on socket down with it: TCP stays off, said at start and in
      // the log, and the next server-settings save tries again.
      if (config.get().services.server.enabled) {
        try {
          await listeners.startTcp('start');
        } catch (err) {
          listeners.tcpStartError = (err as Error).message;
          log.error({ listener: 'tcp', err }, 'TCP listener not started; socket listener serving');
        }
      }
      for (const feature of sup.features) await feature.start?.();
      const store = sup.credentials.status();
      if (store.backend === 'file') log.warn({ credential_store: store }, 'no OS keyring reachable: secrets go to an owner-only vault file');
      else log.info({ credential_store: store }, 'secrets go to the OS keyring');
    } catch (err) {
      await sup.stop('start failed');
      throw err;
    }
    config.onChange((event) => {
      log.info({ changed: event.changed.paths }, 'config saved');
      sup.bus.publish('config-changed', { paths: event.changed.paths });
      for (const feature of sup.features) feature.configChanged?.(event);
      if (event.changed.serverSettings) void listeners.restartTcp('server settings changed');
      // A new session token logs every device out: the streams the old one let in end too.
      if (event.previous.services.auth.session_token !== event.config.services.auth.session_token) {
        const ended = listeners.auth.revokeTokenStreams();
        if (ended > 0) log.info({ ended }, 'session token replaced: the streams it let in were ended');
      }
    });
    return sup;
  }

  /** Why the TCP listener that config asks for is not serving (its bind failed); null when it is, or is off. */
  get tcpStartError(): string | null {
    return this.listeners.tcpStartError;
  }

  /** The routes both listeners serve (GET /openapi.json documents exactly these). */
  routeTable(): { routes: readonly Route[]; wsRoutes: readonly WsRoute[] } {
    return this.listeners.routeTable();
  }

  /** The one line printed at start: where clients find us. */
  describe(): string {
    return this.listeners.describe();
  }

  tcpAddress(): { host: string; port: number; tls: boolean } | null {
    return this.listeners.tcpAddress();
  }

  /** Rebinds only the TCP listener; serialized so two quick saves cannot interleave binds. */
  restartTcp(reason: string): Promise<void> {
    return this.listeners.restartTcp(reason);
  }

  /** Closes the listeners, then stops the features in reverse composition order (the MCP endpoint's streams first, the pty host last). */
  async stop(reason: string, opts: { keepSessions?: boolean } = {}): Promise<void> {
    if (opts.keepSessions === true) this.terminals.keepSessionsOnStop();
    await this.listeners.stop(reason);
    for (const feature of [...this.features].reverse()) await feature.dispose?.();
    this.bus.dispose();
    this.config.dispose();
    await new Promise<void>((resolve) => this.log.flush(() => resolve()));
  }
}
