/**
 * How long the bridge waits for tuicd's answer to one message. Ordinary calls get 10 s. A blocking
 * `agent`/`session` wait gets what it asked for (default 60 s, at most 300 s) plus 5 s for framing
 * and scheduling, so the server's own {timed_out:true} answer always arrives first; `ui confirm` and
 * worktree create/remove get 305 s (the server resolves them within its 301 s request limit). The
 * same holds through the collapsed surface's `call_tool`. An upstream tool (`server__tool`) is
 * bounded by the hub's per-upstream timeout, which the bridge cannot see: it gets 305 s too, and
 * the hub answers first.
 */

export const BridgeDeadlines = {
  ORDINARY_MS: 10_000,
  WAIT_DEFAULT_MS: 60_000,
  WAIT_CAP_MS: 300_000,
  MARGIN_MS: 5_000,
  LONG_OPERATION_MS: 305_000,
} as const;

const LONG_OPERATIONS: Readonly<Record<string, readonly string[]>> = { ui: ['confirm'], repo: ['worktree_create', 'worktree_remove'] };
const WAIT_TOOLS = new Set(['agent', 'session']);

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The deadline for one parsed JSON-RPC message from the client. */
export function deadlineFor(message: unknown): number {
  const m = objectOf(message);
  if (m['method'] !== 'tools/call') return BridgeDeadlines.ORDINARY_MS;
  const params = objectOf(m['params']);
  let name = params['name'];
  let args = objectOf(params['arguments']);
  if (name === 'call_tool') {
    name = args['tool_name'];
    args = objectOf(args['arguments']);
  }
  if (typeof name !== 'string') return BridgeDeadlines.ORDINARY_MS;
  const action = args['action'];
  if (WAIT_TOOLS.has(name) && action === 'wait') {
    const asked = args['timeout_ms'];
    const ms =
      typeof asked === 'number' && Number.isFinite(asked) && asked > 0 ? Math.min(asked, BridgeDeadlines.WAIT_CAP_MS) : BridgeDeadlines.WAIT_DEFAULT_MS;
    return ms + BridgeDeadlines.MARGIN_MS;
  }
  if (typeof action === 'string' && LONG_OPERATIONS[name]?.includes(action)) return BridgeDeadlines.LONG_OPERATION_MS;
  if (name.includes('__')) return BridgeDeadlines.LONG_OPERATION_MS;
  return BridgeDeadlines.ORDINARY_MS;
}
