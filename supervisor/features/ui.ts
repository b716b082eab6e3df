/**
 * What agents show the people at the TUICommander clients: the `ui` tool (tabs, toasts, yes/no
 * questions) and the confirm broker holding those questions until answered or timed out, answered
 * through /mcp/confirm (and the mobile page).
 */
import type { EventBus } from '../events/eventBus.js';
import type { McpChannels } from '../mcp/channels.js';
import { ConfirmBroker } from '../mcp/confirmBroker.js';
import { confirmTimeoutFromEnv } from '../mcp/deadlines.js';
import { createUiTool } from '../mcp/tools/ui.js';
import { mcpConfirmRoutes } from '../routes/mcpConfirm.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { Feature } from './feature.js';

export interface UiDeps {
  env: NodeJS.ProcessEnv;
  bus: EventBus;
  sessions: SessionService;
  /** The repository a protocol session declared (a toast's origin). */
  channels: McpChannels;
}

export interface UiFeature extends Feature {
  readonly confirms: ConfirmBroker;
}

export function uiFeature(deps: UiDeps): UiFeature {
  const { bus, sessions } = deps;
  // TUIC_CONFIRM_TIMEOUT_MS lets tests watch an unanswered confirm resolve; a bad value fails the start.
  const confirms = new ConfirmBroker({ bus, timeoutMs: confirmTimeoutFromEnv(deps.env) });
  return {
    name: 'ui',
    confirms,
    routes: mcpConfirmRoutes(confirms),
    tools: [
      createUiTool({
        bus,
        confirmBroker: confirms,
        sessionCwd: (sessionId) => sessions.resolve(sessionId)?.cwd,
        mcpRepoPath: (id) => deps.channels.repoPath(id),
      }),
    ],
    dispose: () => confirms.dispose(),
  };
}
