/**
 * An HTTP method tuicd does not serve gets 405 JSON, not a dropped connection. The uWS 20.30 build's
 * parser accepts only the nine standard methods and closes the connection on any other before a
 * handler runs, so for those the check holds on the node engine only (said as a skip on uWS).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { rawHttp, type RawAnswer } from '../../helpers/rawHttp.js';
import { Tuicd } from '../../helpers/tuicdProcess.js';

function raw(path: string, method: string): Promise<RawAnswer> {
  return rawHttp({ path }, `${method} /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
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
      assert.deepEqual(JSON.parse(r.body), { error: `method "${method}" is not supported`, code: 'method_not_allowed' });
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
