/**
 * The real pump thread entry plus one test-only trigger: `{ crash: message }` on parentPort throws
 * from an event listener, an uncaught exception in the thread, as a bug in a pump would be.
 */

import { parentPort } from 'node:worker_threads';

import '../../../workers/proxy-stdio/main.js';

parentPort!.on('message', (message: { crash?: string }) => {
  if (message.crash !== undefined) throw new Error(message.crash);
});
