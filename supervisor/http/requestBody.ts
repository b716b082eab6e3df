/** Reads a request body from uWS, counting bytes as they arrive and refusing past the limit without keeping them. */
import type { EngineResponse } from './engine/types.js';

/**
 * Bytes past the limit read and dropped before answering 413. Answering while the client is still
 * sending makes uWS close with unread data, and the reset destroys the 413 before the client
 * reads it; draining first lets the answer arrive. Past this much, answer anyway and close.
 */
export const OVERSIZE_DRAIN_BYTES = 4 * 1024 * 1024;

export type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true; drained: boolean };

/**
 * Must be called synchronously in the uWS handler (uWS drops body chunks that arrive with no
 * onData attached). Resolves once the last chunk arrived, or once an oversized body has been drained.
 */
export function readBody(res: EngineResponse, declaredLength: number | undefined, maxBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    let oversize = declaredLength !== undefined && declaredLength > maxBytes;
    // With a declared length the body is copied once, straight into its final buffer.
    const whole =
      !oversize && declaredLength !== undefined && Number.isInteger(declaredLength) && declaredLength > 0 ? Buffer.allocUnsafe(declaredLength) : undefined;
    res.onData((chunk, isLast) => {
      if (settled) return;
      total += chunk.byteLength;
      if (!oversize && total > maxBytes) {
        oversize = true;
        chunks.length = 0; // never keep a byte past the limit
      }
      if (oversize) {
        if (isLast || total > maxBytes + OVERSIZE_DRAIN_BYTES) {
          settled = true;
          resolve({ ok: false, tooLarge: true, drained: isLast });
        }
        return;
      }
      // The engine's buffer is only valid during this callback (uWS neuters it): copy what we keep.
      if (whole !== undefined && total <= whole.length) whole.set(new Uint8Array(chunk), total - chunk.byteLength);
      else chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
      if (isLast) {
        settled = true;
        resolve({ ok: true, body: joined(whole, chunks, total) });
      }
    });
  });
}

/**
 * The body: the preallocated buffer when every byte went there (the usual case), else the chunks.
 * A body that does not match its declared length cannot pass an HTTP parser; were one to, its
 * bytes are never mixed up: the preallocated part is cut to what was copied into it.
 */
function joined(whole: Buffer | undefined, chunks: Buffer[], total: number): Buffer {
  if (whole === undefined) return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  const copied = Math.min(whole.length, total - chunks.reduce((n, c) => n + c.length, 0));
  if (chunks.length === 0) return copied === whole.length ? whole : whole.subarray(0, copied);
  return Buffer.concat([whole.subarray(0, copied), ...chunks]);
}
