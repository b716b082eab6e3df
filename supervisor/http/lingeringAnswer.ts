/**
 * An answer given before the request body is read (a declared Content-Length over the limit), then
 * a lingering close, as nginx does: what the client still sends is read and dropped until its body
 * ends or the budget (engine/bounds.ts) is spent, and only then is the connection closed. Closing
 * at once, with the client's bytes unread, makes the kernel reset the connection, and the reset
 * destroys the answer before a client still busy sending has read it (EPIPE, no status at all).
 */
import { LINGER_IDLE_MS, LINGER_MAX_BYTES, LINGER_MAX_MS } from './engine/bounds.js';
import type { EngineResponse } from './engine/types.js';

/**
 * Writes `status`, `headers`, Content-Length, `Connection: close` and `body` at once, then drains.
 * Call it inside the engine's request callback (uWS needs onData and onAborted attached there).
 * `onClosed` runs once, when the connection is gone; the response must not be touched after this call.
 */
export function answerThenLinger(
  res: EngineResponse,
  status: string,
  headers: ReadonlyArray<readonly [string, string]>,
  body: string,
  onClosed: () => void,
): void {
  if (res.endLingering) return res.endLingering(status, headers, body, onClosed);
  // uWS 20.30 has no call that writes a whole answer and leaves the request open: end() and
  // tryEnd() finish the response (after which it may not be touched, so it cannot be closed when
  // the budget is spent), write() goes chunked. The head and body go out through writeHeader,
  // which writes its value as given: the last header's value carries the blank line and the body.
  // The response stays pending, so onData keeps draining and close() stays legal.
  // The body goes out with a trailing CRLF (counted in Content-Length; JSON allows the whitespace).
  let closed = false;
  let drained = 0;
  let idle: NodeJS.Timeout | undefined;
  const close = (): void => {
    if (closed) return;
    closed = true;
    clearTimeout(cap);
    clearTimeout(idle);
    // uWS runs the onAborted handler from inside close(); onClosed runs there.
    res.close();
  };
  const cap = setTimeout(close, LINGER_MAX_MS);
  idle = setTimeout(close, LINGER_IDLE_MS);
  res.onAborted(() => {
    closed = true;
    clearTimeout(cap);
    clearTimeout(idle);
    onClosed();
  });
  res.cork(() => {
    res.writeStatus(status);
    for (const [name, value] of headers) res.writeHeader(name, value);
    // No body (a 204 preflight): no length, and nothing after the blank line.
    if (body === '') return void res.writeHeader('Connection', 'close\r\n');
    res.writeHeader('Content-Length', String(Buffer.byteLength(body) + 2));
    res.writeHeader('Connection', `close\r\n\r\n${body}`);
  });
  res.onData((chunk, isLast) => {
    if (closed) return;
    drained += chunk.byteLength;
    // The whole body read: nothing is left unread, so the close is a clean FIN.
    if (isLast || drained > LINGER_MAX_BYTES) return close();
    idle?.refresh();
  });
}
