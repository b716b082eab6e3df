/** How a viewer's socket ends once its session closed and the `closed` frame went out. */
import type { ViewerSocket } from './viewerSocket.js';

/** A session that ended is a normal closure of its viewers, not an error. */
export const SESSION_CLOSED_CODE = 1000;
/** RFC 6455: a close frame's reason is at most 123 bytes of UTF-8. */
const MAX_REASON_BYTES = 123;

/** Closes `ws` cleanly after what is queued, saying why in the close frame. */
export function endViewer(ws: ViewerSocket, reason: string): void {
  let text = `session closed: ${reason}`;
  while (Buffer.byteLength(text) > MAX_REASON_BYTES) text = text.slice(0, -1);
  try {
    ws.end(SESSION_CLOSED_CODE, text);
  } catch {
    // The viewer left first: nothing to close.
  }
}
