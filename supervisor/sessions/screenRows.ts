/** The current screen as served to clients: rows without the empty ones below the last text. */
export function trimTrailingEmpty(rows: readonly string[]): string[] {
  let end = rows.length;
  while (end > 0 && rows[end - 1] === '') end--;
  return rows.slice(0, end);
}
