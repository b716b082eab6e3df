/**
 * A string that holds only its own characters. The channel's decoder (msgpackr) hands out long
 * strings as V8 slices of the whole decoded message: a session id kept from a `spawn` request kept
 * that request alive with it, the child's environment included (about 1.8 KB per session here, as
 * much as the supervisor's environment is large). Strings a session keeps for its lifetime go
 * through this once.
 */
export function ownString(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
