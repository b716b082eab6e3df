// The TCP request guard's rules on their own: which Host and Origin headers pass.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { hostOf, normalizeOrigin, RequestGuard } from '../../../supervisor/http/requestGuard.js';

function guard(allowedHosts: string[] = [], allowedOrigins: string[] = [], boundHost: string | null = '0.0.0.0'): RequestGuard {
  const settings = { allowedHosts, allowedOrigins };
  return new RequestGuard({
    settings: () => settings,
    boundHost: () => boundHost,
    machineNames: ['devbox', 'devbox.local'],
    machineAddresses: () => ['192.168.1.20', 'fe80::1%eth0', '::ffff:10.0.0.7'],
  });
}

describe('RequestGuard', () => {
  it('parses Host values strictly', () => {
    assert.equal(hostOf('LocalHost:9876'), 'localhost');
    assert.equal(hostOf('[::1]:9876'), '::1');
    assert.equal(hostOf('devbox.'), 'devbox');
    for (const bad of ['', 'a b', 'evil.example@127.0.0.1', '127.0.0.1:99999x', '[nothex]:1', 'x/y', 'host:']) assert.equal(hostOf(bad), null, bad);
  });

  it('lets loopback, this machine’s names and addresses through; refuses other names and literals', () => {
    const g = guard();
    for (const host of [
      '127.0.0.1:9876',
      '127.8.9.1',
      'localhost',
      'app.localhost:9876',
      '[::1]:9876',
      'devbox:9876',
      'DEVBOX.local',
      '192.168.1.20:9876',
      '10.0.0.7',
      '[fe80::1]:9876',
    ]) {
      assert.equal(g.check({ host }), null, host);
    }
    for (const host of ['evil.example', 'evil.example:9876', '203.0.113.5:9876', '192.168.1.21', 'localhost.evil.example', '[::2]:9876']) {
      const r = g.check({ host });
      assert.equal(r?.header, 'Host', host);
      assert.match(r!.message, /Host not allowed/);
    }
  });

  it('refuses a missing, malformed or repeated Host', () => {
    const g = guard();
    assert.match(g.check({})!.message, /missing/);
    assert.match(g.check({ host: 'a b' })!.message, /malformed/);
    assert.match(g.check({ host: '127.0.0.1' }, true)!.message, /repeated/);
  });

  it('allows configured hosts (case-insensitive) and the bound host', () => {
    assert.equal(guard(['Box.tailnet.ts.net']).check({ host: 'box.tailnet.ts.net:9876' }), null);
    assert.equal(guard([], [], 'tuic.lan').check({ host: 'tuic.lan:9876' }), null);
    assert.notEqual(guard([], [], '0.0.0.0').check({ host: 'tuic.lan:9876' }), null);
  });

  it('lets an Origin through only when it is the request’s own, or configured; IP literals are no exception', () => {
    const g = guard([], ['https://phone.example']);
    assert.equal(g.check({ host: '127.0.0.1:9876', origin: 'http://127.0.0.1:9876' }), null);
    assert.equal(g.check({ host: '127.0.0.1:9876', origin: 'https://127.0.0.1:9876' }), null, 'behind a TLS proxy');
    assert.equal(g.check({ host: 'localhost', origin: 'http://localhost' }), null);
    assert.equal(g.check({ host: 'localhost:80', origin: 'http://localhost' }), null, 'default port');
    assert.equal(g.check({ host: '127.0.0.1:9876', origin: 'https://PHONE.example' }), null, 'configured');
    for (const origin of [
      'http://evil.example',
      'http://203.0.113.5',
      'http://127.0.0.1:9877',
      'http://localhost:9876',
      'null',
      'file://',
      'http://127.0.0.1:9876/path',
      'tauri://localhost',
      '',
    ]) {
      const r = g.check({ host: '127.0.0.1:9876', origin });
      assert.equal(r?.header, 'Origin', origin);
    }
  });

  it('quotes at most 200 characters of a refused header', () => {
    const r = guard().check({ host: 'a'.repeat(100_000) + '.example' })!;
    assert.ok(r.message.length < 400, `${r.message.length} characters`);
  });

  it('normalizes origins as browsers send them', () => {
    assert.equal(normalizeOrigin('HTTP://Example.COM:80'), 'http://example.com');
    assert.equal(normalizeOrigin('https://example.com:8443'), 'https://example.com:8443');
    assert.equal(normalizeOrigin('null'), null);
    assert.equal(normalizeOrigin('ftp://example.com'), null);
  });
});
