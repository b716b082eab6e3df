/**
 * Storage a session keeps while it lives (its output ring's chunks, its line log's chunks), allocated
 * where V8 does not count it as external memory. V8 adds the ArrayBuffer memory allocated since the
 * last full (mark-compact) collection to the old generation's size when it decides whether to start
 * one, and the pty host's heap is small (~20 MB, so ~8-12 MB of room): with 500 sessions printing
 * 20 KB/s, rings and logs growing towards their caps (and logs replacing their dropped chunks) added
 * ~19 MB/s, and the host ran a full collection every ~0.4 s, each a 10-80 ms pause, for memory none
 * of them could free. A SharedArrayBuffer's memory is not counted per isolate (V8's BackingStore
 * accounts shared memory as 0, on Node 20, 22 and 24), so these grow without forcing collections.
 * It is still reported in `process.memoryUsage().arrayBuffers` and freed when its last view is
 * collected; the host's idle collection (shared/idleGc.ts) is told of what ended sessions free.
 * Only for memory that lives long: short-lived buffers belong to the young generation, whose
 * scavenges free them without a full collection.
 */

/** `size` zeroed bytes of long-lived storage (a Buffer over a SharedArrayBuffer never shared with another thread). */
export function longLivedBytes(size: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(size));
}
