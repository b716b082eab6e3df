/**
 * Entry of one stdio pump: a worker thread of the hub, serving ProxyStdioProtocol on parentPort
 * for one stdio upstream. When the hub goes away (channel closed), the child goes too: close its
 * stdin, give it SHUTDOWN_GRACE_MS, SIGKILL its group, and end the thread.
 */

import { parentPort } from 'node:worker_threads';

import { type Server, serve } from '../../shared/channel.js';
import { ProxyStdioProtocol, type ProxyStdioProtocolT } from '../../shared/protocol/proxyStdio.js';
import { messagePortTransport } from '../../shared/transports/messagePort.js';
import { Pump } from './pump.js';

if (parentPort === null) throw new Error('workers/proxy-stdio/main.js runs as a worker thread of the hub, not as a process');

let server: Server<ProxyStdioProtocolT> | undefined;
const pump = new Pump({ emit: (event, data) => server?.emit(event, data) });
server = serve(messagePortTransport(parentPort), ProxyStdioProtocol, pump);

server.onClose(() => {
  void pump.shutdown().finally(() => process.exit(0));
});

// A bug in this thread must not leave an upstream running that nobody can reach any more.
process.on('uncaughtException', (err) => {
  pump.killNow();
  process.stderr.write(`proxy-stdio pump: uncaught exception, upstream killed: ${err.stack ?? String(err)}\n`);
  process.exit(1);
});
