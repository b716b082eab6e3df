/**
 * The /mcp endpoint: the MCP service over its channels (built by the root before agents, which push
 * on them), serving every feature's native tools beside the hub's upstream tools, narrowed per
 * project. Composed last: it lists the tools of every feature before it. A config save can change a
 * tool surface (collapse_tools, disabled_native_tools, progress_tracking): the catalog compares and
 * tells the open streams.
 */
import { VERSION } from '../../shared/version.js';
import { type AgentSettings, effective } from '../config/agentSettings.js';
import type { ConfigStore } from '../config/configStore.js';
import type { McpHubHost } from '../hosts/mcpHubHost.js';
import type { Logger } from '../log.js';
import type { McpChannels } from '../mcp/channels.js';
import { McpService } from '../mcp/mcpService.js';
import type { NativeTool } from '../mcp/tools/nativeTool.js';
import type { Metrics } from '../metrics.js';
import type { RepoRegistry } from '../repos/repoRegistry.js';
import { mcpRoutes } from '../routes/mcp.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { ProjectUpstreams } from '../upstreams/projectUpstreams.js';
import type { AgentsFeature } from './agents.js';
import type { Feature } from './feature.js';

export interface McpDeps {
  config: ConfigStore;
  log: Logger;
  metrics: Metrics;
  channels: McpChannels;
  /** Every native tool, in the order tools/list shows them. */
  tools: readonly NativeTool[];
  sessions: SessionService;
  hub: McpHubHost;
  projects: ProjectUpstreams;
  /** An upstream's OAuth authorization URL, for clients that take URL elicitations. */
  authorizeUpstream?: (upstream: string) => Promise<{ url: string; asOrigin: string; elicitationId: string } | null>;
  repos: RepoRegistry;
  /** agents.json: per-agent overrides of the markers and progress tracking in initialize's instructions. */
  agentSettings: AgentSettings;
  /** Identities: initialize binds the one x-tuic-session asserts; instructions count peers. */
  agents: Pick<AgentsFeature, 'peers' | 'messaging'>;
}

export function mcpFeature(deps: McpDeps): Feature {
  const { config, sessions, channels, metrics } = deps;
  const { peers, messaging } = deps.agents;
  const mcp = new McpService({
    upstreams: deps.hub,
    primitives: deps.hub,
    projects: deps.projects,
    version: VERSION,
    config: () => config.get(),
    nativeTools: deps.tools,
    liveSessions: sessions,
    log: deps.log,
    channels,
    peerCount: () => peers.size,
    repos: () => deps.repos.roots(),
    registeredIdentity: (id) => peers.identityOf(id),
    agentMarkers: (agentType) => {
      const c = config.get();
      const o = deps.agentSettings.forAgent(agentType);
      return {
        intents: effective(c.intent_tab_title, o.intent_tab_title),
        suggests: effective(c.suggest_followups, o.suggest_followups),
        progress: effective(c.progress_tracking, o.progress_tracking),
      };
    },
    onInitialized: (meta) => messaging.protocolSessionStarted(meta.id, meta.tuic_session),
    ...(deps.authorizeUpstream ? { authorizeUpstream: deps.authorizeUpstream } : {}),
  });
  metrics.gauge('mcp_sessions', 'MCP protocol sessions held', () => channels.sessions.size);
  metrics.gauge('mcp_streams', 'Open GET /mcp streams', () => channels.streams.openCount);
  return {
    name: 'mcp',
    routes: mcpRoutes(mcp, { ptySessionCount: () => sessions.liveCount, maxSessions: () => config.get().services.server.max_sessions }),
    configChanged: () => {
      mcp.refresh();
    },
    dispose: () => mcp.dispose(),
  };
}
