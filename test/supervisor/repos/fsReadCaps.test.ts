/**
 * File reads and their caps: /fs/read always 10 MB; /fs/read-editor(-external) 250 MB for loopback
 * callers and 10 MB for remote ones. Files over 1 MB are read and encoded on the pool, and answers
 * over 256 KB are compressed off the event loop; both must give the same bytes as the small path.
 * The remote caller is a route-level call (a non-loopback peer cannot be made on 127.0.0.1).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

import { ApiError } from '../../../shared/apiError.js';
import type { RequestContext } from '../../../supervisor/http/types.js';
import { RootGate } from '../../../supervisor/fs/rootGate.js';
import { WorkPool } from '../../../supervisor/pool/workPool.js';
import { fsRoutes, READ_CAP_REMOTE_BYTES } from '../../../supervisor/routes/fs.js';
import { gitSandbox, type GitSandbox } from '../../helpers/gitRepo.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

/** Multi-byte text of about `bytes` bytes: the UTF-8 decoding on the pool must keep every character. */
function textOf(bytes: number): string {
  const line = 'naïve café — 漢字 🚀 line of text for the read tests\n';
  return line.repeat(Math.ceil(bytes / Buffer.byteLength(line)));
}

describe('fs reads: caps, pool reads, compression off the loop', () => {
  let sb: GitSandbox;
  let t: Tuicd;
  let repo: string;
  const medium = textOf(3 * 1024 * 1024);
  const large = textOf(READ_CAP_REMOTE_BYTES + 1024 * 1024);
  const q = encodeURIComponent;

  before(async () => {
    sb = gitSandbox();
    repo = sb.initRepo('app', { 'README.md': 'readme\n' });
    writeFileSync(join(repo, 'medium.txt'), medium);
    writeFileSync(join(repo, 'large.txt'), large);
    t = await Tuicd.start({ env: sb.env });
    await t.registerRepos(repo);
  });
  after(async () => {
    await t.stop();
    sb.cleanup();
  });

  it('a 3 MB file read on the pool arrives whole, plain, brotli or gzip', async () => {
    const plain = await t.socket('GET', `/fs/read?repoPath=${q(repo)}&file=medium.txt`);
    assert.equal(plain.status, 200, plain.text.slice(0, 200));
    assert.match(String(plain.headers['content-type']), /application\/json/);
    assert.deepEqual(plain.json(), { content: medium, size: Buffer.byteLength(medium) });
    for (const [accept, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const r = await t.socket('GET', `/fs/read?repoPath=${q(repo)}&file=medium.txt`, undefined, { 'accept-encoding': accept });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], accept);
      assert.ok(r.body.length < plain.body.length / 2, `${accept} body is compressed`);
      assert.deepEqual(decode(r.body), plain.body);
    }
  });

  it('over 10 MB: /fs/read refuses (413), read-editor on the socket reads it (250 MB cap)', async () => {
    const refused = await t.socket('GET', `/fs/read?repoPath=${q(repo)}&file=large.txt`);
    assert.equal(refused.status, 413);
    assert.equal(refused.json().code, 'payload_too_large');
    assert.match(refused.json().error, new RegExp(`read cap is ${READ_CAP_REMOTE_BYTES} bytes`));
    const editor = await t.socket('GET', `/fs/read-editor?repoPath=${q(repo)}&file=large.txt`);
    assert.equal(editor.status, 200);
    const body = editor.json();
    assert.equal(body.size, Buffer.byteLength(large));
    assert.equal(body.content, large);
    const external = await t.socket('GET', `/fs/read-editor-external?path=${q(join(repo, 'large.txt'))}`);
    assert.equal(external.status, 200);
    assert.equal(external.json().size, Buffer.byteLength(large));
  });

  it('a remote caller gets the 10 MB cap on read-editor and read-editor-external', async () => {
    const pool = new WorkPool();
    try {
      const routes = fsRoutes(pool, new RootGate(() => [repo]));
      const call = async (pattern: string, query: Record<string, string>, isLoopback: boolean) => {
        const handler = routes.find((r) => r.method === 'GET' && r.pattern === pattern)?.handler;
        if (typeof handler !== 'function') throw new Error(`${pattern} is not a plain route`);
        const ctx: RequestContext = {
          method: 'GET',
          path: pattern,
          query: new URLSearchParams(query),
          headers: {},
          params: {},
          listener: 'tcp',
          remoteAddress: isLoopback ? '127.0.0.1' : '192.0.2.10',
          isLoopback,
          tls: false,
          body: Buffer.alloc(0),
          signal: new AbortController().signal,
        };
        return handler(ctx);
      };
      for (const [pattern, query] of [
        ['/fs/read-editor', { repoPath: repo, file: 'large.txt' }],
        ['/fs/read-editor-external', { path: join(repo, 'large.txt') }],
      ] as const) {
        await assert.rejects(
          call(pattern, query, false),
          (err: unknown) => err instanceof ApiError && err.code === 'payload_too_large' && err.message.includes(`read cap is ${READ_CAP_REMOTE_BYTES} bytes`),
          `${pattern} remote`,
        );
        const local = await call(pattern, query, true);
        assert.equal(local.status, 200, `${pattern} loopback`);
        assert.equal(JSON.parse(String(local.body)).size, Buffer.byteLength(large));
      }
    } finally {
      await pool.destroy();
    }
  });
});
