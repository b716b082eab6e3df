/** Assembles the supervisor: config, logs, event bus, HTTP routes and both listeners; owns their lifecycle. */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { ConfigStore } from './config/configStore.js';
import { effectiveTcpPort } from './config/env.js';
import { writeSchema } from './config/jsonSchema.js';
import type { ConfigSnapshot } from './config/schema.js';
import { EventBus } from './events/eventBus.js';
import { TcpAuth } from './http/auth.js';
import type { AuthSettings } from './http/auth.js';
import { bindTcp, bindUnix, closeTcp, closeUnix } from './http/listeners.js';
import type { TcpBinding, UnixBinding } from './http/listeners.js';
import { HttpServer } from './http/server.js';
import { RequestGuard, type GuardSettings } from './http/requestGuard.js';
import { loadTlsCredentials } from './http/tlsCredentials.js';
import { followTlsFiles } from './http/tlsRenewal.js';
import type { ListenerApp } from './http/server.js';
import type { Route } from './http/types.js';
import type { HttpEngine } from './http/engine/types.js';
import { McpHubHost } from './hosts/mcpHubHost.js';
import { PtyHost } from './hosts/ptyHost.js';
import { ProcessStarter } from './hosts/processStarter.js';
import { createLogger } from './log.js';
import { appLogSink } from './logs/appLogSink.js';
import { LogRing } from './logs/logRing.js';
import { diagnosticsRoutes } from './routes/diagnostics.js';
import { logRoutes } from './routes/logs.js';
import { ConfirmBroker } from './mcp/confirmBroker.js';
import { confirmTimeoutFromEnv } from './mcp/deadlines.js';
import { McpChannels } from './mcp/channels.js';
import { McpService } from './mcp/mcpService.js';
import { TaskRegistry } from './agents/tasks.js';
import { createNativeTools } from './mcp/tools/index.js';
import { PROGRESS_JOURNAL_FILE, ProgressJournal } from './progress/progressJournal.js';
import { IntentRecorder } from './progress/intentRecorder.js';
import { PeerRegistry } from './agents/peerRegistry.js';
import { MailDelivery } from './agents/mailDelivery.js';
import { AgentSpawner, promptWatchdogFromEnv } from './agents/agentSpawner.js';
import { LifecycleMail } from './agents/lifecycleMail.js';
import { AgentMessaging } from './agents/messaging.js';
import { AGENTS_FILE, AgentSettings, effective } from './config/agentSettings.js';
import { mcpRoutes } from './routes/mcp.js';
import { mcpConfirmRoutes } from './routes/mcpConfirm.js';
import { mcpUpstreamsRoutes } from './routes/mcpUpstreams.js';
import { projectUpstreamsRoutes } from './routes/projectUpstreams.js';
import { settleTimeoutFromEnv } from './upstreams/settleTimeout.js';
import { ProjectUpstreams } from './upstreams/projectUpstreams.js';
import { UpstreamStore } from './upstreams/upstreamStore.js';
import { progressRoutes } from './routes/progress.js';
import { agentRoutes } from './routes/agents.js';
import { AgentBinaries } from './agents/agentBinaries.js';
import { EventLoopLag } from './eventLoopLag.js';
import { processRoutes } from './routes/process.js';
import { sessionRoutes } from './routes/sessions.js';
import { sessionQueueRoutes } from './routes/sessionQueue.js';
import { SessionService } from './sessions/sessionService.js';
import { streamRoute } from './streaming/streamRoute.js';
import { CredentialStore, DEFAULT_SERVICE } from './secrets/credentialStore.js';
import type { Logger } from './log.js';
import { Metrics } from './metrics.js';
import type { Paths } from '../shared/paths.js';
import { configRoutes } from './routes/config.js';
import { eventRoutes } from './routes/events.js';
import { monitoringRoutes } from './routes/monitoring.js';
import { mobileRoutes } from './routes/mobile.js';
import { pushRoutes } from './routes/push.js';
import { PushService } from './push/pushService.js';
import { ViewerPresence } from './streaming/viewerPresence.js';
import { VERSION } from '../shared/version.js';
import { GIT_HASH } from './version.js';
import { WorkPool } from './pool/workPool.js';
import { RepoRegistry } from './repos/repoRegistry.js';
import { DomainConfigFile } from './repos/domainConfigFile.js';
import { GhCli } from './repos/ghCli.js';
import { RepoWatcher } from './repos/repoWatcher.js';
import { WorktreeManager } from './repos/worktrees.js';
import { REPO_SETTINGS_FILE, repoKey } from './upstreams/projectUpstreams.js';
import { repoRoutes } from './routes/repo.js';
import { repoHistoryRoutes } from './routes/repoHistory.js';
import { repoOrphanRoutes } from './routes/repoOrphans.js';
import { githubRoutes } from './routes/github.js';
import { worktreeRoutes } from './routes/worktrees.js';
import { repoConfigRoutes } from './routes/repoConfig.js';
import { fsRoutes } from './routes/fs.js';
import { openApiRoute } from './routes/openapi.js';

const REPO_DEFAULTS_FILE = 'repo-defaults.json';

export interface SupervisorOptions {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  logLevel?: string | undefined;
  /** The HTTP engine both listeners run on (selectEngine picks it at start). */
  engine: HttpEngine;
}

/** The pty host's entry, by path: the supervisor never imports worker code. */
const PTY_HOST_ENTRY = new URL('../workers/pty/main.js', import.meta.url).pathname;

/** Dev/test knob: the TCP bind host (the spec binds 0.0.0.0 / [::]); tests keep to 127.0.0.1. */
const BIND_HOST_ENV = 'TUIC_BIND_HOST';

export class Supervisor {
  readonly instanceId = randomUUID();
  readonly startedAtMs = Date.now();
  readonly bus = new EventBus();
  readonly metrics = new Metrics();
  private socket: { app: ListenerApp; binding: UnixBinding } | null = null;
  private tcp: { app: ListenerApp; binding: TcpBinding; stopFollowingTls: () => void } | null = null;
  private tcpTransition: Promise<void> = Promise.resolve();
  /** Why the TCP listener that config asks for is not serving (its bind failed); null when it is, or is off. */
  tcpStartError: string | null = null;
  private readonly http: HttpServer;
  readonly ptyHost: PtyHost;
  readonly sessions: SessionService;
  readonly tasks: TaskRegistry;
  readonly confirmBroker: ConfirmBroker;
  private readonly auth: TcpAuth;
  /** Sessions the /mobile page shows right now: no push about those. */
  private readonly presence = new ViewerPresence();
  private readonly push: PushService;
  readonly progressJournal: ProgressJournal;
  readonly peers: PeerRegistry;
  readonly agentBinaries: AgentBinaries;
  private readonly loopLag = new EventLoopLag();
  readonly mail: MailDelivery;
  readonly mcp: McpService;
  readonly upstreams: UpstreamStore;
  readonly projects: ProjectUpstreams;
  readonly hub: McpHubHost;
  /** Worker threads for content search, big diffs and diff-stats batches (keeps this loop free). */
  readonly pool = new WorkPool();
  readonly repos: RepoRegistry;
  readonly repoSettings: DomainConfigFile;
  readonly repoDefaults: DomainConfigFile;
  readonly worktrees: WorktreeManager;
  readonly gh: GhCli;
  readonly repoWatcher: RepoWatcher;

  private readonly responseCells = new Map<string, { value: number }>();
  /** Set once the keyring probe has answered (it runs while the listeners bind). */
  credentials: CredentialStore | null = null;

  private constructor(
    private readonly opts: SupervisorOptions,
    readonly log: Logger,
    readonly config: ConfigStore,
    /** GET/POST/DELETE /logs (REFERENCE §1.3); tuicd's own warnings and errors land here too. */
    readonly logRing: LogRing,
  ) {
    this.metrics.counter('http_requests_total', 'HTTP responses sent, by listener and status');
    this.metrics.gauge('uptime_seconds', 'Seconds since start', () => Math.floor((Date.now() - this.startedAtMs) / 1000));
    this.metrics.gauge('sse_subscribers', 'Live /events subscribers', () => this.bus.stats.subscribers);
    this.metrics.gauge('events_published_total', 'Events published on the bus', () => this.bus.stats.published);
    this.ptyHost = new PtyHost(
      new ProcessStarter({
        entry: PTY_HOST_ENTRY,
        onOutput: (line, stream) => this.log.info({ source: 'pty-host', stream }, line),
      }),
      log,
    );
    const agentSettings = new AgentSettings(join(opts.paths.configDir, AGENTS_FILE), log);
    this.sessions = new SessionService({
      host: this.ptyHost,
      bus: this.bus,
      configDir: opts.paths.configDir,
      instance: opts.paths.instance,
      env: opts.env,
      maxSessions: () => this.config.get().services.server.max_sessions,
      defaultShell: () => this.config.get().shell ?? null,
      markers: (agentType) => {
        const o = agentSettings.forAgent(agentType);
        const c = this.config.get();
        return { intents: effective(c.intent_tab_title, o.intent_tab_title), suggests: effective(c.suggest_followups, o.suggest_followups) };
      },
    });
    const c = this.sessions.counters;
    this.metrics.gauge('total_spawned', 'Sessions spawned', () => c.total_spawned);
    this.metrics.gauge('failed_spawns', 'Session spawns that failed', () => c.failed_spawns);
    this.metrics.gauge('bytes_emitted', 'PTY output bytes received from the pty host', () => c.bytes_emitted);
    this.metrics.gauge('pauses_triggered', 'Times a session was paused', () => c.pauses_triggered);
    this.metrics.gauge('active_sessions', 'Sessions whose process runs', () => this.sessions.liveCount);
    this.tasks = new TaskRegistry({ sessions: this.sessions });
    // TUIC_CONFIRM_TIMEOUT_MS lets tests watch an unanswered confirm resolve; a bad value fails the start.
    this.confirmBroker = new ConfirmBroker({ bus: this.bus, timeoutMs: confirmTimeoutFromEnv(opts.env) });
    this.progressJournal = new ProgressJournal({ path: join(opts.paths.configDir, PROGRESS_JOURNAL_FILE) });
    const intents = new IntentRecorder(
      this.progressJournal,
      this.bus,
      (record) => effective(this.config.get().progress_tracking, agentSettings.forAgent(record.agent_type).progress_tracking),
      log,
    );
    this.sessions.onIntent((record, text) => intents.record(record, text));
    this.sessions.onLifecycle((event, record) => {
      if (event === 'closed') intents.forget(record.session_id);
    });
    this.peers = new PeerRegistry(this.bus);
    this.agentBinaries = new AgentBinaries(() => opts.env['PATH'] ?? '');
    // The protocol sessions and their streams: built before the MCP service and agents, which both use them.
    const channels = new McpChannels({ maxSessions: () => this.config.get().services.server.max_mcp_sessions });
    this.mail = new MailDelivery({ registry: this.peers, sessions: this.sessions, bus: this.bus, channel: channels, log });
    const lifecycle = new LifecycleMail(this.peers, this.tasks, this.mail, this.bus, this.sessions);
    const spawner = new AgentSpawner({
      sessions: this.sessions,
      registry: this.peers,
      tasks: this.tasks,
      lifecycle,
      path: () => opts.env['PATH'] ?? '',
      log,
      watchdogMs: promptWatchdogFromEnv(opts.env),
      runConfig: (name) => agentSettings.runConfig(name),
    });
    const messaging = new AgentMessaging({ peers: this.peers, sessions: this.sessions, mail: this.mail, lifecycle, protocolSessions: channels, log });
    this.repos = new RepoRegistry(opts.paths.configDir, this.bus, () =>
      this.sessions
        .list()
        .filter((r) => r.exit === null)
        .map((r) => r.cwd),
    );
    this.repoSettings = new DomainConfigFile(opts.paths.configDir, REPO_SETTINGS_FILE);
    this.repoDefaults = new DomainConfigFile(opts.paths.configDir, REPO_DEFAULTS_FILE);
    this.gh = new GhCli(opts.env);
    this.repoWatcher = new RepoWatcher(this.bus, log);
    this.worktrees = new WorktreeManager({
      bus: this.bus,
      sessionCwds: () =>
        this.sessions
          .list()
          .filter((r) => r.exit === null)
          .map((r) => r.cwd),
      // repo-defaults.json underneath, the repository's own repo-settings.json entry on top.
      settings: async (repo) => {
        const [defaults, settings] = await Promise.all([this.repoDefaults.read().catch(() => ({})), this.repoSettings.read().catch(() => ({}))]);
        const entry = (settings as Record<string, unknown>)[repoKey(repo)];
        const merged = { ...defaults, ...(typeof entry === 'object' && entry !== null ? entry : {}) } as Record<string, unknown>;
        return {
          ...(typeof merged['setup_script'] === 'string' && merged['setup_script'] !== '' ? { setup_script: merged['setup_script'] } : {}),
          ...(typeof merged['warm_artifacts'] === 'boolean' ? { warm_artifacts: merged['warm_artifacts'] } : {}),
        };
      },
    });
    const nativeTools = createNativeTools({
      sessions: this.sessions,
      tasks: this.tasks,
      bus: this.bus,
      config: this.config,
      confirmBroker: this.confirmBroker,
      progressJournal: this.progressJournal,
      sessionCwd: (sessionId) => this.sessions.resolve(sessionId)?.cwd,
      mcpRepoPath: (mcpSessionId) => channels.repoPath(mcpSessionId),
      logDir: opts.paths.logDir,
      messaging,
      spawner,
      binaries: this.agentBinaries,
      maxSessions: () => this.config.get().services.server.max_sessions,
      repos: this.repos,
      worktrees: this.worktrees,
      gh: this.gh,
      isClaudeCode: (id) => channels.isClaudeCode(id),
    });
    this.upstreams = new UpstreamStore({ configDir: opts.paths.configDir, credentials: () => this.credentials });
    this.projects = new ProjectUpstreams({ configDir: opts.paths.configDir, log: this.log });
    this.hub = new McpHubHost({
      version: VERSION,
      bus: this.bus,
      log: this.log,
      credential: async (account) => (this.credentials ? this.credentials.get(account) : null),
      ownPort: () => this.ownPort(),
      settleTimeoutMs: settleTimeoutFromEnv(opts.env),
    });
    this.mcp = new McpService({
      upstreams: this.hub,
      projects: this.projects,
      version: VERSION,
      config: () => this.config.get(),
      nativeTools,
      liveSessions: this.sessions,
      log: this.log,
      channels,
      peerCount: () => this.peers.size,
      repos: () => this.repos.roots(),
      registeredIdentity: (id) => this.peers.identityOf(id),
      onInitialized: (meta) => messaging.protocolSessionStarted(meta.id, meta.tuic_session),
    });
    this.mcp.sessions.onRemoved((meta) => messaging.protocolSessionEnded(meta.id));
    // The MCP session reaper also retires day-old tasks and identities nobody can address.
    this.mcp.sessions.onSweep((nowMs) => {
      this.tasks.reapExpired(nowMs);
      messaging.retireUnreachable();
    });
    this.metrics.gauge('mcp_sessions', 'MCP protocol sessions held', () => this.mcp.sessions.size);
    this.metrics.gauge('mcp_streams', 'Open GET /mcp streams', () => this.mcp.streams.openCount);
    this.metrics.gauge('event_loop_delay_p99_ms', "The supervisor's event-loop delay, 99th percentile over the last 5-10 s (ms)", () => this.loopLag.p99Ms());
    this.metrics.gauge('peers', 'Registered agent identities', () => this.peers.size);
    this.auth = new TcpAuth(() => this.authSettings());
    this.push = new PushService({ configDir: opts.paths.configDir, config: this.config, bus: this.bus, presence: this.presence, log: this.log });
    const routes = this.routes();
    const wsRoutes = [streamRoute(this.sessions, this.presence)];
    routes.push(
      openApiRoute(
        VERSION,
        () => routes,
        () => wsRoutes,
      ),
    );
    this.http = new HttpServer({
      engine: opts.engine,
      guard: new RequestGuard({ settings: () => this.guardSettings(), boundHost: () => this.tcp?.binding.host ?? null }),
      routes,
      wsRoutes,
      limits: () => {
        const s = this.config.get().services.server;
        return { maxBodyBytes: s.max_body_bytes, requestTimeoutMs: s.request_timeout_ms };
      },
      auth: this.auth,
      onResponse: (status, listener) => this.responseCell(listener, status).value++,
      onHandlerError: (err, ctx) => this.log.error({ err, path: ctx.path, method: ctx.method }, 'handler failed'),
    });
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
    try {
      // The keyring probe runs in a child process (a hung D-Bus must not hang us): overlap it with binding.
      const service = opts.paths.instance === null ? DEFAULT_SERVICE : `${DEFAULT_SERVICE}-${opts.paths.instance}`;
      const credentials = CredentialStore.open({ configDir: opts.paths.configDir, service, env: opts.env });
      credentials.catch(() => undefined); // observed below; avoids an unhandled rejection while binding
      await writeSchema(opts.paths.configFile);
      // Before the socket serves: a project's first tools/list must already be narrowed.
      await sup.projects.load();
      await sup.startRepos();
      await sup.bindSocket();
      sup.credentials = await credentials;
      // The session token and the other config secrets live in the store: load them before TCP serves.
      await config.attachVault(sup.credentials);
      // A taken port must not take the always-on socket down with it: TCP stays off, said at start and in
      // the log, and the next server-settings save tries again.
      if (config.get().services.server.enabled) {
        try {
          await sup.startTcp('start');
        } catch (err) {
          sup.tcpStartError = (err as Error).message;
          log.error({ listener: 'tcp', err }, 'TCP listener not started; socket listener serving');
        }
      }
      // Saved upstreams connect in the background: nothing here waits for a handshake.
      // A corrupt mcp-upstreams.json is named in the log and left alone; the server still comes up.
      const saved = await sup.upstreams.load().catch((err: unknown) => {
        log.error({ err, file: sup.upstreams.path }, 'upstream config not loaded: no upstreams connected');
        return { servers: [] };
      });
      void sup.hub.boot(saved.servers).catch((err: unknown) => log.error({ err }, 'upstream boot failed'));
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
      // Tool surfaces hang on several fields (collapse_tools, disabled_native_tools, progress_tracking): the catalog compares.
      sup.mcp.refresh();
      if (event.changed.serverSettings) void sup.restartTcp('server settings changed');
    });
    return sup;
  }

  /**
   * Reads repositories.json (an unreadable one registers nothing and says so) and keeps the
   * discovered repositories and their watchers in step with sessions coming and going.
   */
  private async startRepos(): Promise<void> {
    await this.repos
      .load()
      .catch((err: unknown) => this.log.error({ err, file: this.repos.file.path }, 'repositories.json unreadable: no repository registered until it is fixed'));
    const refresh = () => {
      void this.repos
        .discover()
        .then(() => this.repoWatcher.sync(this.repos.roots()))
        .catch((err: unknown) => this.log.warn({ err }, 'repository discovery failed'));
    };
    this.bus.on('session-created', refresh);
    this.bus.on('session-closed', refresh);
    this.bus.on('repositories-changed', refresh);
    refresh();
  }

  /** The one line printed at start: where clients find us. */
  describe(): string {
    let tcp = '';
    if (this.tcp) {
      const { binding, app } = this.tcp;
      tcp = ` and tcp http://${binding.host}:${binding.port}`;
      if (app.tls)
        tcp += ` and https://${binding.host}:${binding.port} (one port${app.engine === this.opts.engine ? '' : `; tcp on http engine ${app.engine.name}: ${app.engine.detail}`})`;
    }
    return `tuicd ${VERSION} serving on unix socket ${this.opts.paths.socketPath}${tcp} (http engine ${this.opts.engine.name}: ${this.opts.engine.detail})`;
  }

  /** Our own port for the circular-proxy checks: the bound TCP port, else the one configured. */
  private ownPort(): number {
    return this.tcp?.binding.port ?? effectiveTcpPort(this.config.get(), this.opts.env);
  }

  tcpAddress(): { host: string; port: number; tls: boolean } | null {
    return this.tcp ? { host: this.tcp.binding.host, port: this.tcp.binding.port, tls: this.tcp.app.tls } : null;
  }

  async stop(reason: string): Promise<void> {
    await this.tcpTransition;
    this.stopTcp(reason);
    if (this.socket) {
      closeUnix(this.socket.binding);
      this.log.info({ listener: 'socket', path: this.socket.binding.path, reason }, 'socket listener closed (always-on IPC listener)');
      this.socket = null;
    }
    this.mcp.dispose();
    this.repoWatcher.dispose();
    await this.pool.destroy();
    this.mail.dispose();
    this.loopLag.dispose();
    await this.hub.stop();
    this.confirmBroker.dispose();
    this.push.dispose();
    this.tasks.dispose();
    this.sessions.dispose();
    await this.ptyHost.stop();
    this.bus.dispose();
    this.config.dispose();
    await new Promise<void>((resolve) => this.log.flush(() => resolve()));
  }

  private routes(): Route[] {
    return [
      ...monitoringRoutes(
        {
          version: VERSION,
          gitHash: GIT_HASH,
          instanceId: this.instanceId,
          startedAtMs: this.startedAtMs,
          socketPath: this.opts.paths.socketPath,
          tcp: () => this.tcpAddress(),
          tcpError: () => this.tcpStartError,
          sessionCount: () => this.sessions.liveCount,
          maxSessions: () => this.config.get().services.server.max_sessions,
          credentialStore: () => this.credentials?.status() ?? { backend: 'probing' },
          httpEngine: { name: this.opts.engine.name, detail: this.opts.engine.detail },
        },
        this.metrics,
      ),
      ...configRoutes(this.config),
      ...eventRoutes(this.bus),
      ...sessionRoutes(this.sessions),
      ...sessionQueueRoutes(this.sessions, this.mail),
      ...processRoutes(this.sessions, () => this.ptyHost.pid),
      ...mcpRoutes(this.mcp, { ptySessionCount: () => this.sessions.liveCount, maxSessions: () => this.config.get().services.server.max_sessions }),
      ...mcpConfirmRoutes(this.confirmBroker),
      ...mcpUpstreamsRoutes({
        store: this.upstreams,
        control: this.hub,
        credentials: () => this.credentials,
        ownPort: () => this.ownPort(),
      }),
      ...projectUpstreamsRoutes(this.projects),
      ...progressRoutes(this.progressJournal),
      ...agentRoutes(this.agentBinaries, this.opts.env),
      ...diagnosticsRoutes({ sessions: this.sessions, host: this.ptyHost, configDir: this.opts.paths.configDir, env: this.opts.env }),
      ...logRoutes(this.logRing),
      ...mobileRoutes({ auth: this.auth, confirms: this.confirmBroker }),
      ...pushRoutes(this.push),
      ...repoConfigRoutes({
        registry: this.repos,
        repoSettings: this.repoSettings,
        repoDefaults: this.repoDefaults,
        onRepoSettingsSaved: () => this.projects.load(),
      }),
      ...repoRoutes(this.pool),
      ...repoHistoryRoutes(),
      ...repoOrphanRoutes(),
      ...githubRoutes(this.gh),
      ...worktreeRoutes(this.worktrees, () => this.repos.roots()),
      ...fsRoutes(this.pool, () => [...this.repos.roots(), ...this.worktrees.knownWorktreePaths()]),
    ];
  }

  /** One cached counter cell per listener and status, so counting a response is a map hit. */
  private responseCell(listener: string, status: number): { value: number } {
    const key = listener + status;
    let cell = this.responseCells.get(key);
    if (!cell) this.responseCells.set(key, (cell = this.metrics.cell('http_requests_total', { listener, status: String(status) })));
    return cell;
  }

  private guardCache: { server: unknown; settings: GuardSettings } | undefined;
  /** The same object until config changes, so the guard rebuilds its lists only after a save. */
  private guardSettings(): GuardSettings {
    const server = this.config.get().services.server;
    if (this.guardCache?.server !== server)
      this.guardCache = { server, settings: { allowedHosts: server.allowed_hosts, allowedOrigins: server.allowed_origins } };
    return this.guardCache.settings;
  }

  private authSettings(): AuthSettings {
    const auth = this.config.get().services.auth;
    return {
      username: auth.username,
      passwordHash: auth.password_hash,
      sessionToken: auth.session_token,
      sessionTokenDurationSecs: auth.session_token_duration_secs,
      lanAuthBypass: auth.lan_auth_bypass,
      rateLimitMax: auth.auth_rate_limit_max,
      rateLimitWindowSecs: auth.auth_rate_limit_window_secs,
    };
  }

  private async bindSocket(): Promise<void> {
    const app = this.http.createApp('socket');
    const binding = await bindUnix(app.app, this.opts.paths.socketPath, (path) =>
      this.log.warn({ listener: 'socket', path }, 'removed a stale socket file left by a dead server'),
    );
    this.socket = { app, binding };
    this.log.info({ listener: 'socket', path: binding.path }, 'socket listener bound (always-on IPC listener, no auth)');
  }

  private tcpSettings(config: ConfigSnapshot): { host: string; port: number } {
    const host = this.opts.env[BIND_HOST_ENV] || (config.services.server.ipv6_enabled ? '::' : '0.0.0.0');
    return { host, port: effectiveTcpPort(config, this.opts.env) };
  }

  private async startTcp(reason: string): Promise<void> {
    const config = this.config.get();
    const { host, port } = this.tcpSettings(config);
    // Checked before binding: a bad certificate or key fails this start, naming the file.
    const tls = loadTlsCredentials(config.services.tls, this.opts.paths.configDir) ?? undefined;
    const app = this.http.createApp('tcp', tls);
    const binding = await bindTcp(app.app, host, port);
    const stopFollowingTls = tls
      ? followTlsFiles(config.services.tls, this.opts.paths.configDir, tls, (renewed) => app.app.setTlsCredentials?.(renewed), {
          renewed: (files) => this.log.info({ listener: 'tcp', ...files }, 'TLS certificate files changed: new connections use them'),
          refused: (message) =>
            this.log.warn({ listener: 'tcp', reason: message }, 'TLS certificate files changed but do not load; still serving the previous ones'),
        })
      : () => {};
    this.tcp = { app, binding, stopFollowingTls };
    this.tcpStartError = null;
    this.log.info(
      { listener: 'tcp', host: binding.host, port: binding.port, tls: app.tls, http_engine: app.engine.name, reason },
      `TCP listener started (remote access, Basic Auth${app.tls ? ', TLS and plain HTTP on one port' : ''}); socket listener untouched`,
    );
  }

  private stopTcp(reason: string): void {
    if (!this.tcp) return;
    this.tcp.app.retired = true;
    this.tcp.stopFollowingTls();
    closeTcp(this.tcp.binding);
    this.log.info({ listener: 'tcp', port: this.tcp.binding.port, reason }, 'TCP listener stopped; socket listener untouched');
    this.tcp = null;
  }

  /** Rebinds only the TCP listener; serialized so two quick saves cannot interleave binds. */
  restartTcp(reason: string): Promise<void> {
    this.tcpTransition = this.tcpTransition.then(async () => {
      this.stopTcp(reason);
      this.tcpStartError = null;
      if (!this.config.get().services.server.enabled) return;
      try {
        await this.startTcp(reason);
      } catch (err) {
        this.tcpStartError = (err as Error).message;
        this.log.error({ listener: 'tcp', err, reason }, 'TCP listener failed to rebind; socket listener untouched');
      }
    });
    return this.tcpTransition;
  }
}
