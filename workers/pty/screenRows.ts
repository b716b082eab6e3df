/**
 * Screen rows as text for agents: right-trimmed and redacted (everything that leaves as text is).
 * Redaction runs on logical lines (a row plus the rows it wrapped into), so a token the terminal
 * wrapped at the right margin is still seen whole; the redacted line is cut back into the same rows.
 */

import { Redactor } from '../../shared/redactor.js';

export interface RawScreenRow {
  /** The row's text, not trimmed (a wrapped row's trailing space is part of the line it continues). */
  text: string;
  /** This row continues the previous one (the terminal wrapped there, no newline was printed). */
  wrapped: boolean;
}

/**
 * One right-trimmed, redacted string per input row. `cursorRow`'s logical line is treated as
 * unfinished: a token still being printed at its end (too short yet for its rule) is hidden too, as
 * TextPipeline does for its partial line.
 */
export function redactScreenRows(rows: readonly RawScreenRow[], cursorRow: number): string[] {
  const redactor = new Redactor();
  const out = new Array<string>(rows.length);
  let start = 0;
  while (start < rows.length) {
    let end = start + 1;
    while (end < rows.length && rows[end]!.wrapped) end++;
    let joined = '';
    for (let i = start; i < end; i++) joined += rows[i]!.text;
    joined = joined.trimEnd();
    const redacted = cursorRow >= start && cursorRow < end ? redactor.peek(joined) : (redactor.line(joined) ?? '');
    if (end - start === 1) out[start] = redacted;
    else if (redacted === joined) for (let i = start; i < end; i++) out[i] = rows[i]!.text.trimEnd();
    else splitLike(redacted, rows, start, end, out);
    start = end;
  }
  return out;
}

const MARKER = /\[REDACTED:[a-z_]+\]/g;

/**
 * Cuts `text` over out[start, end) at the original rows' lengths; the last row takes any excess. A cut
 * that would fall inside a redaction marker moves past it: the row runs long rather than split a marker.
 */
function splitLike(text: string, rows: readonly RawScreenRow[], start: number, end: number, out: string[]): void {
  const markers = [...text.matchAll(MARKER)].map((m) => [m.index, m.index + m[0].length] as const);
  let from = 0;
  for (let i = start; i < end; i++) {
    let to = i === end - 1 ? text.length : Math.min(text.length, from + rows[i]!.text.length);
    for (const [a, b] of markers) if (to > a && to < b) to = b;
    out[i] = text.slice(from, to).trimEnd();
    from = to;
  }
}
