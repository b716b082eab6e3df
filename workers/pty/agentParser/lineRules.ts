/**
 * Rules for completed output lines: rate limits with their code-line guard, usage
 * notices, API and tool errors, PR links, plan files, session conflicts and the intent/suggest markers.
 * Pure functions of one line; LINE_TRIGGER finds the few lines worth running them on.
 */
import type { ParsedEvent } from '../../../shared/protocol/parsedEvents.js';

export const LineRuleConstants = {
  /** retry_after_ms when the matched text names no wait. */
  FALLBACK_RETRY_MS: 60_000,
  /** matched_text is cut to this many characters (an error line can be a whole JSON body). */
  MAX_MATCHED_CHARS: 300,
  /** Markers: shorter intent text is noise. */
  MIN_INTENT_CHARS: 4,
  MAX_INTENT_CHARS: 500,
  /** suggest: 2–4 items; the instructions ask for 3 of at most 40 characters. */
  MIN_SUGGEST_ITEMS: 2,
  MAX_SUGGEST_ITEMS: 4,
  MAX_SUGGEST_ITEM_CHARS: 80,
} as const;

/**
 * Every line rule needs one of these substrings. Scanned once over a whole batch of lines: text
 * without any (a base64 flood, a build log) costs one regex pass and no per-line work. Each
 * alternative starts at a rare character (`_`, `:`, `%`, `/`, `q`, `k`, capitals) and checks the
 * common letters around it with a lookaround: a plain alternation of the same words scanned agent
 * output 3.5x slower (irregexp tries every alternative at every letter).
 */
export const LINE_TRIGGER = new RegExp(
  [
    '_(?:limit_error|error|EXHAUSTED|requests\\/\\d)', // rate_limit_error, overloaded_error, api_error, RESOURCE_EXHAUSTED, merge_requests/
    ':(?<=(?:intent|suggest|Error|After):)', // markers, "Error:", "Retry-After:"
    '%(?= of your)', // usage notices
    'q(?:(?<=limiting req)|(?=uests per minute))|k(?=ens per minute)|f (?:extra )?usage',
    'RateLimitError|Rate Limit Exceeded|Retry[- ][Aa]fter|[TR]PM\\b|Too Many Requests|HTTP\\/?[\\d.]* 429|API (?:Error|key)|No conversation found|Unauthorized|Unable to connect|Session ID \\S+ is already in use|OAuth token|Internal server error',
    '\\/(?:pull\\/\\d|plans\\/|\\d)(?<=\\/pull\\/\\d|\\/plans\\/|attempt \\d{1,3}\\/\\d)', // PR links, plan files, "(attempt 3/10)"
  ].join('|'),
  'g',
);

interface RateRule {
  name: string;
  rx: RegExp;
  /** Fixed wait; a capture group (seconds) wins when the rule has one. */
  retryMs: number;
}

/** The rate-limit table: first match wins, in this order. */
const RATE_RULES: readonly RateRule[] = [
  { name: 'claude-http-429', rx: /rate_limit_error/i, retryMs: 60_000 },
  { name: 'claude-overloaded', rx: /overloaded_error/i, retryMs: 30_000 },
  { name: 'claude-overloaded-friendly', rx: /temporarily limiting requests/i, retryMs: 30_000 },
  { name: 'openai-http-429', rx: /RateLimitError/, retryMs: 60_000 },
  { name: 'cursor-rate-limit', rx: /User Provided API Key Rate Limit Exceeded/, retryMs: 60_000 },
  { name: 'gemini-resource-exhausted', rx: /RESOURCE_EXHAUSTED/, retryMs: 60_000 },
  { name: 'http-429', rx: /\b429\b.{0,40}Too Many Requests|Too Many Requests.{0,40}\b429\b|HTTP\/\d(?:\.\d)?\s+429\b|\bHTTP 429\b/i, retryMs: 60_000 },
  { name: 'retry-after-header', rx: /Retry-After:\s*(\d+)/i, retryMs: 60_000 },
  { name: 'openai-retry-after', rx: /Retry after (\d+) seconds?/i, retryMs: 60_000 },
  { name: 'openai-tpm-limit', rx: /tokens per minute\b.{0,80}\blimit|\bTPM\b.{0,20}\blimit|\blimit\b.{0,40}\bTPM\b/i, retryMs: 60_000 },
  { name: 'openai-rpm-limit', rx: /requests per minute\b.{0,80}\blimit|\bRPM\b.{0,20}\blimit|\blimit\b.{0,40}\bRPM\b/i, retryMs: 60_000 },
];

/** A wait named anywhere on the line (a 429 body often carries one). */
const RETRY_SECONDS = /Retry-After:\s*(\d+)|Retry after (\d+) seconds?/i;

/**
 * Lines that quote or write code rather than report an error: comments, declarations, assertions,
 * raw strings, indented quoted text, fences, bullets, tables and diff lines (the code-line guard).
 */
export function looksLikeCode(line: string): boolean {
  const trimmed = line.trimStart();
  if (/^(?:\/\/|#|fn |const |let |assert|```|~~~|[-*+] |@@|\+\+\+|---)/.test(trimmed)) return true;
  if (/^[+-]\S/.test(line)) return true;
  if (/(?:^|[\s(=,[])r#*"/.test(line)) return true; // Rust raw strings r"…" / r#"…"#
  if (line.length - trimmed.length >= 4 && /["'`]/.test(trimmed)) return true;
  return /^\|.*\|\s*$/.test(trimmed);
}

function clip(text: string): string {
  const t = text.trim();
  return t.length <= LineRuleConstants.MAX_MATCHED_CHARS ? t : t.slice(0, LineRuleConstants.MAX_MATCHED_CHARS);
}

export function matchRateLimit(line: string): Extract<ParsedEvent, { type: 'rate-limit' }> | null {
  if (looksLikeCode(line)) return null;
  for (const rule of RATE_RULES) {
    if (!rule.rx.test(line)) continue;
    const wait = RETRY_SECONDS.exec(line);
    const seconds = wait === null ? NaN : Number(wait[1] ?? wait[2]);
    const retry = Number.isFinite(seconds) ? Math.min(seconds, 86_400) * 1000 : rule.retryMs;
    return { type: 'rate-limit', pattern_name: rule.name, matched_text: clip(line), retry_after_ms: retry };
  }
  return null;
}

const USAGE = /You['’]ve used (\d{1,3})% of your (weekly|session) limit/;
const EXHAUSTED = /out of (?:extra )?usage(?:.*?·\s*resets\s+(.+?))?\s*$/i;

interface ApiRule {
  name: string;
  rx: RegExp;
  kind: 'server' | 'auth' | 'unknown';
}

const API_RULES: readonly ApiRule[] = [
  { name: 'auth-error', rx: /authentication_error|invalid x-api-key|Invalid API key|\b401\b.{0,20}Unauthorized|OAuth token has expired/i, kind: 'auth' },
  { name: 'server-error', rx: /API Error:?\s*5\d\d\b|api_error|Internal server error/i, kind: 'server' },
  { name: 'api-unreachable', rx: /unable to connect to api/i, kind: 'server' },
  { name: 'api-retrying', rx: /retrying.{0,40}attempt\s*\d+\s*\/\s*\d+/i, kind: 'server' },
  { name: 'api-error', rx: /API Error\b/, kind: 'unknown' },
];

/** A failed tool call as Claude prints it; confirmed only after a quiet spell (the parser holds it). */
export const TOOL_ERROR = /^[^A-Za-z"]*Error:\s*Exit code\s+\d+/;

const PR_GITHUB = /https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/pull\/(\d+)/;
const PR_GITLAB = /https:\/\/gitlab\.[\w.-]+\/[\w./-]+?\/-\/merge_requests\/(\d+)/;
const PLAN_FILE = /((?:~|\/)[^\s'"`]*\/plans\/[\w.-]+\.md)\b/;
const CONFLICT_NOT_FOUND = /No conversation found with session ID:?\s*\S*/;
const CONFLICT_IN_USE = /Session ID \S+ is already in use/i;

/** An agent's bullet before a marker, and the horizontal space around it. */
const MARKER = /^[ \t]*(?:[●⏺•◦][ \t]*)?(intent|suggest):[ \t]*(.*)$/;

/** Rules every session runs (a PR link printed by `gh pr create` in a plain shell counts). */
export function sessionLineEvents(line: string, out: ParsedEvent[]): void {
  let m = PR_GITHUB.exec(line);
  if (m) out.push({ type: 'pr-url', number: Number(m[1]), url: m[0], platform: 'github' });
  else if ((m = PR_GITLAB.exec(line))) out.push({ type: 'pr-url', number: Number(m[1]), url: m[0], platform: 'gitlab' });
}

/** Rules that mean something only while an agent runs in the session. */
export function agentLineEvents(line: string, out: ParsedEvent[]): void {
  const rate = matchRateLimit(line);
  if (rate) out.push(rate);
  let m = USAGE.exec(line);
  if (m) out.push({ type: 'usage-limit', percentage: Math.min(100, Number(m[1])), limit_type: m[2] as 'weekly' | 'session' });
  else if ((m = EXHAUSTED.exec(line)) && !looksLikeCode(line))
    out.push(m[1] ? { type: 'usage-exhausted', reset_time: m[1].trim() } : { type: 'usage-exhausted' });
  if (!rate && !looksLikeCode(line)) {
    for (const rule of API_RULES) {
      if (rule.rx.test(line)) {
        out.push({ type: 'api-error', pattern_name: rule.name, matched_text: clip(line), error_kind: rule.kind });
        break;
      }
    }
  }
  if ((m = PLAN_FILE.exec(line))) out.push({ type: 'plan-file', path: m[1]! });
  if ((m = CONFLICT_NOT_FOUND.exec(line))) out.push({ type: 'agent-session-conflict', matched_text: clip(m[0]), kind: 'not-found' });
  else if ((m = CONFLICT_IN_USE.exec(line))) out.push({ type: 'agent-session-conflict', matched_text: clip(m[0]), kind: 'in-use' });
}

export type Marker = { kind: 'intent' | 'suggest'; rest: string };

/** `intent:` or `suggest:` at column 0 (after optional space and an agent bullet), else null. */
export function markerOf(line: string): Marker | null {
  const m = MARKER.exec(line);
  return m ? { kind: m[1] as 'intent' | 'suggest', rest: m[2]! } : null;
}

/** `intent: <text> (<title>)`; null for placeholders (`...`, `<text>`) and text under 4 characters. */
export function parseIntent(rest: string): Extract<ParsedEvent, { type: 'intent' }> | null {
  let text = rest.replace(/\s+/g, ' ').trim();
  let title: string | undefined;
  const t = /^(.*?)\s*\(([^()]{1,80})\)$/.exec(text);
  if (t && t[1]!.length > 0) {
    text = t[1]!;
    title = t[2]!.trim();
  }
  if (text.length < LineRuleConstants.MIN_INTENT_CHARS || /^\.+$/.test(text) || /^<[^>]*>$/.test(text)) return null;
  if (text.length > LineRuleConstants.MAX_INTENT_CHARS) text = text.slice(0, LineRuleConstants.MAX_INTENT_CHARS);
  return title ? { type: 'intent', text, title } : { type: 'intent', text };
}

/**
 * `suggest: [ A | B | C ]`, whole (after any soft-wrap rejoin): bracketed, nothing nested, 2–4
 * non-empty items. Null when malformed; 'open' when the bracket is not closed yet.
 */
export function parseSuggest(rest: string): Extract<ParsedEvent, { type: 'suggest' }> | 'open' | null {
  const s = rest.trim();
  if (!s.startsWith('[')) return null;
  const close = s.indexOf(']');
  if (close < 0) return s.indexOf('[', 1) >= 0 ? null : 'open';
  if (s.slice(close + 1).trim() !== '' || s.indexOf('[', 1) >= 0) return null;
  const items = s
    .slice(1, close)
    .split('|')
    .map((i) => i.replace(/\s+/g, ' ').trim());
  if (items.length < LineRuleConstants.MIN_SUGGEST_ITEMS || items.length > LineRuleConstants.MAX_SUGGEST_ITEMS) return null;
  if (items.some((i) => i.length === 0 || i.length > LineRuleConstants.MAX_SUGGEST_ITEM_CHARS)) return null;
  return { type: 'suggest', items };
}

/**
 * A line that is only a well-formed intent or suggest marker: agent protocol, not content. Log
 * lines served to clients show it blank; the line stays,
 * so line offsets keep their meaning.
 */
export function isStructuralMarker(line: string): boolean {
  if (line.indexOf(':') < 0) return false;
  const m = markerOf(line);
  if (m === null) return false;
  if (m.kind === 'intent') return parseIntent(m.rest) !== null;
  const s = parseSuggest(m.rest);
  return s !== null && s !== 'open';
}
