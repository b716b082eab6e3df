/** Reads a request body from uWS, counting bytes as they arrive and refusing past the limit without buffering it. */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';

export type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true };

/**
 * Must be called synchronously in the uWS handler (uWS drops body chunks that arrive with no
 * onData attached). Resolves once the last chunk arrived, or as soon as the count passes the limit.
 */
export function readBody(res: HttpResponse, declaredLength: number | undefined, maxBytes: number): Promise<BodyResult> {
  if (declaredLength !== undefined && declaredLength > maxBytes) return Promise.resolve({ ok: false, tooLarge: true });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    res.onData((chunk, isLast) => {
      if (settled) return;
      total += chunk.byteLength;
      if (total > maxBytes) {
        settled = true;
        chunks.length = 0;
        resolve({ ok: false, tooLarge: true });
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
