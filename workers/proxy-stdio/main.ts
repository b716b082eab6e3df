/**
 * Entry of the stdio pump thread: ONE worker thread of the hub hosting the pump of every stdio
 * upstream (a thread is a V8 isolate, ~30 MB and most of a second of imports each; users run 10–20
 * upstreams). parentPort only carries `{ attach: MessagePort }`; each attached port gets its own
 * Pump serving ProxyStdioProtocol, so everything per upstream (child, respawn clock, request ids,
 * stdout queue) stays per pump. When a pump's channel closes, its child goes: close stdin, give it
 * SHUTDOWN_GRACE_MS, SIGKILL its group. The thread lives until the hub terminates it.
 */

import { MessagePort, parentPort } from 'node:worker_threads';

import { type Server, serve } from '../../shared/channel.js';
import { ProxyStdioProtocol, type ProxyStdioProtocolT } from '../../shared/protocol/proxyStdio.js';
import { messagePortTransport } from '../../shared/transports/messagePort.js';
import { Pump } from './pump.js';

if (parentPort === null) throw new Error('workers/proxy-stdio/main.js runs as a worker thread of the hub, not as a process');

/** Every pump whose child may still run: attached, or detached and still shutting its child down. */
const pumps = new Set<Pump>();

function attach(port: MessagePort): void {
  let server: Server<ProxyStdioProtocolT> | undefined;
  const pump = new Pump({ emit: (event, data) => server?.emit(event, data) });
  pumps.add(pump);
  server = serve(messagePortTransport(port), ProxyStdioProtocol, pump);
  server.onClose(() => {
    void pump.shutdown().finally(() => pumps.delete(pump));
  });
}

function attachedPort(message: unknown): MessagePort | undefined {
  const port = (message as { attach?: unknown } | null)?.attach;
  return port instanceof MessagePort ? port : undefined;
}

parentPort.on('message', (message: unknown) => {
  const port = attachedPort(message);
  if (port === undefined) {
    process.stderr.write('proxy-stdio pump thread: ignored a parentPort message that is not { attach: MessagePort }\n');
    return;
  }
  attach(port);
});

// A bug in this thread must not leave upstreams running that nobody can reach any more.
process.on('uncaughtException', (err) => {
  for (const pump of pumps) {
    try {
      pump.killNow();
    } catch {
      // Best effort: the next pump's child matters as much.
    }
  }
  process.stderr.write(`proxy-stdio pump thread: uncaught exception, ${pumps.size} upstream(s) killed: ${err.stack ?? String(err)}\n`);
  process.exit(1);
});
