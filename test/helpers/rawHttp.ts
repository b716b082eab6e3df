/** One request written byte for byte on a fresh connection, for answers no HTTP client would let through. */
import { connect } from 'node:net';

export interface RawAnswer {
  /** Null when the server closed without an HTTP answer. */
  status: number | null;
  /** Lower-cased header names of the answer. */
  headers: Record<string, string>;
  body: string;
}

/** Sends `head` on a unix socket (`path`) or TCP (`port` on 127.0.0.1) and reads until the server closes. */
export function rawHttp(target: { path: string } | { port: number }, head: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const sock = 'path' in target ? connect({ path: target.path }) : connect({ host: '127.0.0.1', port: target.port });
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (got += d));
    sock.on('error', reject);
    sock.on('close', () => {
      const end = got.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = (end < 0 ? got : got.slice(0, end)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const m = /^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '');
      resolve({ status: m ? Number(m[1]) : null, headers, body: end < 0 ? '' : got.slice(end + 4) });
    });
    sock.write(head);
  });
}
