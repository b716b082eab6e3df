import assert from 'node:assert/strict';
import { test } from 'node:test';

import { defaultConfig } from '../../../../supervisor/config/normalize.js';
import { BRIDGE_LONG_OP_WAIT_MS, CONFIRM_TIMEOUT_ENV, CONFIRM_TIMEOUT_MS, confirmTimeoutFromEnv } from '../../../../supervisor/mcp/deadlines.js';

test('request_timeout_beats_every_in_handler_deadline: 300 s confirm < 301 s request timeout < 305 s bridge wait', () => {
  const requestTimeoutMs = defaultConfig().services.server.request_timeout_ms;
  assert.equal(CONFIRM_TIMEOUT_MS, 300_000);
  assert.equal(requestTimeoutMs, 301_000);
  assert.equal(BRIDGE_LONG_OP_WAIT_MS, 305_000);
  assert.ok(CONFIRM_TIMEOUT_MS < requestTimeoutMs, 'the handler must answer before the HTTP layer sends a bare 408');
  assert.ok(requestTimeoutMs < BRIDGE_LONG_OP_WAIT_MS, 'the bridge must outwait the server');
});

test('TUIC_CONFIRM_TIMEOUT_MS shortens the confirm window; bad values are refused with the variable named', () => {
  assert.equal(confirmTimeoutFromEnv({}), CONFIRM_TIMEOUT_MS);
  assert.equal(confirmTimeoutFromEnv({ [CONFIRM_TIMEOUT_ENV]: '' }), CONFIRM_TIMEOUT_MS);
  assert.equal(confirmTimeoutFromEnv({ [CONFIRM_TIMEOUT_ENV]: '250' }), 250);
  for (const bad of ['0', '-5', '1.5', 'soon', '300001']) {
    assert.throws(() => confirmTimeoutFromEnv({ [CONFIRM_TIMEOUT_ENV]: bad }), /TUIC_CONFIRM_TIMEOUT_MS must be an integer between 1 and 300000/);
  }
});
