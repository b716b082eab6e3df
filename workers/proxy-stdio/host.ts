/**
 * The proxy-stdio host: what the hub loads by path to run one Pump per stdio upstream inside its
 * own thread (ProxyStdioHost in shared/protocol/proxyStdio.ts says why not a thread of their own).
 * Each attached link gets its own Pump, so everything per upstream (child, respawn clock, request
 * ids, stdout queue) stays per pump. When a pump's link closes, its child goes: stdin closed,
 * SHUTDOWN_GRACE_MS, then its process group is killed.
 */

import { type Server, serve } from '../../shared/channel.js';
import { ProxyStdioProtocol, type ProxyStdioHost, type ProxyStdioProtocolT } from '../../shared/protocol/proxyStdio.js';
import type { Transport } from '../../shared/transports/transport.js';
import { Pump } from './pump.js';

export const attachPump: ProxyStdioHost['attachPump'] = (transport: Transport): void => {
  let server: Server<ProxyStdioProtocolT> | undefined;
  const pump = new Pump({ emit: (event, data, options) => server?.emit(event, data, options) });
  server = serve(transport, ProxyStdioProtocol, pump);
  server.onClose(() => void pump.shutdown());
};
