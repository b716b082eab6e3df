/**
 * One supervisor's link to this host, wired once for both ways the host runs (attached on fd 3, or
 * listening on its own socket): PtyProtocol is served on the link, and the supervisor's events
 * (acknowledged output, input, agent type, output watchers, records) reach the service and the
 * watchers.
 */
import { type Server, serve } from '../../shared/channel.js';
import type { HandlersOf } from '../../shared/protocol/defineProtocol.js';
import { PtyProtocol, type PtyProtocolT } from '../../shared/protocol/pty.js';
import type { Transport } from '../../shared/transports/transport.js';
import type { OutputWatchers } from './outputWatchers.js';
import type { PtyService } from './ptyService.js';

type P = PtyProtocolT;

export interface SupervisorLinkOptions {
  transport: Transport;
  service: PtyService;
  /** The requests' handlers; default the service itself. */
  handlers?: HandlersOf<P>;
  outputWatchers: OutputWatchers;
  /**
   * Whether this link may act on the host now (the listening host serves one supervisor at a time);
   * an event from a link that may not is ignored. Default: always.
   */
  mayAct?: () => boolean;
  /** The supervisor's record of a session, kept for the next one (the listening host). */
  onRecord?: (session_id: string, record: string) => void;
}

export function serveSupervisor(opts: SupervisorLinkOptions): Server<P> {
  const { service, outputWatchers } = opts;
  const server = serve(opts.transport, PtyProtocol, opts.handlers ?? service);
  const mayAct = opts.mayAct ?? (() => true);
  server.on('ack', ({ session_id, bytes }) => {
    if (mayAct()) service.ack(session_id, bytes);
  });
  server.on('input', ({ session_id, from }, payload) => {
    if (mayAct()) service.input(session_id, payload, from);
  });
  server.on('watch', ({ session_id, watched }) => {
    if (mayAct()) service.watch(session_id, watched);
  });
  server.on('agent', ({ session_id, agent_type }) => {
    if (mayAct()) service.setAgent(session_id, agent_type);
  });
  server.on('outputWatchers', ({ watchers }) => {
    if (mayAct()) outputWatchers.set(watchers);
  });
  server.on('record', ({ session_id, record }) => {
    if (mayAct()) opts.onRecord?.(session_id, record);
  });
  return server;
}
