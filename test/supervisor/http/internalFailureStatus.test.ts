// A worker behind a route that cannot answer is the server being unavailable, not a handler bug:
// WORKER_EXITED and CHANNEL_CLOSED are 503 (Retry-After when the error carries retry_after_s, and
// 1 s for a worker that died under the request),
// REQUEST_TIMEOUT is 504; none is logged as a handler failure. Anything else stays a logged 500.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { ErrorCode, SupervisorError } from '../../../shared/errors.js';
import { bindUnix, closeUnix, type UnixBinding } from '../../../supervisor/http/listeners.js';
import { HttpServer } from '../../../supervisor/http/server.js';
import type { Route } from '../../../supervisor/http/types.js';
import { testTcpAuth } from '../../helpers/testAuth.js';
import { httpRequest } from '../../helpers/tuicdProcess.js';
import { testEngine } from '../../helpers/httpEngine.js';

const failing = (path: string, err: Error): Route => ({
  method: 'GET',
  pattern: path,
  handler: async () => {
    throw err;
  },
});

describe('HTTP status of internal failures', () => {
  const work = mkdtempSync(join(tmpdir(), 'tuicd-internal-failure-'));
  const handlerErrors: unknown[] = [];
  const server = new HttpServer({
    engine: testEngine(),
    routes: [
      failing('/budget', new SupervisorError(ErrorCode.WORKER_EXITED, 'pty host started 5 times in the last minute; next try in 42s', { retry_after_s: 42 })),
      failing('/shut', new SupervisorError(ErrorCode.WORKER_EXITED, 'pty host is shut down')),
      failing('/died', new SupervisorError(ErrorCode.CHANNEL_CLOSED, "'write' failed: channel 'pty' closed: peer closed its stream (process exited?)")),
      failing('/slow', new SupervisorError(ErrorCode.REQUEST_TIMEOUT, "'readScreen' on 'pty' timed out after 30000 ms")),
      failing('/bug', new TypeError('cannot read properties of undefined')),
    ],
    limits: () => ({ maxBodyBytes: 1024, requestTimeoutMs: 10_000 }),
    auth: testTcpAuth(),
    onHandlerError: (err) => handlerErrors.push(err),
  });
  let binding: UnixBinding;
  const get = (path: string) => httpRequest({ socketPath: binding.path, method: 'GET', path });

  before(async () => {
    binding = await bindUnix(server.createApp('socket').app, join(work, 's.sock'));
  });
  after(() => {
    closeUnix(binding);
    rmSync(work, { recursive: true, force: true });
  });

  it('maps worker failures to 503/504 with the message, and only a real bug to a logged 500', async () => {
    const budget = await get('/budget');
    assert.equal(budget.status, 503);
    assert.equal(budget.headers['retry-after'], '42');
    assert.deepEqual(budget.json(), { error: 'pty host started 5 times in the last minute; next try in 42s', code: 'unavailable' });

    const shut = await get('/shut');
    assert.equal(shut.status, 503);
    assert.equal(shut.headers['retry-after'], undefined);

    const died = await get('/died');
    assert.equal(died.status, 503, 'a request whose worker died under it');
    assert.equal(died.headers['retry-after'], '1', 'the worker is being restarted: try again shortly');
    assert.match(died.json().error, /closed: peer closed its stream/);

    assert.equal((await get('/slow')).status, 504);
    assert.deepEqual(handlerErrors, [], 'none of these is a handler failure');

    assert.equal((await get('/bug')).status, 500);
    assert.equal(handlerErrors.length, 1);
  });
});
