/** Worker peer for channel.bench: `raw` echoes postMessage values back; `channel` serves EchoProtocol. */

import { parentPort, workerData } from 'node:worker_threads';

import { serve, withPayload } from '../../shared/channel.js';
import { messagePortTransport } from '../../shared/transports/messagePort.js';
import { EchoProtocol } from './channelBenchProtocol.js';

const port = parentPort!;
if ((workerData as { mode: string }).mode === 'raw') {
  port.on('message', (value: unknown) => port.postMessage(value));
} else {
  // The received payload owns its buffer, so it can be moved back instead of copied.
  serve(messagePortTransport(port), EchoProtocol, { echo: (_p, ctx) => withPayload(null, ctx.payload ?? new Uint8Array(0), { transfer: true }) });
}
