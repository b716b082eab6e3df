/**
 * Entry of the pty host process. Two ways to run:
 * - attached (no arguments): serves PtyProtocol on the duplex socket the parent passes as fd 3
 *   (stdout/stderr stay free for logs); when that channel closes, the sessions end.
 * - detached (`--listen SOCKET --state FILE --orphan-timeout-ms N [--instance NAME]`): its own
 *   session, a unix socket of its own, and the sessions outlive the supervisor (hostListener.ts).
 */

import { Socket } from 'node:net';
import { parseArgs } from 'node:util';

import type { Server } from '../../shared/channel.js';
import { EventLoopLag } from '../../shared/eventLoopLag.js';
import type { PtyProtocolT } from '../../shared/protocol/pty.js';
import { streamTransport } from '../../shared/transports/stream.js';
import { deferredTextStage } from './deferredText.js';
import { HostListener } from './hostListener.js';
import { IdleGc } from '../../shared/idleGc.js';
import { type MatchedLine, OutputWatchers } from './outputWatchers.js';
import { type PtyEventSink, PtyService } from './ptyService.js';
import { serveSupervisor } from './supervisorLink.js';
import { TextPipeline } from './textPipeline.js';

/** Sessions get this long after SIGHUP before SIGKILL; well under the supervisor's 2 s stop grace. */
const SHUTDOWN_GRACE_MS = 1_000;

/** TUIC_PTY_TOMBSTONE_BUDGET_BYTES lowers the closed sessions' budget (tests churn past it in seconds). */
function tombstoneBudget(): { tombstoneBudgetBytes?: number } {
  const raw = process.env.TUIC_PTY_TOMBSTONE_BUDGET_BYTES;
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? { tombstoneBudgetBytes: n } : {};
}

/** A full GC once idle after a large free (shared/idleGc.ts); TUIC_PTY_IDLE_GC=0 turns it off (the bench's comparison). */
function idleGc(): { idleGc?: IdleGc } {
  return process.env.TUIC_PTY_IDLE_GC === '0' ? {} : { idleGc: new IdleGc() };
}

const { values: args } = parseArgs({
  options: {
    listen: { type: 'string' },
    state: { type: 'string' },
    'orphan-timeout-ms': { type: 'string' },
    instance: { type: 'string' },
  },
});

/** Where the service's events leave: the attached supervisor's channel. */
let sink: PtyEventSink & { flush(): void } = { emit: () => undefined, flush: () => undefined };
/** Watcher matches leave by the same way as the output. */
const outputWatchers = new OutputWatchers((session_id, lines: MatchedLine[], dropped) => sink.emit('watcherLines', { session_id, lines, dropped }));
const loopLag = new EventLoopLag();
const serviceOptions = {
  // Stripped, redacted lines for readLog: text leaves this process already clean.
  createTextLog: (id: string) => outputWatchers.attach(id, new TextPipeline()),
  ...tombstoneBudget(),
  ...idleGc(),
  loopDelayP99Ms: () => loopLag.p99Ms(),
};

let stopping = false;
let listener: HostListener | undefined;
let service: PtyService;
function stop(code: number, reason?: string): void {
  if (stopping) return;
  stopping = true;
  listener?.markEnding();
  if (reason !== undefined) process.stderr.write(`${new Date().toISOString()} ${reason}\n`);
  void service.shutdown(SHUTDOWN_GRACE_MS).finally(() => {
    listener?.close();
    process.exit(code);
  });
}

if (args.listen !== undefined && args.state !== undefined) {
  const orphanTimeoutMs = Number(args['orphan-timeout-ms'] ?? 3_600_000);
  const detached = new HostListener({
    socketPath: args.listen,
    statePath: args.state,
    orphanTimeoutMs: Number.isFinite(orphanTimeoutMs) && orphanTimeoutMs >= 0 ? orphanTimeoutMs : 3_600_000,
    instance: args.instance ?? null,
    stop,
    outputWatchers,
  });
  listener = detached;
  sink = detached;
  service = new PtyService(detached, serviceOptions);
  detached.start(service);
  process.stderr.write(`${new Date().toISOString()} pty host ${process.pid} listening on ${args.listen}\n`);
  // Its own session: no terminal hangs up on it. SIGTERM (tuicd stop, or a supervisor that stops
  // everything) ends the sessions; SIGUSR2 says a supervisor of another protocol version replaces it.
  process.on('SIGHUP', () => undefined);
  process.on('SIGUSR2', () => {
    const message = 'replaced by a supervisor speaking another pty protocol version (an upgrade)';
    listener?.writeEnded('pty_protocol_changed', message);
    stop(0, `pty host: ${message}; ending its sessions`);
  });
} else {
  const sock = new Socket({ fd: 3, readable: true, writable: true });
  const transport = streamTransport(sock, sock);
  let server: Server<PtyProtocolT> | undefined;
  sink = { emit: (event, data, options) => server?.emit(event, data, options), flush: () => transport.flush() };
  service = new PtyService(sink, serviceOptions);
  server = serveSupervisor({ transport, service, outputWatchers });
  // The supervisor closed the link or died: nobody is left to read these terminals.
  server.onClose(() => stop(0));
}
// The text stage runs once the turn's output is on its way to the viewers.
deferredTextStage.setBeforeRun(() => sink.flush());

// The supervisor's stop() sends SIGTERM; Ctrl-C when run by hand.
process.on('SIGTERM', () => stop(0, args.listen === undefined ? undefined : 'pty host: told to stop; ending its sessions'));
process.on('SIGINT', () => stop(0));
process.on('uncaughtException', (err) => {
  process.stderr.write(`pty host: uncaught exception, closing every session: ${err.stack ?? String(err)}\n`);
  stop(1);
});
