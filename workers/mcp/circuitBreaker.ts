/**
 * Per-upstream circuit breaker: CB_THRESHOLD consecutive failures open it; each
 * open backs off CB_BASE_MS × 2^(opens−1) capped at CB_MAX_MS; the open after CB_MAX_RETRIES
 * marks the upstream failed. Any success resets everything. Time is injected so tests need no sleeps.
 */
import { HubConstants } from '../../shared/protocol/mcpHub.js';

export type BreakerState = 'closed' | 'open' | 'failed';

export interface BreakerOptions {
  threshold?: number;
  baseMs?: number;
  maxMs?: number;
  maxRetries?: number;
  now?: () => number;
}

export class CircuitBreaker {
  private failures = 0;
  /** Circuit opens since the last success (retry_count). */
  private opens = 0;
  private openUntil = 0;
  private exhausted = false;
  private readonly threshold: number;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly maxRetries: number;
  private readonly now: () => number;

  constructor(opts: BreakerOptions = {}) {
    this.threshold = opts.threshold ?? HubConstants.CB_THRESHOLD;
    this.baseMs = opts.baseMs ?? HubConstants.CB_BASE_MS;
    this.maxMs = opts.maxMs ?? HubConstants.CB_MAX_MS;
    this.maxRetries = opts.maxRetries ?? HubConstants.CB_MAX_RETRIES;
    this.now = opts.now ?? Date.now;
  }

  get state(): BreakerState {
    if (this.exhausted) return 'failed';
    return this.opens > 0 ? 'open' : 'closed';
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  get retryCount(): number {
    return this.opens;
  }

  /** Milliseconds until the backoff expires (0 when a call may go through). */
  get remainingBackoffMs(): number {
    return Math.max(0, this.openUntil - this.now());
  }

  /** True when a call may go through: closed, or open with its backoff expired (a trial). */
  allows(): boolean {
    if (this.exhausted) return false;
    return this.now() >= this.openUntil;
  }

  recordSuccess(): void {
    this.failures = 0;
    this.opens = 0;
    this.openUntil = 0;
    this.exhausted = false;
  }

  /** Returns the state after the failure: 'open' when this failure opened the circuit. */
  recordFailure(): BreakerState {
    if (this.exhausted) return 'failed';
    this.failures++;
    if (this.failures < this.threshold) return this.opens > 0 ? 'open' : 'closed';
    this.failures = 0;
    this.opens++;
    if (this.opens > this.maxRetries) {
      this.exhausted = true;
      return 'failed';
    }
    this.openUntil = this.now() + Math.min(this.maxMs, this.baseMs * 2 ** (this.opens - 1));
    return 'open';
  }
}
