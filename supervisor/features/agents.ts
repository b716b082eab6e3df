/**
 * Agents: identities and their mail (peers, delivery, lifecycle mail to parents), spawning, tasks
 * and the installed-agent probe, with the `agent` and `task` tools, GET /agents and the per-session
 * typed queue (POST /sessions/:id/queue shares its FIFO with mail). Mail reaches a protocol
 * session's GET stream through the MCP channels, built before this feature; protocol sessions
 * ending unroute their identity, and the MCP session reaper also retires day-old tasks and
 * identities nobody can address.
 */
import { AgentBinaries } from '../agents/agentBinaries.js';
import { AgentSpawner, promptWatchdogFromEnv } from '../agents/agentSpawner.js';
import { LifecycleMail } from '../agents/lifecycleMail.js';
import { MailDelivery } from '../agents/mailDelivery.js';
import { AgentMessaging } from '../agents/messaging.js';
import { PeerRegistry } from '../agents/peerRegistry.js';
import { TaskRegistry } from '../agents/tasks.js';
import type { AgentSettings } from '../config/agentSettings.js';
import type { ConfigStore } from '../config/configStore.js';
import type { EventBus } from '../events/eventBus.js';
import type { Logger } from '../log.js';
import type { McpChannels } from '../mcp/channels.js';
import { createAgentTool } from '../mcp/tools/agent.js';
import { createTaskTool } from '../mcp/tools/task.js';
import type { Metrics } from '../metrics.js';
import { agentRoutes } from '../routes/agents.js';
import { sessionQueueRoutes } from '../routes/sessionQueue.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { Feature } from './feature.js';

export interface AgentsDeps {
  env: NodeJS.ProcessEnv;
  config: ConfigStore;
  bus: EventBus;
  log: Logger;
  metrics: Metrics;
  sessions: SessionService;
  /** agents.json: named run configs for spawn. */
  agentSettings: AgentSettings;
  /** The MCP protocol sessions and their streams: mail pushes, liveness, session ends and the reaper. */
  channels: McpChannels;
}

export interface AgentsFeature extends Feature {
  readonly peers: PeerRegistry;
  readonly messaging: AgentMessaging;
}

export function agentsFeature(deps: AgentsDeps): AgentsFeature {
  const { env, bus, log, sessions, channels } = deps;
  const maxSessions = () => deps.config.get().services.server.max_sessions;
  const peers = new PeerRegistry(bus);
  const binaries = new AgentBinaries(() => env['PATH'] ?? '');
  const tasks = new TaskRegistry({ sessions });
  const mail = new MailDelivery({ registry: peers, sessions, bus, channel: channels, log });
  const lifecycle = new LifecycleMail(peers, tasks, mail, bus, sessions);
  const spawner = new AgentSpawner({
    sessions,
    registry: peers,
    tasks,
    lifecycle,
    path: () => env['PATH'] ?? '',
    log,
    watchdogMs: promptWatchdogFromEnv(env),
    runConfig: (name) => deps.agentSettings.runConfig(name),
  });
  const messaging = new AgentMessaging({ peers, sessions, mail, lifecycle, protocolSessions: channels, log });
  const subscriptions = [
    channels.sessions.onRemoved((meta) => messaging.protocolSessionEnded(meta.id)),
    // Tasks go a day after their creation (TaskConstants.TTL_MS); identities once nothing can address them.
    channels.sessions.onSweep((nowMs) => {
      tasks.reapExpired(nowMs);
      messaging.retireUnreachable();
    }),
  ];
  deps.metrics.gauge('peers', 'Registered agent identities', () => peers.size);
  return {
    name: 'agents',
    peers,
    messaging,
    routes: [...sessionQueueRoutes(sessions, mail), ...agentRoutes(binaries, env)],
    tools: [createAgentTool({ messaging, spawner, binaries, sessions, maxSessions }), createTaskTool({ tasks })],
    dispose: () => {
      for (const s of subscriptions) s.dispose();
      mail.dispose();
      lifecycle.dispose();
      tasks.dispose();
    },
  };
}
