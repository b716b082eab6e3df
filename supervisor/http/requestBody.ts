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
      // uWS neuters the ArrayBuffer after this callback returns: copy what we keep.
      chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
      if (isLast) {
        settled = true;
        resolve({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) });
      }
    });
  });
}
