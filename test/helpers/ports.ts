/** Ports for tests of tuicd's port walk (the configured port, then +1 and +2). */
import { createServer, type Server } from 'node:net';

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

/** Three consecutive ports on 127.0.0.1, held by this process until `close()`. */
export async function holdThreePorts(): Promise<{ base: number; close: () => Promise<void> }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const first = await listen(0);
    const base = (first.address() as { port: number }).port;
    const held = [first];
    const close = () => Promise.all(held.map((s) => new Promise<void>((r) => s.close(() => r())))).then(() => undefined);
    try {
      for (const p of [base + 1, base + 2]) held.push(await listen(p));
      return { base, close };
    } catch {
      await close();
    }
  }
  throw new Error('no three consecutive free ports');
}
