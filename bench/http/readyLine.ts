/**
 * The one line a server under test prints when it is ready. tuicd's contract:
 * `tuicd <version> serving on unix socket <path>[ and tcp http://<host>:<port>]`;
 * the bare baselines print the same shape so one parser serves every variant.
 */

export interface Listening {
  socketPath: string;
  /** Absent when the server reported no TCP listener. */
  tcp?: { host: string; port: number };
}

/** Unanchored, so a version string or log prefix before it, or extra words after it, do no harm. */
export const READY_LINE_RE = /serving on unix socket (\S+)(?: and tcp http:\/\/(\[[^\]]+\]|[^\s:/]+):(\d+))?/;

export function formatReadyLine(name: string, socketPath: string, host: string, port: number): string {
  return `${name} serving on unix socket ${socketPath} and tcp http://${host}:${port}`;
}

/** Turns a match of READY_LINE_RE into addresses; a wildcard host becomes 127.0.0.1 (loopback only). */
export function parseReadyLine(m: RegExpMatchArray): Listening {
  const out: Listening = { socketPath: m[1]! };
  if (m[2] && m[3]) {
    let host = m[2].replace(/^\[|\]$/g, '');
    if (host === '0.0.0.0' || host === '::' || host === 'localhost') host = '127.0.0.1';
    out.tcp = { host, port: Number(m[3]) };
  }
  return out;
}
