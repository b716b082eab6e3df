/** A tiny typed event source for the pty host's classes: `add` hands back a Disposable, `fire` calls in order. */

import { type Disposable, toDisposable } from '../../shared/disposable.js';

/** The array is replaced, never mutated, so a listener may dispose itself while being called. */
export class Listeners<A extends unknown[]> {
  private list: Array<(...args: A) => void> = [];

  add(listener: (...args: A) => void): Disposable {
    this.list = [...this.list, listener];
    return toDisposable(() => {
      this.list = this.list.filter((l) => l !== listener);
    });
  }

  fire(...args: A): void {
    for (const listener of this.list) listener(...args);
  }
}
