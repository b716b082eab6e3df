// Issue 26 item 10: the node engine (what the TCP port runs once TLS is on) bounds its connections
// as uWS does: headers within the limit of the connection's start (slowloris), a minimum body rate,
// the idle keep-alive limit, and a connection cap past which new connections are dropped at once.
// TUIC_HTTP_TIMEOUT_MS and TUIC_HTTP_MAX_CONNECTIONS shrink the 10 s limits and the cap so this runs
// in seconds; the real numbers are in supervisor/http/engine/bounds.ts. Floods are in bench/.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';

/** The shortened 10 s limits. */
const LIMIT_MS = 1_000;
const CAP = 6;

type Target = { path: string } | { host: string; port: number };

function open(target: Target): Socket {
  const s = 'path' in target ? connect({ path: target.path }) : connect(target);
  s.setEncoding('utf8');
  s.on('error', () => {});
  return s;
}

/** Resolves with what the socket received and when it closed (ms after `since`), or `null` after `waitMs`. */
function closed(s: Socket, since: number, waitMs: number): Promise<{ got: string; atMs: number } | null> {
  return new Promise((resolve) => {
    let got = '';
    s.on('data', (d: string) => (got += d));
    const timer = setTimeout(() => resolve(null), waitMs);
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ got, atMs: Date.now() - since });
    });
  });
}

describe('node engine bounds', () => {
  let t: Tuicd;
  before(async () => {
    t = await Tuicd.start({
      config: { services: { server: { enabled: true, port: 0 } } },
      env: { TUIC_HTTP_ENGINE: 'node', TUIC_HTTP_TIMEOUT_MS: String(LIMIT_MS), TUIC_HTTP_MAX_CONNECTIONS: String(CAP) },
    });
  });
  after(() => t.stop());

  for (const via of ['socket', 'tcp'] as const) {
    const target = (): Target => (via === 'socket' ? { path: t.socketPath } : { host: '127.0.0.1', port: t.tcpPort! });

    it(`${via}: slowloris connections (a header byte at a time) and a silent one are closed at the headers limit, with 408`, async () => {
      const started = Date.now();
      const head = `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(200)}`;
      const slow = Array.from({ length: 4 }, () => open(target()));
      const silent = open(target());
      let i = 0;
      const drip = setInterval(() => {
        for (const s of slow) if (!s.destroyed) s.write(head[i % head.length]!);
        i++;
      }, 50);
      try {
        const results = await Promise.all([...slow, silent].map((s) => closed(s, started, LIMIT_MS * 8)));
        for (const r of results) {
          assert.ok(r !== null, 'closed');
          assert.match(r.got, /^HTTP\/1\.1 408 /);
          assert.equal(JSON.parse(r.got.slice(r.got.indexOf('\r\n\r\n') + 4)).code, 'timeout');
          assert.ok(r.atMs >= LIMIT_MS - 100 && r.atMs < LIMIT_MS * 6, `closed after ${r.atMs} ms`);
        }
      } finally {
        clearInterval(drip);
      }
    });

    it(`${via}: a body that declares 1 MB and sends 1 byte gets 408 and the connection closes`, async () => {
      const started = Date.now();
      const s = open(target());
      const done = closed(s, started, LIMIT_MS * 8);
      s.write('PUT /config HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{');
      const r = await done;
      assert.ok(r !== null, 'closed');
      assert.match(r.got, /^HTTP\/1\.1 408 /);
      assert.equal(JSON.parse(r.got.slice(r.got.indexOf('\r\n\r\n') + 4)).code, 'timeout');
      assert.ok(r.atMs >= LIMIT_MS - 100 && r.atMs < LIMIT_MS * 6, `closed after ${r.atMs} ms`);
    });

    it(`${via}: an idle keep-alive connection is closed after the limit`, async () => {
      const s = open(target());
      let started = 0;
      const answered = new Promise<void>((resolve) => s.once('data', () => resolve()));
      const done = closed(s, 0, LIMIT_MS * 8);
      s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await answered;
      started = Date.now();
      const r = await done;
      assert.ok(r !== null, 'closed');
      const idleMs = Date.now() - started;
      assert.ok(idleMs >= LIMIT_MS - 100 && idleMs < LIMIT_MS * 6, `closed after ${idleMs} ms idle`);
    });
  }

  it(`past ${CAP} open connections on a listener a new one is dropped at once; once one closes, a new one is served`, async () => {
    // Each held connection is answered once (so the server surely counts it), then idles within the keep-alive limit.
    const held = Array.from({ length: CAP }, () => open({ path: t.socketPath }));
    await Promise.all(
      held.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.once('data', () => resolve());
            s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
          }),
      ),
    );
    const started = Date.now();
    const extra = open({ path: t.socketPath });
    const r = await closed(extra, started, LIMIT_MS / 2);
    assert.ok(r !== null, 'the connection over the cap was closed');
    assert.equal(r.got, '', 'with nothing said');
    assert.ok(r.atMs < LIMIT_MS / 2, `at once (${r.atMs} ms)`);
    held[0]!.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const health = await t.socket('GET', '/health');
    assert.equal(health.status, 200);
    for (const s of held) s.destroy();
  });
});
