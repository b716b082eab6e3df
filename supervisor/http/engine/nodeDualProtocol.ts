/**
 * TLS and plain HTTP on one port for the node engine: the http.Server keeps listening, but each
 * connection is held until its first byte arrives. 0x16 opens a TLS handshake record: the socket
 * goes through a tls.Server (never listening itself) and, once the handshake is done, the TLS socket
 * comes back to the same http.Server. Anything else is plain HTTP. Both kinds then share one parser
 * setup, one upgrade path (WebSockets) and one app; `socket.encrypted` tells them apart per request.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';

import type { TlsCredentials } from './types.js';

/** The first byte of a TLS record carrying a handshake message (a ClientHello on a new connection). */
const TLS_HANDSHAKE_RECORD = 0x16;

/** A client that connects and sends nothing is dropped after this, as an idle keep-alive is. */
const FIRST_BYTE_TIMEOUT_MS = 10_000;

/** A handshake not finished in this time is dropped (Node's default of 120 s holds a socket for long). */
const HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * Takes over `server`'s connection handling. Node documents injecting connections with
 * `emit('connection')`, but a second net.Server listening in front would leave the http.Server
 * never 'listening', and it arms its header and request timeouts (slow-loris protection) only then.
 * So the server listens as usual and its own connection listener is called once the protocol is known.
 */
export function serveDualProtocol(server: Server, credentials: TlsCredentials): (renewed: TlsCredentials) => void {
  const listeners = server.listeners('connection');
  if (listeners.length !== 1) throw new Error(`expected http.Server to have one connection listener, found ${listeners.length}`);
  const httpConnection = listeners[0] as (socket: Socket) => void;
  server.removeListener('connection', httpConnection);
  const handOver = (socket: Socket): void => httpConnection.call(server, socket);

  // Throws for credentials OpenSSL refuses; tlsCredentials.ts has already checked them.
  const tls = createTlsServer({ cert: credentials.cert, key: credentials.key, ALPNProtocols: ['http/1.1'], handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
  tls.on('secureConnection', (socket: TLSSocket) => handOver(socket));
  // A failed handshake (garbage after 0x16, a client that gives up, a timeout) ends that connection only.
  tls.on('tlsClientError', (_err: Error, socket: TLSSocket) => socket.destroy());

  server.on('connection', (socket: Socket) => {
    const drop = (): void => void socket.destroy();
    const onData = (chunk: Buffer): void => {
      socket.off('error', drop).off('end', drop).off('timeout', drop).setTimeout(0);
      // Paused and put back: whoever takes the socket reads this chunk first (a TLSSocket reads what
      // its wrapped socket buffered before it took over).
      socket.pause();
      socket.unshift(chunk);
      if (chunk[0] === TLS_HANDSHAKE_RECORD) {
        // As on an https.Server. The TLS socket inherits the http.Server's half-open mode, in which
        // a client hanging up mid-handshake held its socket until the handshake timeout.
        socket.allowHalfOpen = false;
        return void tls.emit('connection', socket);
      }
      handOver(socket);
      socket.resume();
    };
    socket.once('data', onData).once('error', drop).once('end', drop).once('timeout', drop).setTimeout(FIRST_BYTE_TIMEOUT_MS);
  });
  // Connections already up keep the context they shook hands with; new ones get the renewed one.
  return (renewed) => tls.setSecureContext({ cert: renewed.cert, key: renewed.key });
}
