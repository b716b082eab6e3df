/**
 * Writes a BodyParts body the uWS way for large bodies: `tryEnd(part, total)` per slice (one
 * Content-Length, no chunked framing), and when the socket will not take more, resume from
 * `getWriteOffset()` in `onWritable`. uWS then never copies the unsent rest into its own buffer.
 */
import type { EngineResponse } from './engine/types.js';

import type { BodyParts } from './bodyParts.js';

/**
 * Starts writing `body` on a response whose status and headers are written (call it corked).
 * `onPending` is called once if the body could not go out at once: the caller must then watch for
 * the client going away (uWS requires an abort handler on a response still in flight).
 */
export function writeParts(res: EngineResponse, body: BodyParts, onPending: () => void): void {
  let index = 0;
  /** Body offset at which parts[index] begins. */
  let start = 0;
  const pump = (): boolean => {
    const { parts, byteLength } = body;
    for (; index < parts.length; start += parts[index]!.length, index++) {
      const part = parts[index]!;
      const sent = res.getWriteOffset() - start;
      if (sent >= part.length) continue;
      const [ok, done] = res.tryEnd(sent > 0 ? part.subarray(sent) : part, byteLength);
      if (done) return true;
      if (!ok) return false;
    }
    return true;
  };
  if (pump()) return;
  onPending();
  res.onWritable(() => {
    let ok = false;
    res.cork(() => {
      ok = pump();
    });
    return ok;
  });
}
