import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackIp, normalizeIp } from '../../../supervisor/http/remoteAddress.js';

describe('normalizeIp', () => {
  it('turns IPv4-mapped IPv6 in every spelling into dotted IPv4', () => {
    const cases: Array<[string, string]> = [
      // uWS prints the 8 groups without leading zeros
      ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1'],
      ['0:0:0:0:0:ffff:c0a8:10a', '192.168.1.10'],
      ['0000:0000:0000:0000:0000:ffff:0a00:0001', '10.0.0.1'],
      ['0:0:0:0:0:FFFF:CB00:7107', '203.0.113.7'],
      ['::ffff:127.0.0.1', '127.0.0.1'],
      ['::FFFF:192.168.1.10', '192.168.1.10'],
      ['0:0:0:0:0:ffff:203.0.113.7', '203.0.113.7'],
      ['::ffff:7f00:1', '127.0.0.1'],
      ['::ffff:ffff:ffff', '255.255.255.255'],
    ];
    for (const [raw, want] of cases) assert.equal(normalizeIp(raw), want, raw);
  });

  it('turns the expanded IPv6 loopback into ::1', () => {
    assert.equal(normalizeIp('0:0:0:0:0:0:0:1'), '::1');
    assert.equal(normalizeIp('0000:0000:0000:0000:0000:0000:0000:0001'), '::1');
    assert.equal(normalizeIp('::1'), '::1');
  });

  it('leaves plain IPv4 and other IPv6 alone (lower-cased)', () => {
    assert.equal(normalizeIp('203.0.113.7'), '203.0.113.7');
    assert.equal(normalizeIp('2001:DB8:0:0:0:0:0:1'), '2001:db8:0:0:0:0:0:1');
    assert.equal(normalizeIp('fe80:0:0:0:0:0:0:1'), 'fe80:0:0:0:0:0:0:1');
    // Not mapped: a non-zero prefix, or a v4-compatible (::a.b.c.d) address.
    assert.equal(normalizeIp('0:0:0:0:1:ffff:7f00:1'), '0:0:0:0:1:ffff:7f00:1');
    assert.equal(normalizeIp('0:0:0:0:0:0:0:11'), '0:0:0:0:0:0:0:11');
  });
});

describe('isLoopbackIp', () => {
  it('knows 127/8 and ::1', () => {
    for (const ip of ['127.0.0.1', '127.1.2.3', '::1']) assert.equal(isLoopbackIp(ip), true, ip);
    for (const ip of ['128.0.0.1', '10.0.0.1', '::2', '1270::1', '0:0:0:0:1:ffff:7f00:1', 'unix', '']) assert.equal(isLoopbackIp(ip), false, ip);
  });

  it('sees loopback through normalizeIp for uWS spellings', () => {
    assert.equal(isLoopbackIp(normalizeIp('0:0:0:0:0:ffff:7f00:1')), true);
    assert.equal(isLoopbackIp(normalizeIp('0:0:0:0:0:0:0:1')), true);
    assert.equal(isLoopbackIp(normalizeIp('::ffff:7f00:1')), true);
    assert.equal(isLoopbackIp(normalizeIp('0:0:0:0:0:ffff:c0a8:10a')), false);
  });
});
