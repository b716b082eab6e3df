/**
 * Output watcher patterns (POST /api/plugins/output-watchers), compiled the same way where they are
 * checked (the supervisor, answering `rejected`) and where they run (the pty host, on every line).
 *
 * A client's regular expression must not be able to hang the pty host. V8's backtracking engine
 * can take exponential time on a pattern like `(a+)+$`; its linear-time engine cannot, but is ~100x
 * slower on ordinary patterns. So a pattern is accepted only if the linear engine can run it (no
 * backreferences, no lookaround, no huge counted repetitions: the same refusals as the Rust regex
 * crate the original used), and then runs on the fast engine with V8's own safety net switched on
 * in the pty host: past a backtrack budget, a match is re-run on the linear engine. The `i` flag is
 * one the linear engine refuses, so a case-insensitive pattern is rewritten to match both cases of
 * each letter and runs without it.
 */
import { setFlagsFromString } from 'node:v8';

export const WatcherPatternLimits = {
  PATTERN_CHARS: 1024,
  /** The flags a watcher may carry: case-insensitive, multi-line, dot-all. */
  FLAGS: 'ims',
} as const;

let linearEngine = false;
let fallback = false;

/** Makes the `l` (linear) flag available; it changes nothing for a pattern compiled without it. */
function enableLinearEngine(): void {
  if (linearEngine) return;
  setFlagsFromString('--enable-experimental-regexp-engine');
  linearEngine = true;
}

/**
 * The safety net, set once the first client pattern arrives (a watcher in the pty host, a wait_for
 * pattern in the supervisor): any pattern that backtracks too much falls back to the linear engine.
 * Not set before, so a process that never runs one runs as it always did.
 */
export function enableBacktrackFallback(): void {
  if (fallback) return;
  enableLinearEngine();
  setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
  fallback = true;
}

/** The compiled watcher, or why it is refused. */
export function compileWatcherPattern(pattern: string, flags: string): RegExp | string {
  if (pattern.length === 0) return 'empty pattern';
  if (pattern.length > WatcherPatternLimits.PATTERN_CHARS) return `pattern longer than ${WatcherPatternLimits.PATTERN_CHARS} characters`;
  for (let i = 0; i < flags.length; i++) {
    if (!WatcherPatternLimits.FLAGS.includes(flags[i]!) || flags.indexOf(flags[i]!) !== i) return `flags must combine i, m and s, got '${flags}'`;
  }
  try {
    new RegExp(pattern, flags);
  } catch (err) {
    return (err as Error).message;
  }
  const source = flags.includes('i') ? foldCase(pattern) : pattern;
  const rest = flags.replace('i', '');
  enableLinearEngine();
  try {
    new RegExp(source, `${rest}l`);
  } catch {
    return 'cannot be matched in linear time (backreferences, lookaround and large counted repetitions are refused)';
  }
  return new RegExp(source, rest);
}

/** The other case of a single letter, or the character itself. */
function otherCase(c: string): string {
  const upper = c.toUpperCase();
  const lower = c.toLowerCase();
  if (upper.length !== 1 || lower.length !== 1) return c;
  return c === upper ? lower : upper;
}

const isAsciiLetter = (c: string | undefined): boolean => c !== undefined && /^[A-Za-z]$/.test(c);

/** Where the escape starting at `i` (a backslash) ends: `\p{..}`, `\k<..>`, `\uXXXX`, `\xXX`, `\cX`, or one character. */
function escapeEnd(p: string, i: number): number {
  const next = p[i + 1];
  if ((next === 'p' || next === 'P') && p[i + 2] === '{') return closeAt(p, i, '}');
  if (next === 'k' && p[i + 2] === '<') return closeAt(p, i, '>');
  if (next === 'u') return Math.min(p.length, i + 6);
  if (next === 'x') return Math.min(p.length, i + 4);
  if (next === 'c') return Math.min(p.length, i + 3);
  return Math.min(p.length, i + 2);
}

function closeAt(p: string, i: number, close: string): number {
  const at = p.indexOf(close, i);
  return at < 0 ? p.length : at + 1;
}

/**
 * `pattern` rewritten to match what it matches with the `i` flag, without it: each letter `a`
 * becomes `[aA]`, a class gains the other case of its letters and of its ASCII letter ranges.
 * Escapes and group names are kept as written. Approximate only where `i` folds beyond one
 * character to one character (`ß`), or in non-ASCII ranges.
 */
export function foldCase(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const end = escapeEnd(pattern, i);
      out += pattern.slice(i, end);
      i = end - 1;
      continue;
    }
    if (inClass) {
      if (c === ']') {
        inClass = false;
        out += c;
        continue;
      }
      const hi = pattern[i + 2];
      if (pattern[i + 1] === '-' && hi !== undefined && hi !== ']' && hi !== '\\') {
        out += `${c}-${hi}`;
        if (isAsciiLetter(c) && isAsciiLetter(hi) && (c === c.toLowerCase()) === (hi === hi.toLowerCase())) out += `${otherCase(c)}-${otherCase(hi)}`;
        i += 2;
        continue;
      }
      const o = otherCase(c);
      out += o === c ? c : c + o;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (pattern[i + 1] === '^') {
        out += '^';
        i++;
      }
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const named = pattern[i + 2] === '<' && pattern[i + 3] !== '=' && pattern[i + 3] !== '!';
      const end = named ? closeAt(pattern, i, '>') : i + 2;
      out += pattern.slice(i, end);
      i = end - 1;
      continue;
    }
    const o = otherCase(c);
    out += o === c ? c : `[${c}${o}]`;
  }
  return out;
}
