/**
 * The line log keeps every completed line, including those still on the screen; a tail read that
 * prints scrollback and then the screen (the session tool's `output`) would show those twice. This finds how many
 * of the log's last lines the screen already shows. A miss only costs a repeated line, never a lost one:
 * the lines dropped are exactly lines the screen rows show.
 */

/**
 * The number of trailing `logLines` that appear, in order and contiguous, among the screen's lines.
 * Screen rows of full width join the next row (a line the terminal wrapped), so a long log line still matches.
 */
export function screenOverlap(logLines: readonly string[], screenRows: readonly string[], cols: number): number {
  const screen: string[] = [];
  let pending = '';
  for (const row of screenRows) {
    pending += row;
    if (row.length >= cols) continue; // wrapped: the line goes on in the next row
    screen.push(pending.trimEnd());
    pending = '';
  }
  if (pending !== '') screen.push(pending.trimEnd());
  const log = logLines.map((l) => l.trimEnd());
  let best = 0;
  for (let end = screen.length; end > best; end--) {
    let k = 0;
    while (k < log.length && k < end && log[log.length - 1 - k] === screen[end - 1 - k]) k++;
    // Only blank lines in common says nothing about where the log meets the screen.
    if (k > best && log.slice(log.length - k).some((l) => l !== '')) best = k;
  }
  return best;
}
