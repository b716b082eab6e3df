/** At most `budget` starts inside a sliding window: a worker that dies at once is not restarted in a tight loop. */
export class RestartBudget {
  private readonly starts: number[] = [];

  constructor(
    private readonly budget: number,
    private readonly windowMs: number,
  ) {}

  /** Records a start and returns null, or returns how many ms until the window allows one (nothing recorded). */
  take(now = Date.now()): number | null {
    while (this.starts.length > 0 && this.starts[0]! <= now - this.windowMs) this.starts.shift();
    if (this.starts.length >= this.budget) return this.starts[0]! + this.windowMs - now;
    this.starts.push(now);
    return null;
  }

  /** Starts recorded inside the window. */
  get used(): number {
    return this.starts.length;
  }
}
