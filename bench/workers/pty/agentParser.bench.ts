/**
 * The agent output parser alone (issue 16): MB/s of OutputParser's line tier and OSC rules on recorded
 * agent captures mixed with synthetic agent output, against a straightforward port that runs every
 * pattern on every stripped line. Stripping happens before the timed part: only the parser is measured.
 */

import type { ParsedEvent } from '../../../shared/protocol/parsedEvents.js';
import { parseIntent, parseSuggest } from '../../../workers/pty/agentParser/lineRules.js';
import { isParsedOscPrefix, notifyQuestion, parseOsc } from '../../../workers/pty/agentParser/oscRules.js';
import { OutputParser, ParserConstants, type ParserTimers } from '../../../workers/pty/agentParser/outputParser.js';
import { AnsiStripper } from '../../../workers/pty/ansiStrip.js';
import { type BenchContext, type BenchModule, type BenchRow, median, row, withNote } from '../../harness.js';
import { recordedAgentOutput } from './fixtures/recordedAgentOutput.js';

/** Same sizes and read length as textPipeline.bench.ts, so the two modules' figures compare. */
const INPUT_BYTES = { full: 4 * 1024 * 1024, quick: 512 * 1024 };
const READ_BYTES = 4095;
/** Event types the parser must emit on this input, or the run fails (a fast wrong answer is no answer). */
const EXPECTED = ['rate-limit', 'intent', 'suggest', 'pr-url', 'usage-limit', 'question', 'progress'] as const;

type Item = { text: string } | { osc: string };

interface Input {
  bytes: number;
  /** What the pty host hands the parser, in order: each push's completed lines, and OSC strings it keeps. */
  items: Item[];
  /** The same stripped lines one by one, and the same OSC payloads: the naive port's input. */
  lines: string[];
  oscs: string[];
}

function prepare(ctx: BenchContext): Input {
  const raw = recordedAgentOutput(ctx.quick ? INPUT_BYTES.quick : INPUT_BYTES.full);
  const items: Item[] = [];
  const lines: string[] = [];
  const oscs: string[] = [];
  const stripper = new AnsiStripper({
    onLine: () => {},
    onText: (text) => {
      items.push({ text });
      for (const l of text.split('\n')) lines.push(l);
    },
    onOsc: (payload) => {
      if (!isParsedOscPrefix(payload)) return;
      items.push({ osc: payload });
      oscs.push(payload);
    },
  });
  for (let i = 0; i < raw.length; i += READ_BYTES) stripper.push(raw.subarray(i, i + READ_BYTES));
  stripper.flush();
  return { bytes: raw.length, items, lines, oscs };
}

// --- ours --------------------------------------------------------------------------------------

function runParser(input: Input, onEvents: (events: ParsedEvent[]) => void): void {
  // Frozen time: timers never fire, so only the line and OSC tiers run (the screen tier is not measured).
  let clock = 0;
  const timers: ParserTimers = { now: () => clock, setTimeout: () => undefined, clearTimeout: () => {} };
  const parser = new OutputParser({ emit: onEvents, readScreen: () => ({ rows: [] }), lineCount: () => 0, timers });
  // A session past its startup grace: before it, OSC 777 questions are held back (replayed history).
  clock = ParserConstants.STARTUP_GRACE_MAX_MS;
  parser.setAgent('claude');
  for (const it of input.items) {
    if ('text' in it) parser.lines(it.text);
    else parser.osc(it.osc);
  }
  parser.dispose();
}

function ours(input: Input): number {
  let count = 0;
  runParser(input, (e) => (count += e.length));
  return count;
}

// --- the straightforward port: every pattern on every line ---------------------------------------
// lineRules.ts's and screenRules.ts's patterns written out as plain regexes, no trigger pre-pass.

/** The code-line guard (computed once per line: kinder to the port than calling it per rule). */
const CODE_START = /^(?:\/\/|#|fn |const |let |assert|```|~~~|[-*+] |@@|\+\+\+|---)/;
const CODE_DIFF = /^[+-]\S/;
const CODE_RAW_STRING = /(?:^|[\s(=,[])r#*"/;
const CODE_QUOTE = /["'`]/;
const CODE_TABLE = /^\|.*\|\s*$/;

function looksLikeCode(line: string): boolean {
  const trimmed = line.trimStart();
  return (
    CODE_START.test(trimmed) ||
    CODE_DIFF.test(line) ||
    CODE_RAW_STRING.test(line) ||
    (line.length - trimmed.length >= 4 && CODE_QUOTE.test(trimmed)) ||
    CODE_TABLE.test(trimmed)
  );
}

/** The parser's rate-limit table, in its order (first match wins). */
const RATE = [
  /rate_limit_error/i,
  /overloaded_error/i,
  /temporarily limiting requests/i,
  /RateLimitError/,
  /User Provided API Key Rate Limit Exceeded/,
  /RESOURCE_EXHAUSTED/,
  /\b429\b.{0,40}Too Many Requests|Too Many Requests.{0,40}\b429\b|HTTP\/\d(?:\.\d)?\s+429\b|\bHTTP 429\b/i,
  /Retry-After:\s*(\d+)/i,
  /Retry after (\d+) seconds?/i,
  /tokens per minute\b.{0,80}\blimit|\bTPM\b.{0,20}\blimit|\blimit\b.{0,40}\bTPM\b/i,
  /requests per minute\b.{0,80}\blimit|\bRPM\b.{0,20}\blimit|\blimit\b.{0,40}\bRPM\b/i,
];
const RETRY_SECONDS = /Retry-After:\s*(\d+)|Retry after (\d+) seconds?/i;
const USAGE = /You['’]ve used (\d{1,3})% of your (weekly|session) limit/;
const EXHAUSTED = /out of (?:extra )?usage(?:.*?·\s*resets\s+(.+?))?\s*$/i;
const API = [
  /authentication_error|invalid x-api-key|Invalid API key|\b401\b.{0,20}Unauthorized|OAuth token has expired/i,
  /API Error:?\s*5\d\d\b|api_error|Internal server error/i,
  /unable to connect to api/i,
  /retrying.{0,40}attempt\s*\d+\s*\/\s*\d+/i,
  /API Error\b/,
];
const TOOL_ERROR = /^[^A-Za-z"]*Error:\s*Exit code\s+\d+/;
const PR_GITHUB = /https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/pull\/(\d+)/;
const PR_GITLAB = /https:\/\/gitlab\.[\w.-]+\/[\w./-]+?\/-\/merge_requests\/(\d+)/;
const PLAN_FILE = /((?:~|\/)[^\s'"`]*\/plans\/[\w.-]+\.md)\b/;
const CONFLICT_NOT_FOUND = /No conversation found with session ID:?\s*\S*/;
const CONFLICT_IN_USE = /Session ID \S+ is already in use/i;
const MARKER = /^[ \t]*(?:[●⏺•◦][ \t]*)?(intent|suggest):[ \t]*(.*)$/;
/** Status lines of every agent (screenRules.ts: Claude, Codex, Gemini, Aider, Copilot, generic). */
const STATUS = [
  /^\s*[·✢✳✶✻✽✺*]\s*([^\s…·][^…]{0,60}?)…\s*(?:\(([^)]*)\)?)?\s*$/,
  /^\s*•\s*([A-Z][\w ]{0,40}?)\s*\(([^)]*?esc to interrupt)\)/,
  /^\s*[⠀-⣿]\s+(.+?)\s*\((esc to cancel[^)]*)\)/,
  /^\s*[░█▒▓]{2,}\s+(\S.*)$/,
  /^\s*∴\s*(\S[^…]*?)…\s*(\(.*\))?\s*$/,
  /^\s*\[Running\]\s*(.*)$/,
];
const OPTION = /^\s*(?:([❯›>])\s*)?(\d{1,2})[.)]\s+(.+?)\s*$/;
const NOT_QUESTION = /^(?:\/\/|#|[+-]|[❯›>](?:\s|$))/;

/** Every pattern on one line; returns the matches. `seen` (sanity pass only) collects what was found. */
function naiveLine(line: string, seen?: Set<string>): number {
  let n = 0;
  const code = looksLikeCode(line);
  let rate = false;
  if (!code) {
    for (const rx of RATE) {
      if (!rx.test(line)) continue;
      RETRY_SECONDS.exec(line);
      rate = true;
      seen?.add('rate-limit');
      n++;
      break;
    }
  }
  if (USAGE.test(line)) {
    seen?.add('usage-limit');
    n++;
  } else if (EXHAUSTED.test(line) && !code) n++;
  if (!rate && !code) {
    for (const rx of API) {
      if (rx.test(line)) {
        n++;
        break;
      }
    }
  }
  if (TOOL_ERROR.test(line) && !code) n++;
  if (PR_GITHUB.test(line) || PR_GITLAB.test(line)) {
    seen?.add('pr-url');
    n++;
  }
  if (PLAN_FILE.test(line)) n++;
  if (CONFLICT_NOT_FOUND.test(line) || CONFLICT_IN_USE.test(line)) n++;
  const marker = MARKER.exec(line);
  if (marker) {
    const parsed = marker[1] === 'intent' ? parseIntent(marker[2]!) : parseSuggest(marker[2]!);
    if (parsed !== null && parsed !== 'open') {
      seen?.add(parsed.type);
      n++;
    }
  }
  for (const rx of STATUS) if (rx.test(line)) n++;
  if (OPTION.test(line)) n++;
  const t = line.trim();
  if (t.length >= 2 && t.endsWith('?') && !t.endsWith(')?') && !NOT_QUESTION.test(t) && !(t.includes('->') || t.includes('=>') || t.includes('::'))) n++;
  return n;
}

function naiveOsc(payload: string, seen?: Set<string>): number {
  const sig = parseOsc(payload);
  if (sig === null) return 0;
  if (sig.kind === 'notify') {
    if (notifyQuestion(sig.body) === null) return 0;
    seen?.add('question');
  } else if (sig.kind === 'progress') seen?.add('progress');
  return 1;
}

function naive(input: Input, seen?: Set<string>): number {
  let n = 0;
  for (const l of input.lines) n += naiveLine(l, seen);
  for (const o of input.oscs) n += naiveOsc(o, seen);
  return n;
}

// --- measurement ---------------------------------------------------------------------------------

function check(input: Input): void {
  const ourTypes = new Set<string>();
  runParser(input, (events) => {
    for (const e of events) ourTypes.add(e.type);
  });
  const naiveTypes = new Set<string>();
  naive(input, naiveTypes);
  for (const [who, types] of [
    ['OutputParser', ourTypes],
    ['straightforward port', naiveTypes],
  ] as const) {
    const missing = EXPECTED.filter((t) => !types.has(t));
    if (missing.length > 0) throw new Error(`${who} found no ${missing.join(', ')} event in the input`);
  }
}

const VARIANTS = { naive: (input: Input) => naive(input), ours } satisfies Record<string, (input: Input) => number>;
type VariantName = keyof typeof VARIANTS;

/** Keeps the checksums alive, so no variant's work can be optimized away. */
let sink = 0;

/** MB/s of each variant, repetitions interleaved so machine noise hits both alike. */
function measure(input: Input, reps: number): Map<VariantName, number[]> {
  const names = Object.keys(VARIANTS) as VariantName[];
  const out = new Map<VariantName, number[]>(names.map((n) => [n, []]));
  const mb = input.bytes / 1e6;
  for (const n of names) sink += VARIANTS[n](input); // warm-up: JIT and regexp compilation
  for (let r = 0; r < reps; r++) {
    for (const n of names) {
      const t = performance.now();
      sink += VARIANTS[n](input);
      out.get(n)!.push(mb / ((performance.now() - t) / 1000));
    }
  }
  return out;
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const input = prepare(ctx);
  check(input);
  const m = measure(input, Math.max(3, ctx.repetitions));
  if (!Number.isFinite(sink)) throw new Error('checksum lost');
  const naiveValues = m.get('naive')!;
  const size = `${(input.bytes / 1e6).toFixed(1)} MB recorded+synthetic agent output, ${READ_BYTES}-byte reads`;
  return [
    withNote(row('agent parser', 'straightforward port (every pattern, every line)', ctx, 'MB/s', naiveValues), size),
    withNote(
      row('agent parser', 'tuicd OutputParser (line tier + OSC)', ctx, 'MB/s', m.get('ours')!, { name: 'straightforward port', median: median(naiveValues) }),
      'goal ≥ 3×; one trigger pass per read, rules only on hit lines',
    ),
  ];
};
