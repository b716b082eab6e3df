import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { COMPRESSION_MIN_BYTES, maybeCompress, negotiateEncoding } from '../../../supervisor/http/compression.js';

/** Compressible JSON-ish text of exactly `n` bytes. */
function text(n: number): Buffer {
  return Buffer.from('{"key":"value","n":1},'.repeat(Math.ceil(n / 22)).slice(0, n));
}

describe('negotiateEncoding', () => {
  it('has no encoding without a header or with unknown codings', () => {
    assert.equal(negotiateEncoding(undefined), null);
    assert.equal(negotiateEncoding(''), null);
    assert.equal(negotiateEncoding('identity'), null);
    assert.equal(negotiateEncoding('deflate, zstd'), null);
  });

  it('picks br over gzip whatever the order', () => {
    assert.equal(negotiateEncoding('gzip, br'), 'br');
    assert.equal(negotiateEncoding('br, gzip'), 'br');
    assert.equal(negotiateEncoding('gzip, deflate, br, zstd'), 'br');
    assert.equal(negotiateEncoding('gzip'), 'gzip');
    assert.equal(negotiateEncoding('br'), 'br');
  });

  it('is case-insensitive and tolerates whitespace', () => {
    assert.equal(negotiateEncoding('GZIP'), 'gzip');
    assert.equal(negotiateEncoding('  Br  ;q=1'), 'br');
    assert.equal(negotiateEncoding('gzip ; q=0.5'), 'gzip');
  });

  it('honours q=0 refusals (0, 0.0, 0.000) but not small positive weights', () => {
    assert.equal(negotiateEncoding('br;q=0, gzip'), 'gzip');
    assert.equal(negotiateEncoding('br;q=0.0, gzip;q=0.000'), null);
    assert.equal(negotiateEncoding('br; q=0'), null);
    assert.equal(negotiateEncoding('br ;q=0, gzip'), 'gzip');
    assert.equal(negotiateEncoding('br;q=0.001'), 'br');
    assert.equal(negotiateEncoding('gzip;q=0.5, br;q=0.1'), 'br');
  });

  it('reads * as gzip unless gzip itself is listed or * is refused', () => {
    assert.equal(negotiateEncoding('*'), 'gzip');
    assert.equal(negotiateEncoding('br;q=0, *'), 'gzip');
    assert.equal(negotiateEncoding('*;q=0'), null);
    assert.equal(negotiateEncoding('*;q=0, br'), 'br');
    // `*` only covers codings not named: an explicit gzip refusal stands, in either order.
    assert.equal(negotiateEncoding('gzip;q=0, *'), null);
    assert.equal(negotiateEncoding('*, gzip;q=0'), null);
    assert.equal(negotiateEncoding('*;q=0, gzip'), 'gzip');
  });
});

describe('maybeCompress', () => {
  it('leaves bodies of the threshold or less alone, compresses one byte more', () => {
    assert.equal(COMPRESSION_MIN_BYTES, 860);
    assert.equal(maybeCompress(text(860), 'gzip, br'), null);
    assert.equal(maybeCompress(text(10), 'gzip, br'), null);
    const out = maybeCompress(text(861), 'gzip, br');
    assert.ok(out);
    assert.equal(out.encoding, 'br');
  });

  it('does nothing when the client accepts no supported coding', () => {
    assert.equal(maybeCompress(text(5000), undefined), null);
    assert.equal(maybeCompress(text(5000), 'identity'), null);
    assert.equal(maybeCompress(text(5000), 'br;q=0, gzip;q=0'), null);
  });

  it('returns br output that decompresses back to the body, and smaller', () => {
    const body = text(20_000);
    const out = maybeCompress(body, 'br');
    assert.ok(out);
    assert.equal(out.encoding, 'br');
    assert.ok(out.body.length < body.length / 4, `br ${out.body.length} bytes`);
    assert.deepEqual(brotliDecompressSync(out.body), body);
  });

  it('returns gzip output that decompresses back to the body, and smaller', () => {
    const body = text(20_000);
    const out = maybeCompress(body, 'gzip');
    assert.ok(out);
    assert.equal(out.encoding, 'gzip');
    assert.ok(out.body.length < body.length / 4, `gzip ${out.body.length} bytes`);
    assert.deepEqual(gunzipSync(out.body), body);
  });

  it('sends incompressible random data as it is', () => {
    const body = randomBytes(4096);
    assert.equal(maybeCompress(body, 'br'), null);
    assert.equal(maybeCompress(body, 'gzip'), null);
  });
});
