/**
 * A response body sent as consecutive byte slices that are never joined. A large pre-encoded payload
 * (the ~156 KB tools/list with 190 upstream tools) spliced between a small per-request prefix and
 * suffix goes out without allocating and copying a fresh body per response: that allocation, not the
 * copy, cost ~0.5 ms CPU per answer (fresh large ArrayBuffers are fresh pages plus GC pressure).
 */
export class BodyParts {
  readonly byteLength: number;

  constructor(readonly parts: readonly Buffer[]) {
    let total = 0;
    for (const part of parts) total += part.length;
    this.byteLength = total;
  }

  /** One Buffer, for the paths that need the whole body at once (compression). */
  join(): Buffer {
    return Buffer.concat(this.parts, this.byteLength);
  }

  toString(): string {
    return this.join().toString('utf8');
  }
}
