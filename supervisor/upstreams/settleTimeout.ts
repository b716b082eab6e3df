/**
 * How long the first tools/list waits for saved upstreams to connect (3 s by default). Test
 * knob `TUIC_SETTLE_TIMEOUT_MS`: a loaded CI box can take longer than 3 s to start an upstream,
 * and a test about what the gate lets through must not depend on that.
 */
import { HubConstants } from '../../shared/protocol/mcpHub.js';

export const SETTLE_TIMEOUT_ENV = 'TUIC_SETTLE_TIMEOUT_MS';
const MAX_SETTLE_TIMEOUT_MS = 120_000;

/** The settle timeout from the environment, else 3 s; a malformed value fails the start with a clear message. */
export function settleTimeoutFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env[SETTLE_TIMEOUT_ENV];
  if (raw === undefined || raw === '') return HubConstants.SETTLE_TIMEOUT_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 1 || ms > MAX_SETTLE_TIMEOUT_MS) {
    throw new Error(`${SETTLE_TIMEOUT_ENV} must be an integer between 1 and ${MAX_SETTLE_TIMEOUT_MS} (ms), got ${JSON.stringify(raw)}`);
  }
  return ms;
}
