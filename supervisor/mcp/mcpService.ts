/**
 * The /mcp server assembled over its channels (channels.ts: the protocol sessions with their reaper
 * and their cap, `services.server.max_mcp_sessions`, and the GET streams): evictions logged as
 * `mcp_session_evicted`, the tool catalog, the POST dispatcher and the Host guard. Config changes
 * reach it through refresh(); every change of a tool surface becomes
 * notifications/tools/list_changed on every open stream.
 */
import type { Disposable } from '../../shared/disposable.js';
import { DisposableStore } from '../../shared/disposable.js';
import type { ConfigSnapshot } from '../config/schema.js';
import { callerAgentType } from './callerAgentType.js';
import { renderInstructions } from './instructions.js';
import { notificationJson } from './jsonRpc.js';
import type { McpChannels } from './channels.js';
import type { McpStreams } from './mcpStreams.js';
import type { McpSessionMeta, McpSessionStore } from './protocolSessions.js';
import type { InstructionContext, ToolSurface } from './surface.js';
import { ToolCatalog } from './toolCatalog.js';
import type { CatalogLog, CatalogSettings } from './toolCatalog.js';
import type { NativeTool } from './tools/nativeTool.js';
import { McpTransport } from './transport.js';
import type { ProjectAllowlists } from '../upstreams/projectUpstreams.js';
import type { UpstreamToolSource } from './upstreamTools.js';
import { ClientExchanges } from './clientExchanges.js';
import { PrimitiveMethods } from './primitiveMethods.js';
import { deliverUpstreamNotifications } from './upstreamNotifications.js';
import type { UpstreamPrimitiveSource } from './upstreamPrimitives.js';
import type { TransportLog } from './transport.js';

export const TOOLS_LIST_CHANGED = notificationJson('notifications/tools/list_changed');

/** What the service reads about live PTY sessions (SessionService satisfies it). */
export interface LiveSessionsView {
  list(): ReadonlyArray<{ session_id: string; tuic_session: string; cwd: string; alias: string; agent_type: string | null }>;
}

/** An agent's marker and progress settings: config AND its agents.json overrides. */
export interface AgentMarkers {
  intents: boolean;
  suggests: boolean;
  progress: boolean;
}

export interface McpServiceOptions {
  version: string;
  config: () => ConfigSnapshot;
  nativeTools: readonly NativeTool[];
  liveSessions: LiveSessionsView;
  log: TransportLog & CatalogLog;
  /** The protocol sessions and their GET streams, built beforehand (agents push on them too); the service disposes them. */
  channels: McpChannels;
  /** The proxy hub's merged tools (issue #5); absent = natives only. */
  upstreams?: UpstreamToolSource;
  /** The hub's resources, prompts, completion, logging, and its upstreams' requests to clients; absent = tools only. */
  primitives?: UpstreamPrimitiveSource;
  /** Per-project upstream allowlists (repo-settings.json, .tuic.json); absent = no project is restricted. */
  projects?: ProjectAllowlists;
  /** Registered peers, for initialize's instructions. */
  peerCount?: () => number;
  /** Known repository paths (registered and from session cwds), for initialize's instructions. */
  repos?: () => readonly string[];
  /** The identity agent register bound to a protocol session that asserted none. */
  registeredIdentity?: (mcpSessionId: string) => string | null;
  /** The effective settings for an agent type (null: the caller's agent is unknown); absent = config alone. */
  agentMarkers?: (agentType: string | null) => AgentMarkers;
  /** After each initialize: binds the identity its x-tuic-session asserted. */
  onInitialized?: (meta: McpSessionMeta) => void;
  /** The authorization URL of an upstream waiting for OAuth (for clients that take URL elicitations). */
  authorizeUpstream?: (upstream: string) => Promise<{ url: string; asOrigin: string; elicitationId: string } | null>;
}

export function catalogSettings(config: ConfigSnapshot): CatalogSettings {
  return {
    collapseTools: config.collapse_tools,
    disabledNativeTools: config.disabled_native_tools,
    progressTracking: config.progress_tracking,
    aiTerminalEnabled: config.ai_terminal_mcp_enabled,
  };
}

export class McpService implements Disposable {
  readonly sessions: McpSessionStore;
  readonly streams: McpStreams;
  readonly catalog: ToolCatalog;
  readonly transport: McpTransport;
  private readonly store = new DisposableStore();

  constructor(private readonly opts: McpServiceOptions) {
    this.sessions = opts.channels.sessions;
    this.streams = opts.channels.streams;
    this.store.add(
      this.sessions.onRemoved((meta, reason) => {
        if (reason !== 'evicted') return;
        const record: Record<string, unknown> = {
          source: 'mcp_session_evicted',
          session_id: meta.id,
          idle_ms: this.sessions.now() - meta.last_activity_ms,
          max_mcp_sessions: opts.config().services.server.max_mcp_sessions,
        };
        if (meta.client_name !== null) record['client_name'] = meta.client_name;
        opts.log.info(record, 'mcp session evicted: max_mcp_sessions reached, least recently used idle session dropped');
      }),
    );
    this.catalog = new ToolCatalog({
      nativeTools: opts.nativeTools,
      settings: () => catalogSettings(opts.config()),
      log: opts.log,
      ...(opts.upstreams ? { upstreams: opts.upstreams } : {}),
    });
    const hub = opts.primitives;
    const exchanges = hub === undefined ? undefined : new ClientExchanges({ sessions: this.sessions, push: (id, json) => this.streams.push(id, json) });
    const primitives = hub === undefined ? undefined : new PrimitiveMethods(hub, this.sessions);
    if (hub !== undefined && exchanges !== undefined && primitives !== undefined) {
      hub.setClientRequestHandler(exchanges.ask);
      this.store.add(deliverUpstreamNotifications({ source: hub, sessions: this.sessions, streams: this.streams, exchanges, primitives }));
    }
    this.transport = new McpTransport({
      sessions: this.sessions,
      catalog: this.catalog,
      log: opts.log,
      version: opts.version,
      instructions: (surface, meta) => this.instructionsFor(surface, this.agentTypeOf(meta)),
      boundSessionFor: (tuicSession) => this.boundSessionFor(tuicSession),
      ...(opts.onInitialized ? { onInitialized: opts.onInitialized } : {}),
      ...(opts.registeredIdentity ? { registeredIdentity: opts.registeredIdentity } : {}),
      ...(opts.projects ? { allowlistFor: (repoPath: string | null) => opts.projects!.allowlistFor(repoPath) } : {}),
      ...(opts.authorizeUpstream ? { authorizeUpstream: opts.authorizeUpstream } : {}),
      ...(hub !== undefined && exchanges !== undefined && primitives !== undefined
        ? {
            primitives,
            exchanges,
            hubCapabilities: () => hub.lists().capabilities,
            notifyUpstreams: (method: string, paramsJson?: string) => void hub.notifyUpstreams(method, paramsJson),
          }
        : {}),
    });
    this.store.add(this.catalog.onChanged(() => this.streams.broadcast(TOOLS_LIST_CHANGED)));
    // A project's allowlist changes what its sessions list, not the catalog's own lists.
    if (opts.projects) this.store.add(opts.projects.onChanged(() => this.streams.broadcast(TOOLS_LIST_CHANGED)));
  }

  /** True while config `mcp_server_enabled` serves the /mcp routes. */
  get enabled(): boolean {
    return this.opts.config().mcp_server_enabled;
  }

  /** Call after every config change; returns whether a tool surface changed (and streams were told). */
  refresh(): boolean {
    return this.catalog.refresh();
  }

  /**
   * The live state initialize's instructions show; explicit so GET /mcp/instructions renders the same.
   * `agentType`: the client's agent, whose agents.json overrides narrow the markers and progress.
   */
  instructionContext(surface: ToolSurface, agentType: string | null = null): InstructionContext {
    const config = this.opts.config();
    const markers = this.opts.agentMarkers?.(agentType) ?? {
      intents: config.intent_tab_title,
      suggests: config.suggest_followups,
      progress: config.progress_tracking,
    };
    return {
      version: this.opts.version,
      surface,
      progressTracking: markers.progress,
      sessions: this.opts.liveSessions
        .list()
        .map((s) => (s.alias ? { session_id: s.session_id, cwd: s.cwd, alias: s.alias } : { session_id: s.session_id, cwd: s.cwd })),
      repos: this.opts.repos?.() ?? [],
      peerCount: this.opts.peerCount?.() ?? 0,
      intentMarkers: markers.intents,
      suggestFollowups: markers.suggests,
    };
  }

  instructionsFor(surface: ToolSurface, agentType: string | null = null): string {
    return renderInstructions(this.instructionContext(surface, agentType));
  }

  /** The agent of an initializing client: the one running in its bound PTY, else its clientInfo.name's. */
  private agentTypeOf(meta: McpSessionMeta): string | null {
    const bound = meta.tuic_session === null ? null : this.boundSessionFor(meta.tuic_session);
    const record = bound === null ? undefined : this.opts.liveSessions.list().find((s) => s.session_id === bound);
    return callerAgentType(record?.agent_type, meta.client_name);
  }

  boundSessionFor(tuicSession: string): string | null {
    for (const s of this.opts.liveSessions.list()) if (s.tuic_session === tuicSession || s.session_id === tuicSession) return s.session_id;
    return null;
  }

  dispose(): void {
    this.store.dispose();
    this.streams.closeAll();
    this.catalog.dispose();
    this.sessions.dispose();
  }
}
