/**
 * A JSON viewer's output frames: `{"type":"output","data":…[,"total_written":n]}`, each under a
 * byte cap. The text is JSON-encoded once and the encoded string is cut into frames, never inside
 * an escape sequence (`\n`, `\"`, `\u001b`) or a surrogate pair, so each cut is itself a valid JSON
 * string of a piece of the text. Encoding the whole text and halving it until each half's frame
 * fit, as before, encoded a terminal's 16 KB batch about four times: a third of the supervisor's
 * CPU in a flood.
 */

const FRAME_HEAD = '{"type":"output","data":"';
const FRAME_HEAD_BYTES = Buffer.from(FRAME_HEAD);

/**
 * Where the escape sequence covering position `cut` starts, or `cut` when none does: a backslash
 * within the 5 units before it that is not itself escaped starts one (`\uXXXX` is the longest, 6).
 * `at(k)` reads unit k (a UTF-16 unit of the encoded string, or a byte of its UTF-8: escapes are ASCII).
 */
function escapeSafeCut(at: (k: number) => number, cut: number, floor: number): number {
  for (let k = cut - 1; k >= Math.max(floor, cut - 5); k--) {
    if (at(k) !== 0x5c) continue;
    // An odd run of backslashes ending at k: the last of them starts an escape.
    let run = 1;
    while (k - run >= floor && at(k - run) === 0x5c) run++;
    if (run % 2 === 0) return cut;
    const length = at(k + 1) === 0x75 ? 6 : 2;
    return k + length > cut ? k : cut;
  }
  return cut;
}

/**
 * Frames for `text`, each strictly under `maxBytes` (which must leave room for a few escapes past
 * the framing): strings, or for text with multi-byte characters its UTF-8 bytes (sent as text
 * frames all the same: the socket would have encoded a string to exactly these bytes).
 */
export function outputFrames(text: string, totalWritten: number | undefined, maxBytes: number): Array<string | Buffer> {
  const tail = totalWritten === undefined ? '"}' : `","total_written":${totalWritten}}`;
  const json = JSON.stringify(text);
  const encoded = json.slice(1, -1);
  // Strictly under the cap: a frame of exactly 16,000 bytes is already one too many for this uWS build.
  const budget = maxBytes - 1 - FRAME_HEAD.length - tail.length;
  // A unit is at most 3 bytes: short texts need no count.
  if (encoded.length * 3 <= budget) return [FRAME_HEAD + encoded + tail];
  const size = Buffer.byteLength(encoded);
  if (size <= budget) return [FRAME_HEAD + encoded + tail];
  if (size === encoded.length) {
    const frames: string[] = [];
    // ASCII (what JSON.stringify makes of control characters is ASCII too): a unit is a byte.
    const at = (k: number): number => encoded.charCodeAt(k);
    for (let start = 0; start < encoded.length; ) {
      const end = start + budget >= encoded.length ? encoded.length : escapeSafeCut(at, start + budget, start);
      frames.push(FRAME_HEAD + encoded.slice(start, end) + tail);
      start = end;
    }
    return frames;
  }
  // Multi-byte characters: cut the UTF-8 bytes, on a character boundary (a pair of surrogates is one
  // 4-byte character there, so it is never split) and outside an escape.
  const frames: Buffer[] = [];
  const bytes = Buffer.from(encoded, 'utf8');
  const tailBytes = Buffer.from(tail);
  const at = (k: number): number => bytes[k]!;
  for (let start = 0; start < size; ) {
    let end = start + budget;
    if (end >= size) end = size;
    else {
      while ((bytes[end]! & 0xc0) === 0x80) end--;
      end = escapeSafeCut(at, end, start);
    }
    frames.push(Buffer.concat([FRAME_HEAD_BYTES, bytes.subarray(start, end), tailBytes]));
    start = end;
  }
  return frames;
}
