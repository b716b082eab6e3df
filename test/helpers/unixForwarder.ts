/**
 * A byte-for-byte TCP→unix-socket forwarder, for clients that can only speak http://host:port (the
 * MCP conformance CLI) but must reach tuicd's socket listener, which has no auth by design. Bytes
 * pass unchanged in both directions, so the server sees the client's own Host header and framing.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export class UnixForwarder {
  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly port: number,
  ) {}

  static start(socketPath: string): Promise<UnixForwarder> {
    const sockets = new Set<Socket>();
    const track = (s: Socket): void => {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    };
    const server = createServer((client) => {
      const upstream = connect(socketPath);
      track(client);
      track(upstream);
      client.pipe(upstream).pipe(client);
      // One side failing or closing ends the pair: the client sees what the server did.
      client.once('error', () => upstream.destroy()).once('close', () => upstream.destroy());
      upstream.once('error', () => client.destroy()).once('close', () => client.destroy());
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (address === null || typeof address === 'string') return reject(new Error('forwarder has no TCP address'));
        resolve(new UnixForwarder(server, sockets, address.port));
      });
    });
  }

  /** Closes the listener and every forwarded connection (an open SSE stream would keep close() waiting). */
  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
