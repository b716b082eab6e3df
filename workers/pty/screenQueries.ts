/**
 * Questions a client asks about the current screen (GET /sessions/:id/terminal/*): the logical line
 * a row belongs to (the rows auto-wrap joined), the text of a selection, the OSC 8 hyperlink under a
 * cell, and the kitty keyboard flags in force. Rows and columns are the screen's, 0-based; text
 * leaves redacted, as every text of the terminal does.
 */
import { redactSecrets } from '../../shared/redactor.js';
import type { ParamsOf, ResultOf } from '../../shared/protocol/defineProtocol.js';
import type { PtyProtocolT } from '../../shared/protocol/pty.js';
import type { ScreenGrid } from './screenGrid.js';

export type ScreenQuery = ParamsOf<PtyProtocolT, 'screenQuery'>['query'];
export type ScreenAnswer = ResultOf<PtyProtocolT, 'screenQuery'>;

export function answerScreenQuery(grid: ScreenGrid, q: ScreenQuery): ScreenAnswer {
  switch (q.kind) {
    case 'kitty_flags':
      return { kitty_flags: grid.kittyFlags };
    case 'logical_line':
      return q.row >= grid.rows ? { retained: false } : logicalLine(grid, q.row);
    case 'hyperlink':
      return q.row >= grid.rows || q.col >= grid.cols ? { link: null } : { link: hyperlinkSpan(grid, q.row, q.col) };
    case 'selection':
      return q.start_row >= grid.rows || q.end_row >= grid.rows ? { retained: false } : { text: selectionText(grid, q) };
  }
}

function logicalLine(grid: ScreenGrid, row: number): ScreenAnswer {
  let start = row;
  while (start > 0 && grid.isWrapped(start)) start--;
  let text = grid.rowText(start);
  for (let y = start + 1; y < grid.rows && grid.isWrapped(y); y++) text += grid.rowText(y);
  return { start_row: start, text: redactSecrets(text.trimEnd()) };
}

/** The run of cells around (row, col) printed under the same link: [first col, last col, URI]. */
function hyperlinkSpan(grid: ScreenGrid, row: number, col: number): { start_col: number; end_col: number; url: string } | null {
  const url = grid.linkAt(row, col);
  if (url === null) return null;
  let start = col;
  while (start > 0 && grid.linkAt(row, start - 1) === url) start--;
  let end = col;
  while (end + 1 < grid.cols && grid.linkAt(row, end + 1) === url) end++;
  return { start_col: start, end_col: end, url };
}

/**
 * From (start_row, start_col) up to, not including, (end_row, end_col), in reading order whichever
 * end came first; rows joined by a newline unless the second wrapped from the first, each line's
 * trailing blanks dropped.
 */
function selectionText(grid: ScreenGrid, q: { start_row: number; start_col: number; end_row: number; end_col: number }): string {
  let [r0, c0, r1, c1] = [q.start_row, q.start_col, q.end_row, q.end_col];
  if (r1 < r0 || (r1 === r0 && c1 < c0)) [r0, c0, r1, c1] = [r1, c1, r0, c0];
  let out = '';
  let line = '';
  for (let y = r0; y <= r1; y++) {
    if (y > r0 && !grid.isWrapped(y)) {
      out += `${line.trimEnd()}\n`;
      line = '';
    }
    const from = y === r0 ? Math.min(c0, grid.cols) : 0;
    const to = y === r1 ? Math.min(c1, grid.cols) : grid.cols;
    for (let x = from; x < to; x++) line += grid.cellText(y, x);
  }
  return redactSecrets(out + line.trimEnd());
}
