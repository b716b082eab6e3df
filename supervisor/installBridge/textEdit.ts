/**
 * Line-level text edits shared by the config editors. Each insertion has an exact inverse here, so an
 * install followed by an uninstall gives back the file's original bytes, including a missing final newline.
 */

export type Eol = '\n' | '\r\n';

/** The file's own line ending, so added lines match the rest. */
export function detectEol(text: string): Eol {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/** Offset of the start of the line holding `pos`. */
export function lineStart(text: string, pos: number): number {
  return text.lastIndexOf('\n', pos - 1) + 1;
}

/** `pos` if it starts a line, else the start of the next line (or the end of the text). */
export function nextLineStart(text: string, pos: number): number {
  if (pos === 0 || text[pos - 1] === '\n') return pos;
  const nl = text.indexOf('\n', pos);
  return nl === -1 ? text.length : nl + 1;
}

/** The whitespace that starts the line holding `pos`. */
export function indentAt(text: string, pos: number): string {
  const start = lineStart(text, pos);
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** Whether only blanks stand between the start of the line and `pos`. */
export function startsOwnLine(text: string, pos: number): boolean {
  return /^[ \t]*$/.test(text.slice(lineStart(text, pos), pos));
}

/**
 * Appends whole lines at the end. A file without a final newline keeps that style: the block gets a
 * newline before it and none after, which removeLines() undoes exactly. `separated` puts a blank line
 * between the old text and the block (TOML tables read better that way).
 */
export function appendLines(text: string, lines: readonly string[], eol: Eol, separated: boolean): string {
  const block = lines.join(eol);
  if (text === '') return block + eol;
  const sep = separated ? eol : '';
  return text.endsWith('\n') ? text + sep + block + eol : text + eol + sep + block;
}

/** Inserts whole lines at `pos`, which must start a line or be the end of the text. */
export function insertLines(text: string, pos: number, lines: readonly string[], eol: Eol): string {
  if (pos >= text.length) return appendLines(text, lines, eol, false);
  return text.slice(0, pos) + lines.join(eol) + eol + text.slice(pos);
}

/**
 * Removes the whole lines in [start, end) (start a line start; end a line start or the end of the
 * text), undoing appendLines()/insertLines(): the separating blank line of a `separated` block goes
 * with it, and a block that ended the file without a newline takes the newline added before it.
 */
export function removeLines(text: string, start: number, end: number, eol: Eol, separated: boolean): string {
  let before = text.slice(0, start);
  let after = text.slice(end);
  if (after === '') {
    if (separated && before.endsWith(eol + eol)) before = before.slice(0, -eol.length);
    if (!text.endsWith('\n') && before.endsWith(eol)) before = before.slice(0, -eol.length);
    return before;
  }
  if (separated && (before === '' || before.endsWith(eol + eol)) && after.startsWith(eol)) after = after.slice(eol.length);
  return before + after;
}

/** Replaces [start, end) with `insert`. */
export function splice(text: string, start: number, end: number, insert = ''): string {
  return text.slice(0, start) + insert + text.slice(end);
}
