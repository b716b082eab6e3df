/**
 * bridge/ipcHttp.ts against a unix-socket HTTP server that plays tuicd's part: pooled connections
 * are reused; a request that meets a pooled connection the server just closed is sent again on a
 * fresh one (it never reached the server); a deadline and a missing socket fail with their kinds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { IpcError, ipcRequest } from '../../bridge/ipcHttp.js';

describe('bridge IPC requests', () => {
  let dir: string;
  let socketPath: string;
  let server: Server;
  /** Per connection, how many requests it carried; a connection in `dropNext` is destroyed on its next request. */
  const carried = new Map<Socket, number>();
  const dropNext = new Set<Socket>();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-ipc-'));
    socketPath = join(dir, 'mcp.sock');
    server = createServer((req, res) => {
      const socket = req.socket;
      carried.set(socket, (carried.get(socket) ?? 0) + 1);
      if (dropNext.delete(socket)) return void socket.destroy();
      if (req.url === '/slow') return void setTimeout(() => res.end('{}'), 2000);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 's1' }).end('{"jsonrpc":"2.0","id":1,"result":{}}'));
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (path = '/mcp', timeoutMs = 5000) =>
    ipcRequest(socketPath, { method: 'POST', path, headers: { 'Content-Type': 'application/json' }, body: '{}', timeoutMs });

  it('reuses a kept-alive connection, and retries once on a fresh one when the reused one was closed under it', async () => {
    carried.clear();
    const first = await post();
    assert.equal(first.status, 200);
    assert.equal(first.headers['mcp-session-id'], 's1');
    assert.equal((await post()).status, 200);
    assert.equal(carried.size, 1, 'both requests on one connection');
    const [pooled] = [...carried.keys()];
    dropNext.add(pooled!);
    const retried = await post();
    assert.equal(retried.status, 200);
    assert.equal(carried.size, 2, 'the retry went out on a new connection');
    assert.equal(carried.get(pooled!), 3, 'the dropped attempt reached the old one');
  });

  it('a deadline fails with kind timeout; a socket nobody listens on with kind unreachable', async () => {
    await assert.rejects(post('/slow', 200), (err: unknown) => err instanceof IpcError && err.kind === 'timeout');
    await assert.rejects(
      ipcRequest(join(dir, 'nobody.sock'), { method: 'POST', path: '/mcp', headers: {}, body: '{}', timeoutMs: 1000 }),
      (err: unknown) => err instanceof IpcError && err.kind === 'unreachable',
    );
  });
});
