/**
 * Cancellation that costs nothing until it happens. Node's AbortController and AbortSignal are
 * EventTargets: building one per proxied tools/call in the supervisor, the hub and the pump cost
 * about a quarter of the 16-caller throughput. Hot paths hand a Cancellation along instead, and
 * build a real AbortSignal only where an API demands one (fetch), or a handler asks for it.
 */

export type CancelListener = (reason: Error) => void;

export interface Cancellation {
  /** Why it was cancelled; undefined until then. */
  readonly cancelReason: Error | undefined;
  /**
   * Calls `listener` once, when cancelled. Never called if already cancelled: look at
   * `cancelReason` first. Returns the unsubscribe, to call once the work is over.
   */
  onCancel(listener: CancelListener): () => void;
}

const noop = (): void => {};

/** A Cancellation its owner fires, with an AbortSignal built only on first demand. */
export class CancelSource implements Cancellation {
  private listeners: CancelListener[] | undefined = undefined;
  private reason: Error | undefined = undefined;
  private controller: AbortController | undefined = undefined;

  get cancelReason(): Error | undefined {
    return this.reason;
  }

  onCancel(listener: CancelListener): () => void {
    if (this.reason !== undefined) return noop;
    (this.listeners ??= []).push(listener);
    return () => {
      const i = this.listeners?.indexOf(listener) ?? -1;
      if (i >= 0) this.listeners!.splice(i, 1);
    };
  }

  /** Fires once; later calls are ignored. A listener that throws does not stop the others (its error is rethrown on a microtask, as an EventTarget would report it). */
  cancel(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) {
      try {
        listener(reason);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  /** A real AbortSignal following this source, for an API that takes nothing else. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}

function reasonOf(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason ?? 'aborted'));
}

/** An AbortSignal a caller already holds, seen as a Cancellation (no new signal is built). */
export function cancellationOf(signal: AbortSignal): Cancellation {
  return {
    get cancelReason() {
      return signal.aborted ? reasonOf(signal) : undefined;
    },
    onCancel(listener) {
      if (signal.aborted) return noop;
      const onAbort = (): void => listener(reasonOf(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      return () => signal.removeEventListener('abort', onAbort);
    },
  };
}
