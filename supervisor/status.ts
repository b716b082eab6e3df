/** `tuicd status`: a real connect and GET /health on the socket, never a file-exists check. */
import { request } from 'node:http';

const STATUS_TIMEOUT_MS = 3000;

export type StatusResult = { alive: true; health: Record<string, unknown> } | { alive: false; reason: string };

export function probeStatus(socketPath: string): Promise<StatusResult> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/health', method: 'GET', timeout: STATUS_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ alive: true, health: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
        } catch {
          resolve({ alive: false, reason: `something answers on ${socketPath} but not with tuicd's /health` });
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${STATUS_TIMEOUT_MS} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ENOENT' ? 'no socket file' : err.code === 'ECONNREFUSED' ? 'stale socket file, nothing listening' : err.message;
      resolve({ alive: false, reason: `${why} (${socketPath})` });
    });
    req.end();
  });
}
