/**
 * Progress: the intents agents mark in their output recorded into the progress journal (when
 * progress tracking is on for that agent: config AND agents.json), its routes and the `progress`
 * tool. The journal itself is built by the root: the repo tool reads it too.
 */
import { type AgentSettings, effective } from '../config/agentSettings.js';
import type { ConfigStore } from '../config/configStore.js';
import type { EventBus } from '../events/eventBus.js';
import type { Logger } from '../log.js';
import type { McpChannels } from '../mcp/channels.js';
import { createProgressTool } from '../mcp/tools/progress.js';
import { IntentRecorder } from '../progress/intentRecorder.js';
import type { ProgressJournal } from '../progress/progressJournal.js';
import { progressRoutes } from '../routes/progress.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { Feature } from './feature.js';

export interface ProgressDeps {
  config: ConfigStore;
  bus: EventBus;
  log: Logger;
  sessions: SessionService;
  agentSettings: AgentSettings;
  journal: ProgressJournal;
  /** The repository a protocol session declared (the progress tool's project). */
  channels: McpChannels;
}

export function progressFeature(deps: ProgressDeps): Feature {
  const { config, bus, sessions, journal } = deps;
  const intents = new IntentRecorder(
    journal,
    bus,
    (record) => effective(config.get().progress_tracking, deps.agentSettings.forAgent(record.agent_type).progress_tracking),
    deps.log,
  );
  const subscriptions = [
    sessions.onIntent((record, text) => intents.record(record, text)),
    sessions.onLifecycle((event, record) => {
      if (event === 'closed') intents.forget(record.session_id);
    }),
  ];
  return {
    name: 'progress',
    routes: progressRoutes(journal),
    tools: [
      createProgressTool({
        bus,
        config,
        progressJournal: journal,
        sessionCwd: (sessionId) => sessions.resolve(sessionId)?.cwd,
        trackedFor: (agentType) => effective(config.get().progress_tracking, deps.agentSettings.forAgent(agentType).progress_tracking),
        sessionAgentType: (sessionId) => sessions.resolve(sessionId)?.agent_type,
        mcpRepoPath: (id) => deps.channels.repoPath(id),
      }),
    ],
    dispose: () => {
      for (const s of subscriptions) s.dispose();
    },
  };
}
