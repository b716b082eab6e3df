import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { corsHeaders, preflightHeaders } from '../../../supervisor/http/cors.js';

const LOCAL = ['http://localhost', 'http://127.0.0.1', 'http://localhost:1421', 'http://127.0.0.1:5173', 'tauri://localhost', 'https://tauri.localhost'];
const FOREIGN = [
  'https://evil.example',
  'http://localhost.evil.example',
  'http://localhost:1421.evil.example',
  'http://127.0.0.1.nip.io',
  'https://localhost:1421',
  'http://localhost:',
  'http://localhost:abc',
  'http://[::1]:1421',
  'tauri://evil',
  'null',
];

describe('corsHeaders on the socket listener', () => {
  for (const origin of LOCAL) {
    it(`admits ${origin} and echoes it with Vary: Origin`, () => {
      assert.deepEqual(corsHeaders('socket', origin), {
        'Access-Control-Allow-Origin': origin,
        Vary: 'Origin',
        'Access-Control-Expose-Headers': 'Mcp-Session-Id',
      });
    });
  }

  it('adds nothing for foreign origins', () => {
    for (const origin of FOREIGN) assert.deepEqual(corsHeaders('socket', origin), {}, origin);
  });

  it('adds nothing without an Origin', () => {
    assert.deepEqual(corsHeaders('socket', undefined), {});
    assert.deepEqual(corsHeaders('socket', ''), {});
  });
});

describe('corsHeaders on the tcp listener', () => {
  it('echoes the origin the request guard let through, with credentials, never *', () => {
    // The guard (requestGuard.ts) refuses every other origin before an answer is built.
    for (const origin of ['http://127.0.0.1:9876', 'https://phone.example']) {
      assert.deepEqual(corsHeaders('tcp', origin), {
        'Access-Control-Allow-Origin': origin,
        Vary: 'Origin',
        'Access-Control-Allow-Credentials': 'true',
        'Access-Control-Expose-Headers': 'Mcp-Session-Id',
      });
    }
  });

  it('adds nothing without an Origin, or with an empty one', () => {
    assert.deepEqual(corsHeaders('tcp', undefined), {});
    assert.deepEqual(corsHeaders('tcp', ''), {});
  });
});

describe('preflightHeaders', () => {
  it('adds methods, headers and max-age for an admitted socket origin', () => {
    const h = preflightHeaders('socket', 'http://localhost:1421');
    assert.equal(h['Access-Control-Allow-Origin'], 'http://localhost:1421');
    assert.equal(h['Vary'], 'Origin');
    assert.equal(h['Access-Control-Allow-Methods'], 'GET, POST, PUT, DELETE');
    const allowed = h['Access-Control-Allow-Headers']!.split(', ');
    for (const name of ['Authorization', 'Content-Type', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID']) assert.ok(allowed.includes(name), name);
    assert.equal(h['Access-Control-Max-Age'], '600');
  });

  it('answers a tcp preflight by echoing the (guard-approved) origin', () => {
    const h = preflightHeaders('tcp', 'https://phone.example');
    assert.equal(h['Access-Control-Allow-Origin'], 'https://phone.example');
    assert.equal(h['Access-Control-Allow-Methods'], 'GET, POST, PUT, DELETE');
    assert.equal(h['Access-Control-Max-Age'], '600');
  });

  it('adds nothing for a foreign socket origin or a missing Origin', () => {
    assert.deepEqual(preflightHeaders('socket', 'https://evil.example'), {});
    assert.deepEqual(preflightHeaders('socket', undefined), {});
    assert.deepEqual(preflightHeaders('tcp', undefined), {});
  });
});
