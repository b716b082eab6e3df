/** Polling for tests: wait until a condition holds, failing with what was awaited and what was last seen. */

const POLL_MS = 20;

/** Reads until `ok` holds and returns that value; throws after `timeoutMs` naming `what` and the last value. */
export async function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms; last saw ${JSON.stringify(v)?.slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Waits until `predicate` is true. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  await until(predicate, Boolean, what, timeoutMs);
}
