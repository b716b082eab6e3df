/**
 * bridge/httpConnection.ts against a unix-socket server writing answers byte by byte as crafted:
 * Content-Length, chunked (with a chunk split across writes), 1xx interim answers skipped, 204 with
 * no body, and the refusals (no length, headers over 64 KiB, garbage).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ConnectionError, HttpConnection } from '../../bridge/httpConnection.js';

describe('bridge HTTP framing', () => {
  let dir: string;
  let socketPath: string;
  let server: Server;
  /** What the server answers to the next request: pieces written with a pause between them. */
  let script: Array<string | Buffer> = [];
  const sockets = new Set<Socket>();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuicd-framing-'));
    socketPath = join(dir, 's.sock');
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('data', async (d) => {
        if (!d.toString('latin1').includes('\r\n\r\n')) return;
        for (const piece of script) {
          socket.write(piece);
          await new Promise((r) => setTimeout(r, 5));
        }
      });
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (pieces: Array<string | Buffer>) => {
    script = pieces;
    const conn = await HttpConnection.open(socketPath, 1000);
    try {
      return await conn.request('POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n', '{}');
    } finally {
      conn.destroy(new Error('done'));
    }
  };

  it('Content-Length, split anywhere; headers lower-cased', async () => {
    const a = await ask(['HTTP/1.1 200 OK\r\nMcp-Session-Id: s', '1\r\nContent-Length: 5\r\n\r\nhe', 'llo']);
    assert.deepEqual(a, { status: 200, headers: { 'mcp-session-id': 's1', 'content-length': '5' }, body: 'hello' });
  });

  it('chunked, with a chunk split across writes and a multi-byte character across chunks', async () => {
    const euro = Buffer.from('€'); // 3 bytes, split 2 + 1 across the chunks
    const a = await ask([
      Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab'), euro.subarray(0, 2)]),
      Buffer.concat([Buffer.from('\r\n3\r\n'), euro.subarray(2), Buffer.from('cd\r\n0\r\n\r\n')]),
    ]);
    assert.equal(a.body, 'ab€cd');
  });

  it('1xx interim answers are skipped; 204 ends at its headers', async () => {
    const a = await ask(['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n', 'HTTP/1.1 204 No Content\r\n\r\n']);
    assert.equal(a.status, 204);
    assert.equal(a.body, '');
  });

  it('refuses an answer without a length, headers over 64 KiB, and garbage', async () => {
    await assert.rejects(
      ask(['HTTP/1.1 200 OK\r\n\r\nbody']),
      (e: unknown) => e instanceof ConnectionError && /without a Content-Length/.test(e.message) && e.answered,
    );
    await assert.rejects(
      ask([`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(70_000)}\r\n`]),
      (e: unknown) => e instanceof ConnectionError && /over 64 KiB/.test(e.message),
    );
    await assert.rejects(ask(['SSH-2.0-nope\r\n\r\n']), (e: unknown) => e instanceof ConnectionError && /not an HTTP answer/.test(e.message));
  });
});
