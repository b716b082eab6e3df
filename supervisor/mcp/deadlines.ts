/**
 * The nested deadlines around a long MCP tool call: each layer strictly
 * outlasts the one it wraps, so the innermost owner always answers with its own body and cleans up.
 *   CONFIRM_TIMEOUT_MS (300 s, ui confirm's answer window)
 *   < services.server.request_timeout_ms (301 s default, the HTTP layer's 408)
 *   < BRIDGE_LONG_OP_WAIT_MS (305 s, what the stdio bridge waits for a confirm or long op).
 * Pinned by test/supervisor/mcp/tools/confirmDeadlines.test.ts.
 */

/** How long `ui action=confirm` waits for an answer before resolving `{confirmed:false, reason}`. */
export const CONFIRM_TIMEOUT_MS = 300_000;

/** The bridge's wait for a confirm or long workspace op: the confirm window plus 5 s of framing slack. */
export const BRIDGE_LONG_OP_WAIT_MS = 305_000;

/**
 * Test knob: shortens the confirm window so an end-to-end test can watch an unanswered confirm
 * resolve. Must stay below the request timeout, or the 408 would win (the bug this ordering fixed).
 */
export const CONFIRM_TIMEOUT_ENV = 'TUIC_CONFIRM_TIMEOUT_MS';

/** The confirm window from the environment, else CONFIRM_TIMEOUT_MS; a malformed value fails the start with a clear message. */
export function confirmTimeoutFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env[CONFIRM_TIMEOUT_ENV];
  if (raw === undefined || raw === '') return CONFIRM_TIMEOUT_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 1 || ms > CONFIRM_TIMEOUT_MS) {
    throw new Error(`${CONFIRM_TIMEOUT_ENV} must be an integer between 1 and ${CONFIRM_TIMEOUT_MS} (ms), got ${JSON.stringify(raw)}`);
  }
  return ms;
}
