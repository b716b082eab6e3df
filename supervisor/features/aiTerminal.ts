/** The ai_terminal_* MCP tools (off unless ai_terminal_mcp_enabled): sessions, the confirm broker and the work pool. */
import type { ConfirmBroker } from '../mcp/confirmBroker.js';
import { createAiTerminalTools } from '../mcp/tools/aiTerminal.js';
import type { WorkPool } from '../pool/workPool.js';
import type { SessionService } from '../sessions/sessionService.js';
import type { Feature } from './feature.js';

export function aiTerminalFeature(deps: { sessions: SessionService; confirms: ConfirmBroker; pool: WorkPool }): Feature {
  return { name: 'ai-terminal', tools: createAiTerminalTools({ sessions: deps.sessions, confirmBroker: deps.confirms, pool: deps.pool }) };
}
