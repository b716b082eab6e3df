/**
 * Entry of the pty host process: serves PtyProtocol on the duplex socket the supervisor passes as
 * fd 3 (stdout/stderr stay free for logs). When the supervisor goes away, so do the sessions.
 */

import { Socket } from 'node:net';

import { type Server, serve } from '../../shared/channel.js';
import { PtyProtocol, type PtyProtocolT } from '../../shared/protocol/pty.js';
import { streamTransport } from '../../shared/transports/stream.js';
import { deferredTextStage } from './deferredText.js';
import { IdleGc } from './idleGc.js';
import { OutputWatchers } from './outputWatchers.js';
import { PtyService } from './ptyService.js';
import { TextPipeline } from './textPipeline.js';

/** Sessions get this long after SIGHUP before SIGKILL; well under the supervisor's 2 s stop grace. */
const SHUTDOWN_GRACE_MS = 1_000;

const sock = new Socket({ fd: 3, readable: true, writable: true });
let server: Server<PtyProtocolT> | undefined;
const outputWatchers = new OutputWatchers((session_id, lines, dropped) => server?.emit('watcherLines', { session_id, lines, dropped }));
const service = new PtyService(
  { emit: (event, data, options) => server?.emit(event, data, options) },
  // Stripped, redacted lines for readLog: text leaves this process already clean.
  { createTextLog: (id) => outputWatchers.attach(id, new TextPipeline()), ...tombstoneBudget(), ...idleGc() },
);
const transport = streamTransport(sock, sock);
server = serve(transport, PtyProtocol, service);
// The text stage runs once the turn's output is on its way to the viewers.
deferredTextStage.setBeforeRun(() => transport.flush());
server.on('ack', ({ session_id, bytes }) => service.ack(session_id, bytes));
server.on('input', ({ session_id, from }, payload) => service.input(session_id, payload, from));
server.on('agent', ({ session_id, agent_type }) => service.setAgent(session_id, agent_type));
server.on('outputWatchers', ({ watchers }) => outputWatchers.set(watchers));

/** TUIC_PTY_TOMBSTONE_BUDGET_BYTES lowers the closed sessions' budget (tests churn past it in seconds). */
function tombstoneBudget(): { tombstoneBudgetBytes?: number } {
  const raw = process.env.TUIC_PTY_TOMBSTONE_BUDGET_BYTES;
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? { tombstoneBudgetBytes: n } : {};
}

/** A full GC once idle after a large free (workers/pty/idleGc.ts); TUIC_PTY_IDLE_GC=0 turns it off (the bench's comparison). */
function idleGc(): { idleGc?: IdleGc } {
  return process.env.TUIC_PTY_IDLE_GC === '0' ? {} : { idleGc: new IdleGc() };
}

let stopping = false;
function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  void service.shutdown(SHUTDOWN_GRACE_MS).finally(() => process.exit(code));
}

// The supervisor closed the link or died: nobody is left to read these terminals.
server.onClose(() => stop(0));
// The supervisor's stop() sends SIGTERM after closing the channel; Ctrl-C when run by hand.
process.on('SIGTERM', () => stop(0));
process.on('SIGINT', () => stop(0));
process.on('uncaughtException', (err) => {
  process.stderr.write(`pty host: uncaught exception, closing every session: ${err.stack ?? String(err)}\n`);
  stop(1);
});
