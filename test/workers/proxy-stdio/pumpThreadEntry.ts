/**
 * A worker thread hosting pumps for the pump tests, the way the hub's thread does: the real
 * proxy-stdio host module, loaded through the hub's pumpHost. Each
 * `{ attach: MessagePort }` on parentPort gets a Pump on that port. One test-only trigger:
 * `{ crash: message }` throws from an event listener, an uncaught exception as a bug would be.
 */

import { MessagePort, parentPort } from 'node:worker_threads';

import { messagePortTransport } from '../../../shared/transports/messagePort.js';
import { pumpHost } from '../../../workers/mcp/pumpHost.js';

const host = await pumpHost.load();

parentPort!.on('message', (message: { attach?: unknown; crash?: string }) => {
  if (message.attach instanceof MessagePort) host.attachPump(messagePortTransport(message.attach));
  else if (message.crash !== undefined) throw new Error(message.crash);
});
