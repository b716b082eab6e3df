/**
 * Terminal column width of a code point (wcwidth): 0 for combining marks and format characters, 2 for
 * East Asian Wide/Fullwidth and emoji presentation, 1 otherwise. Apps position the cursor by the same
 * rule, so the grid must agree with them more than with any one standard.
 */

/** East Asian Wide and Fullwidth blocks (the wcwidth table xterm and glibc share). */
const WIDE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2329, 0x232a],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f200, 0x1f2ff],
  [0x20000, 0x2fffd],
  [0x30000, 0x3fffd],
];

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
/** Emoji drawn as pictures (✅, 🚀): two columns in every current terminal and in string-width. */
const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}$/u;

/** Widths of the BMP, computed on first use: 0 = not yet known, else width + 1. */
const bmpCache = new Uint8Array(0x10000);

function compute(cp: number): number {
  const ch = String.fromCodePoint(cp);
  if (ZERO_WIDTH.test(ch)) return 0;
  if (EMOJI_PRESENTATION.test(ch)) return 2;
  for (const [lo, hi] of WIDE_RANGES) {
    if (cp < lo) break;
    if (cp <= hi) return 2;
  }
  return 1;
}

/** Columns `cp` takes; C0/C1 controls never reach here (the parser handles them). */
export function charWidth(cp: number): number {
  if (cp < 0x300) return 1;
  if (cp < 0x10000) {
    const cached = bmpCache[cp]!;
    if (cached !== 0) return cached - 1;
    const w = compute(cp);
    bmpCache[cp] = w + 1;
    return w;
  }
  return compute(cp);
}
