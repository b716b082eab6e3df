/** HTTP/1.1 response framing for the raw load generators: where one keep-alive response ends. */

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** Length of the complete response at the start of `buf`, or 0 while more bytes are needed. */
export function responseLength(buf: Buffer): number {
  const headerEnd = buf.indexOf(CRLFCRLF);
  if (headerEnd < 0) return 0;
  const bodyStart = headerEnd + 4;
  const head = buf.toString('latin1', 0, headerEnd).toLowerCase();
  const cl = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (cl) return buf.length >= bodyStart + Number(cl[1]) ? bodyStart + Number(cl[1]) : 0;
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) return chunkedLength(buf, bodyStart);
  return bodyStart; // no body (e.g. 204/304)
}

function chunkedLength(buf: Buffer, start: number): number {
  let at = start;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at, 'latin1');
    if (lineEnd < 0) return 0;
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error('bad chunk size');
    at = lineEnd + 2 + size + 2;
    if (size === 0) return buf.length >= at ? at : 0; // no trailers expected
    if (buf.length < at) return 0;
  }
}
