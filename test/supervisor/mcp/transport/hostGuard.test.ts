// DNS-rebinding checks, by rule: hosts we answer to, malformed Host values, origins.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { HostGuard, hostOf } from '../../../../supervisor/mcp/hostGuard.js';

describe('HostGuard', () => {
  const guard = new HostGuard({ machineNames: ['devbox', 'devbox.local'], boundHost: () => 'tuic.internal' });

  it('parses Host values with ports and IPv6 brackets', () => {
    assert.equal(hostOf('LocalHost:9876'), 'localhost');
    assert.equal(hostOf('[::1]:80'), '::1');
    assert.equal(hostOf('[::1]'), '::1');
    assert.equal(hostOf('a:b'), null);
    assert.equal(hostOf('[::1'), null);
    assert.equal(hostOf(''), null);
  });

  it('accepts IP literals, localhost, the machine names and the bound host', () => {
    for (const host of ['127.0.0.1', '10.0.0.7:1', '[fe80::1]:9', 'localhost:5', 'DEVBOX', 'devbox.local:9876', 'tuic.internal:9876', 'localhost.']) {
      assert.equal(guard.check({ host }), null, host);
    }
  });

  it('refuses foreign, missing and malformed Hosts', () => {
    for (const host of ['evil.example.com', 'localhost.evil.com', '127.0.0.1.nip.io', 'devbox.evil', 'a:b:c']) {
      assert.match(guard.check({ host }) ?? '', /^Invalid Host header: /, host);
    }
    assert.equal(guard.check({}), 'Invalid Host header: missing');
  });

  it('ignores a wildcard bind address as a name', () => {
    const wildcard = new HostGuard({ machineNames: [], boundHost: () => '0.0.0.0' });
    assert.equal(wildcard.check({ host: '0.0.0.0' }), null, 'still an IP literal');
    assert.notEqual(wildcard.check({ host: 'somehost' }), null);
  });

  it('checks Origin by the same names, plus the bundled WebView origins', () => {
    const host = 'localhost:9876';
    for (const origin of ['http://localhost:1421', 'https://127.0.0.1', 'tauri://localhost', 'https://tauri.localhost', 'http://devbox:3000', 'http://[::1]:8080']) {
      assert.equal(guard.check({ host, origin }), null, origin);
    }
    for (const origin of ['http://evil.example.com', 'null', 'not a url', 'file:///etc/passwd']) {
      assert.match(guard.check({ host, origin }) ?? '', /^Invalid Origin header: /, origin);
    }
  });
});
