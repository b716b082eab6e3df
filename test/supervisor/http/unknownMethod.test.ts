/**
 * An HTTP method tuicd does not serve gets 405 JSON, not a dropped connection. The uWS 20.30 build's
 * parser accepts only the nine standard methods and closes the connection on any other before a
 * handler runs, so for those the check holds on the node engine only (said as a skip on uWS).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { Tuicd } from '../../helpers/tuicdProcess.js';

/** One raw request on the unix socket; resolves with the status line's code and the body ('' when dropped). */
function raw(path: string, method: string): Promise<{ status: number | null; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ path });
    let got = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (got += d));
    sock.on('error', reject);
    sock.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      resolve({ status: m ? Number(m[1]) : null, body: got.slice(got.indexOf('\r\n\r\n') + 4) });
    });
    sock.write(`${method} /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  });
}

describe('unknown HTTP methods', { timeout: 30_000 }, () => {
  let t: Tuicd;
  let engine: string;
  before(async () => {
    t = await Tuicd.start();
    engine = (await t.socket('GET', '/health')).json().http_engine.name;
  });
  after(() => t.stop());

  it('TRACE and CONNECT get 405 JSON naming the method', async () => {
    for (const method of ['TRACE', 'CONNECT']) {
      const r = await raw(t.socketPath, method);
      assert.equal(r.status, 405, method);
      assert.deepEqual(JSON.parse(r.body), { error: `method "${method}" is not supported` });
    }
  });

  it('a method outside HTTP’s standard nine gets 405 JSON too', async (ctx) => {
    if (engine === 'uws') return ctx.skip('uWS 20.30 drops non-standard methods in its parser, before any handler');
    for (const method of ['FOO', 'PROPFIND', 'M-SEARCH']) {
      const r = await raw(t.socketPath, method);
      assert.equal(r.status, 405, method);
      assert.match(JSON.parse(r.body).error, /not supported/);
    }
  });
});
