/**
 * Removes a test's temp directory when a process it started may still be writing there (a fake agent
 * flushing its transcript, a browser closing its profile): retries, and a cleanup failure is
 * reported, never thrown, so it cannot hide the outcome of the test that ran.
 */
import { rmSync } from 'node:fs';

export function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  } catch (err) {
    process.stderr.write(`# left ${dir}: ${(err as Error).message}\n`);
  }
}
