/** Response compression: brotli or gzip for bodies over the spec's threshold, when the client accepts it. */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** The spec's CompressionLayer threshold: smaller bodies go out as they are. */
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

/** Compresses when worth it; returns null to send the body as it is. */
export function maybeCompress(body: Buffer, acceptEncoding: string | undefined): { body: Buffer; encoding: Encoding } | null {
  if (body.length <= COMPRESSION_MIN_BYTES) return null;
  const encoding = negotiateEncoding(acceptEncoding);
  if (!encoding) return null;
  const out =
    encoding === 'br'
      ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
      : gzipSync(body, { level: 6 });
  return out.length < body.length ? { body: out, encoding } : null;
}
