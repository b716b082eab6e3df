/**
 * What every `ai_terminal_*` tool shares: the deps, the session it addresses, and the gate its
 * write tools pass — the person at a TUICommander client says yes through the confirm broker (the
 * same `mcp-confirm` SSE event and push as `ui action=confirm`, 300 s → denied) before anything is
 * typed, written or run. Whether the tools exist at all is the catalog's call (ai_terminal_mcp_enabled).
 */
import { Type } from 'typebox';

import { clipClientInput } from '../../../shared/quoteClientInput.js';
import type { WorkPool } from '../../pool/workPool.js';
import type { SessionRecord } from '../../sessions/sessionRecord.js';
import type { SessionService } from '../../sessions/sessionService.js';
import type { ConfirmBroker } from '../confirmBroker.js';
import type { CallerContext } from './nativeTool.js';
import { ToolError } from './nativeTool.js';

export interface AiTerminalDeps {
  sessions: SessionService;
  confirmBroker: ConfirmBroker;
  /** search_files and list_files run their file walks on the work pool. */
  pool: WorkPool;
}

/** The name every tool of the family starts with: the catalog hides and refuses them while ai_terminal_mcp_enabled is off. */
export const AI_TERMINAL_PREFIX = 'ai_terminal_';

export const sessionIdArg = Type.String({
  minLength: 1,
  description: 'The session: its id, tuic_session or alias (e.g. tu-1)',
  errorMessage: "'session_id' must be a non-empty string",
});

/** The session a call addresses; an exited one only when `live` is not asked for (its output stays readable). */
export function sessionFor(sessions: SessionService, ref: string, opts: { live?: boolean } = {}): SessionRecord {
  const record = sessions.resolve(ref);
  if (!record) throw new ToolError('not_found', `Session '${clipClientInput(ref)}' not found`, { field: 'session_id' });
  if (opts.live && record.exit) throw new ToolError('conflict', `Session '${record.session_id}' has exited (${record.exit.reason})`);
  return record;
}

/**
 * Asks the person before a write tool acts; returns only on a yes. A no, no answer within the
 * window, or the call going away is `forbidden` with `confirmed:false` and why: nothing was done.
 */
export async function confirmOrRefuse(deps: AiTerminalDeps, caller: CallerContext, tool: string, record: SessionRecord, what: string): Promise<void> {
  const outcome = await deps.confirmBroker.request({
    title: `${tool} on ${record.alias || record.session_id}`,
    message: clipClientInput(what, 2000),
    originSessionId: record.tuic_session,
    signal: caller.signal,
  });
  if (outcome.confirmed) return;
  const reason = outcome.reason ?? 'the user denied it';
  throw new ToolError('forbidden', `${tool} was not confirmed (${reason}); nothing was done`, { confirmed: false, reason });
}
