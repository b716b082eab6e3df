/**
 * The hub's one proxy-stdio pump thread, shared by every stdio upstream. A thread is a V8 isolate
 * (measured: ~30 MB of tuicd RSS and 0.4–0.9 s of imports under load per thread), so the pumps live
 * side by side in one thread, each upstream with its own Pump object, child and channel. Started
 * from its entry by path on the first attach (workers never import one another's code), ended when
 * the last pump is released. If it dies, every attached pump's port is closed (its client fails
 * what was pending) and the next attach starts a new thread.
 */

import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';

const PUMP_ENTRY = new URL('../proxy-stdio/main.js', import.meta.url);

export interface PumpAttachment {
  /** The hub's end of this pump's channel: `connect` ProxyStdioProtocol on it, in the same tick. */
  readonly port: MessagePort;
  /**
   * Closes the port (the pump shuts its child down on that) and, for the thread's last pump, ends
   * the thread and resolves once it has exited. Shut the child down over the channel first: a
   * thread terminated mid-shutdown cannot finish it. Idempotent.
   */
  release(): Promise<void>;
}

interface Thread {
  readonly worker: Worker;
  /** The hub's ends of the pumps attached to this thread. */
  readonly ports: Set<MessagePort>;
}

/** The thread new pumps go to; undefined until the first attach, after the last release, and once it died. */
let current: Thread | undefined;
/** Every thread not yet exited (a released one may still be terminating while a new one starts). */
const live = new Set<Thread>();

function startThread(): Thread {
  const worker = new Worker(PUMP_ENTRY, { name: 'proxy-stdio' });
  const thread: Thread = { worker, ports: new Set() };
  live.add(thread);
  // Without a listener an error in the thread (one that escaped its own handler, or a failed
  // import) would be rethrown here and take the hub down with it.
  worker.on('error', (err) => process.stderr.write(`proxy-stdio pump thread failed: ${err.stack ?? String(err)}\n`));
  worker.once('exit', () => {
    live.delete(thread);
    if (current === thread) current = undefined;
    // Node closes the ports the thread held; closing ours as well covers ports still queued in
    // the attach messages of a thread that died before reading them.
    for (const port of thread.ports) port.close();
    thread.ports.clear();
  });
  return thread;
}

/** A fresh channel to a new Pump in the shared thread (started if none runs). */
function attach(): PumpAttachment {
  const thread = (current ??= startThread());
  const { port1, port2 } = new MessageChannel();
  thread.ports.add(port1);
  thread.worker.postMessage({ attach: port2 }, [port2]);
  let released: Promise<void> | undefined;
  return { port: port1, release: () => (released ??= detach(thread, port1)) };
}

async function detach(thread: Thread, port: MessagePort): Promise<void> {
  port.close();
  if (!thread.ports.delete(port) || thread.ports.size > 0) return;
  if (current === thread) current = undefined;
  await thread.worker.terminate();
}

export const pumpThread = {
  attach,
  /** Pump threads not yet exited: 1 while any pump is attached (briefly 2 while a released one ends). */
  threadCount: (): number => live.size,
  /** Pumps attached to a live thread. */
  attachedCount: (): number => [...live].reduce((sum, thread) => sum + thread.ports.size, 0),
  /** The thread new pumps go to, if one runs: for tests that kill it behind the pumps' backs. */
  currentWorker: (): Worker | undefined => current?.worker,
};
