/** Child peer for channel.bench: `raw` echoes u32-framed bytes on stdio; `channel` serves EchoProtocol. */

import { serve, withPayload } from '../../shared/channel.js';
import { streamTransport } from '../../shared/transports/stream.js';
import { EchoProtocol, readRawFrames, writeRawFrame } from './channelBenchProtocol.js';

process.stdin.on('end', () => process.exit(0));
if (process.argv[2] === 'raw') {
  readRawFrames(process.stdin, (bytes) => writeRawFrame(process.stdout, bytes));
} else {
  const server = serve(streamTransport(process.stdin, process.stdout), EchoProtocol, {
    echo: (_p, ctx) => withPayload(null, ctx.payload ?? new Uint8Array(0)),
  });
  server.onClose(() => process.exit(0));
}
