/** Response compression: brotli or gzip for bodies over 860 bytes, when the client accepts it. */
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';

/** Bodies of this size or smaller go out as they are. */
export const COMPRESSION_MIN_BYTES = 860;
/** Brotli's default quality (11) costs ~10x quality 4 for a few % size; responses are small JSON. */
const BROTLI_QUALITY = 4;

export type Encoding = 'br' | 'gzip';

/**
 * Picks br over gzip when both are accepted; honours `;q=0` refusals. `*` stands for gzip (the coding
 * every client decodes) unless gzip is listed by name, as RFC 9110 has `*` cover only unlisted codings.
 */
export function negotiateEncoding(acceptEncoding: string | undefined): Encoding | null {
  if (!acceptEncoding) return null;
  let br = false;
  let gzip: boolean | undefined;
  let star = false;
  for (const part of acceptEncoding.split(',')) {
    const [rawName = '', ...paramsList] = part.toLowerCase().split(';');
    const name = rawName.trim();
    const accepted = !paramsList.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
    if (name === 'br') br = accepted;
    else if (name === 'gzip') gzip = accepted;
    else if (name === '*') star = accepted;
  }
  if (br) return 'br';
  if (gzip ?? star) return 'gzip';
  return null;
}

/**
 * Bodies above this are compressed on libuv's thread pool instead of the event loop: brotli at
 * quality 4 takes about 4 ms per MB here, so a 20 MB diff would hold every stream for ~80 ms.
 */
export const ASYNC_COMPRESSION_MIN_BYTES = 256 * 1024;

const brotliOptions = (size: number) => ({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: size } });
const GZIP_OPTIONS = { level: 6 };

export type Compressed = { body: Buffer; encoding: Encoding } | null;

/** Compresses when worth it; returns null to send the body as it is. For bodies up to ASYNC_COMPRESSION_MIN_BYTES. */
export function maybeCompress(body: Buffer, acceptEncoding: string | undefined): Compressed {
  if (body.length <= COMPRESSION_MIN_BYTES) return null;
  const encoding = negotiateEncoding(acceptEncoding);
  if (!encoding) return null;
  const out = encoding === 'br' ? brotliCompressSync(body, brotliOptions(body.length)) : gzipSync(body, GZIP_OPTIONS);
  return out.length < body.length ? { body: out, encoding } : null;
}

/** maybeCompress off the event loop, for big bodies. A failure sends the body as it is. */
export function maybeCompressAsync(body: Buffer, acceptEncoding: string | undefined): Promise<Compressed> {
  const encoding = negotiateEncoding(acceptEncoding);
  if (!encoding || body.length <= COMPRESSION_MIN_BYTES) return Promise.resolve(null);
  return new Promise((resolve) => {
    const done = (err: Error | null, out: Buffer) => resolve(!err && out.length < body.length ? { body: out, encoding } : null);
    if (encoding === 'br') brotliCompress(body, brotliOptions(body.length), done);
    else gzip(body, GZIP_OPTIONS, done);
  });
}
