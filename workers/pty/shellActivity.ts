/**
 * Busy/idle of one shell from its output alone: busy on output, idle after SHELL_IDLE_MS of quiet,
 * or held busy while the program shows it works. Costs one Date.now() per chunk and one timer per busy
 * period, not per chunk.
 */

import type { Disposable } from '../../shared/disposable.js';

export type ShellState = 'busy' | 'idle';

export class ShellActivity<Owner = unknown> implements Disposable {
  private current: ShellState = 'idle';
  private lastOutputAt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The program says it is working (an agent's status line, a hook): quiet does not make it idle. */
  private held = false;

  constructor(
    private idleMs: number,
    /** Called on change only, with `owner`: one function can serve every session, not a closure per session. */
    private readonly onChange: (state: ShellState, owner: Owner) => void,
    private readonly owner?: Owner,
  ) {}

  get state(): ShellState {
    return this.current;
  }

  /** Output arrived now. */
  output(): void {
    this.lastOutputAt = Date.now();
    if (this.current !== 'busy') this.set('busy');
    this.timer ??= setTimeout(ShellActivity.check, this.idleMs, this);
  }

  /** Agents pause longer between bursts than shells (AGENT_IDLE_MS against SHELL_IDLE_MS). */
  setIdleMs(ms: number): void {
    this.idleMs = ms;
  }

  /** Holds the session busy while the program shows it works; on release, idle follows the usual quiet. */
  hold(working: boolean): void {
    if (this.held === working) return;
    this.held = working;
    if (working) {
      if (this.current !== 'busy') this.set('busy');
      return;
    }
    this.timer ??= setTimeout(ShellActivity.check, Math.max(0, this.idleMs - (Date.now() - this.lastOutputAt)), this);
  }

  /** The shell is gone: idle for good (the final state before exit). */
  stop(): void {
    this.dispose();
    this.set('idle');
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Re-armed for the remainder while output keeps coming. The timer's argument is the instance: no closure kept per session. */
  private static check<O>(self: ShellActivity<O>): void {
    const quietMs = Date.now() - self.lastOutputAt;
    if (self.held) {
      self.timer = undefined; // released by hold(false), which re-arms
    } else if (quietMs >= self.idleMs) {
      self.timer = undefined;
      self.set('idle');
    } else {
      self.timer = setTimeout(ShellActivity.check, self.idleMs - quietMs, self);
    }
  }

  private set(state: ShellState): void {
    if (this.current === state) return;
    this.current = state;
    this.onChange(state, this.owner as Owner);
  }
}
