/**
 * Abort plumbing for the HTTP upstream client. Every request gets its own AbortController: a
 * long-lived signal shared by many requests would collect one listener per request (fetch and the
 * SDK's Protocol.request both add one and never remove it), so a hub-wide or caller-wide signal is
 * followed through ONE listener that fans out to whichever controllers currently depend on it.
 */

import type { Cancellation } from '../../shared/cancellation.js';

interface FanOut {
  readonly children: Set<AbortController>;
  readonly onAbort: () => void;
}

const fanOuts = new WeakMap<AbortSignal, FanOut>();

/** Aborts `child` when `parent` aborts (with its reason); the returned function unlinks it. */
export function follow(parent: AbortSignal, child: AbortController): () => void {
  if (parent.aborted) {
    child.abort(parent.reason);
    return () => {};
  }
  let fan = fanOuts.get(parent);
  if (!fan) {
    const children = new Set<AbortController>();
    const onAbort = (): void => {
      fanOuts.delete(parent);
      for (const c of children) c.abort(parent.reason);
      children.clear();
    };
    fan = { children, onAbort };
    fanOuts.set(parent, fan);
    parent.addEventListener('abort', onAbort, { once: true });
  }
  const { children, onAbort } = fan;
  children.add(child);
  return () => {
    if (!children.delete(child) || children.size > 0) return;
    parent.removeEventListener('abort', onAbort);
    if (fanOuts.get(parent) === fan) fanOuts.delete(parent);
  };
}

/** Aborts `child` when `parent` is cancelled (a call's Cancellation, one listener per call); the returned function unlinks it. */
export function followCancellation(parent: Cancellation, child: AbortController): () => void {
  const reason = parent.cancelReason;
  if (reason !== undefined) {
    child.abort(reason);
    return () => {};
  }
  return parent.onCancel((why) => child.abort(why));
}

/** Rejects with the signal's reason as soon as it aborts; the listener goes when `work` settles. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  const gate = new AbortController();
  const unlink = follow(signal, gate);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(gate.signal.reason);
    gate.signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      gate.signal.removeEventListener('abort', onAbort);
      unlink();
    });
  });
}

/** setTimeout's ceiling: the SDK's own per-request timer is parked here so ours (or none) governs. */
export const NEVER_MS = 2 ** 31 - 1;
