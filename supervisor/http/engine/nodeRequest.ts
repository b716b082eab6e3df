/** EngineRequest over a Node IncomingMessage: the uWS request contract on Node's parser. */
import type { IncomingMessage } from 'node:http';

import type { EngineRequest } from './types.js';

export class NodeRequest implements EngineRequest {
  private readonly url: string;
  private readonly query: string;

  /** `params`: the %-encoded `:param` values of the WebSocket route that matched, in order. */
  constructor(
    private readonly req: IncomingMessage,
    private readonly params: readonly string[] = [],
  ) {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    this.url = q < 0 ? raw : raw.slice(0, q);
    this.query = q < 0 ? '' : raw.slice(q + 1);
  }

  getMethod(): string {
    return (this.req.method ?? 'GET').toLowerCase();
  }

  getCaseSensitiveMethod(): string {
    return this.req.method ?? 'GET';
  }

  getUrl(): string {
    return this.url;
  }

  getQuery(): string {
    return this.query;
  }

  getHeader(lowerCaseName: string): string {
    const value = this.req.headers[lowerCaseName];
    if (value === undefined) return '';
    return Array.isArray(value) ? value.join(', ') : value;
  }

  forEach(cb: (name: string, value: string) => void): void {
    const raw = this.req.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) cb(raw[i]!.toLowerCase(), raw[i + 1]!);
  }

  getParameter(index: number): string {
    return this.params[index] ?? '';
  }

  isTls(): boolean {
    // A TLSSocket says `encrypted`; a plain net.Socket has no such field.
    return (this.req.socket as { encrypted?: boolean }).encrypted === true;
  }
}

/** The path part of a request target, for matching WebSocket routes before a request object exists. */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q < 0 ? raw : raw.slice(0, q);
}
