/**
 * The stdio pumps, hosted in the hub's own thread: workers/proxy-stdio's host module, loaded by
 * path on the first attach (workers never import one another's code; they meet in the
 * ProxyStdioHost contract), and one in-memory link per pump. Why in this thread and not a thread
 * of their own: shared/protocol/proxyStdio.ts.
 */

import type { ProxyStdioHost } from '../../shared/protocol/proxyStdio.js';
import { createLinkedPair } from '../../shared/transports/inMemory.js';
import type { Transport } from '../../shared/transports/transport.js';

const HOST_ENTRY = new URL('../proxy-stdio/host.js', import.meta.url);

export interface PumpAttachment {
  /** The hub's end of this pump's link: `connect` ProxyStdioProtocol on it, in the same tick. */
  readonly transport: Transport;
  /** Closes the link; the pump shuts its child down on that. Idempotent. */
  release(): void;
}

let loading: Promise<ProxyStdioHost> | undefined;
let attached = 0;

/** The host module, loaded once. */
function host(): Promise<ProxyStdioHost> {
  loading ??= import(HOST_ENTRY.href) as Promise<ProxyStdioHost>;
  return loading;
}

/** A fresh link to a new Pump. */
async function attach(): Promise<PumpAttachment> {
  const { attachPump } = await host();
  const [ours, theirs] = createLinkedPair();
  attachPump(theirs);
  attached++;
  let released = false;
  return {
    transport: ours,
    release: () => {
      if (released) return;
      released = true;
      attached--;
      ours.close();
    },
  };
}

export const pumpHost = {
  attach,
  /** The host module itself, for a test thread that serves pumps on its own ports. */
  load: host,
  /** Pumps attached and not released. */
  attachedCount: (): number => attached,
};
