/** Connection bounds, in one place for both engines: the oversize answer's lingering close (lingeringAnswer.ts). */

/**
 * After the 413 for a declared body over the limit, what the client still sends is read and dropped
 * (so the close is not a reset that destroys the answer) until the body ends, for at most this many
 * bytes, this long in all, or this long without a byte; then the connection is closed. The bytes
 * are generous on purpose: a client that writes its whole body before reading (node's http in one
 * synchronous burst, Python's requests) reads nothing once the reset comes; 16 MiB lost a 20 MB
 * upload's answer that way.
 */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;
export const LINGER_MAX_MS = 5_000;
export const LINGER_IDLE_MS = 2_000;
