/** Per-IP failed-login limiter for the TCP listener: N failures inside a window → 429 until the oldest expires. */

/** Bound on remembered IPs so a spray of addresses cannot grow memory without limit. */
const MAX_TRACKED_IPS = 10_000;

export interface RateLimitSettings {
  /** Failures allowed inside the window; 0 disables the limiter. */
  maxFailures: number;
  windowSecs: number;
}

export class AuthRateLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly settings: () => RateLimitSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** No failure is on record for any address (some may have expired without being swept yet). */
  get isEmpty(): boolean {
    return this.failures.size === 0;
  }

  /** Seconds the caller must wait (Retry-After), or 0 when it may try. */
  retryAfterSecs(ip: string): number {
    const { maxFailures, windowSecs } = this.settings();
    if (maxFailures <= 0) return 0;
    const times = this.live(ip, windowSecs);
    if (times.length < maxFailures) return 0;
    const oldest = times[times.length - maxFailures]!;
    const leftMs = oldest + windowSecs * 1000 - this.now();
    return Math.max(0, Math.floor(leftMs / 1000)) + 1;
  }

  /** Records a failure now; returns its time, which `forgive` takes to withdraw it. */
  recordFailure(ip: string): number {
    const { windowSecs } = this.settings();
    const times = this.live(ip, windowSecs);
    const at = this.now();
    times.push(at);
    if (!this.failures.has(ip)) {
      if (this.failures.size >= MAX_TRACKED_IPS) this.evictOldest();
      this.failures.set(ip, times);
    }
    return at;
  }

  /** Withdraws one failure recorded at `at` (an attempt counted in advance that turned out right). */
  forgive(ip: string, at: number): void {
    const times = this.failures.get(ip);
    if (!times) return;
    const index = times.lastIndexOf(at);
    if (index >= 0) times.splice(index, 1);
    if (times.length === 0) this.failures.delete(ip);
  }

  clear(ip: string): void {
    this.failures.delete(ip);
  }

  private live(ip: string, windowSecs: number): number[] {
    const times = this.failures.get(ip);
    if (!times) return [];
    const cutoff = this.now() - windowSecs * 1000;
    while (times.length > 0 && times[0]! <= cutoff) times.shift();
    if (times.length === 0) this.failures.delete(ip);
    return times;
  }

  private evictOldest(): void {
    const first = this.failures.keys().next();
    if (!first.done) this.failures.delete(first.value);
  }
}
