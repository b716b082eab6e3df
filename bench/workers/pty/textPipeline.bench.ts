/**
 * The text path for agents (issue #3 "Text path" benchmarks): strip + redaction, redaction alone and the
 * whole pipeline on realistic agent output, against strip-ansi followed by one regex per rule.
 */

import { StringDecoder } from 'node:string_decoder';

import stripAnsi from 'strip-ansi';

import { AnsiStripper } from '../../../workers/pty/ansiStrip.js';
import { Redactor } from '../../../shared/redactor.js';
import { PtyConstants } from '../../../shared/protocol/pty.js';
import { TextPipeline } from '../../../workers/pty/textPipeline.js';
import { type BenchContext, type BenchModule, type BenchRow, row, withNote } from '../../harness.js';
import { agentOutput } from './fixtures/agentOutput.js';

/** Input size: a few MB of output, as an agent session produces in minutes; quick runs only smoke-test. */
const INPUT_BYTES = { full: 4 * 1024 * 1024, quick: 512 * 1024 };
/** ~90 % of node-pty reads are exactly 4095 bytes. */
const READ_BYTES = 4095;
/** Redaction-alone baseline input: stripped text handed over in pieces of about one read. */
const PIECE_CHARS = 4096;

/**
 * The naive baseline: the redaction rules written as one regex each (with `/i` where a rule is case-insensitive),
 * plus the vendor prefixes of issue #3, applied one after another.
 */
const BASELINE_RULES: Array<[RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, '[REDACTED]'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/g, '[REDACTED]'],
  [/sk-[A-Za-z0-9_-]{20,}/g, '[REDACTED]'],
  [/[sr]k_live_[A-Za-z0-9]{16,}/g, '[REDACTED]'],
  [/AKIA[A-Z0-9]{16}/g, '[REDACTED]'],
  [/gh[po]_[A-Za-z0-9]{36,}/g, '[REDACTED]'],
  [/github_pat_[A-Za-z0-9_]{82,}/g, '[REDACTED]'],
  [/glpat-[A-Za-z0-9_-]{20,}/g, '[REDACTED]'],
  [/xox[abprs]-[A-Za-z0-9-]+/g, '[REDACTED]'],
  [/ya29\.[A-Za-z0-9_-]+/g, '[REDACTED]'],
  [/AIza[A-Za-z0-9_-]{35}/g, '[REDACTED]'],
  [/npm_[A-Za-z0-9]{36}/g, '[REDACTED]'],
  [/hf_[A-Za-z0-9]{30,}/g, '[REDACTED]'],
  [/Bearer\s+[A-Za-z0-9_\-.]+/g, 'Bearer [REDACTED]'],
  [/((?:postgres|mysql|mongodb|redis):\/\/)[^\s@/]+@/gi, '$1[REDACTED]@'],
  [/DATABASE_URL=\S+/g, 'DATABASE_URL=[REDACTED]'],
  [/((?:token|secret|api[_-]?key|password|passwd|authorization|bearer|session[_-]?id|credential|signature)\s*[:=]\s*)[0-9a-f]{40,}/gi, '$1[REDACTED]'],
  [/([A-Z_0-9]*(?:SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|PRIVATE_KEY|CREDENTIAL)[A-Z_0-9]*\s*=\s*)\S+/gi, '$1[REDACTED]'],
  [/([A-Z_0-9]+_(?:KEY|SECRET|TOKEN)\s*=\s*)[A-Za-z0-9+/=_-]{20,}/g, '$1[REDACTED]'],
  [/("(?:auth|identitytoken|registrytoken)"\s*:\s*")[A-Za-z0-9+/=]+"/g, '$1[REDACTED]"'],
  [/(_auth(?:token)?\s*=\s*)\S+/gi, '$1[REDACTED]'],
  [/(login \S+ password )\S+/g, '$1[REDACTED]'],
  [/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+/g, '[REDACTED]'],
];

function baselineRedact(text: string): string {
  for (const [re, replacement] of BASELINE_RULES) text = text.replace(re, replacement);
  return text;
}

interface Input {
  reads: Uint8Array[];
  bytes: number;
  /** Our stripped lines of the same output: the input of the redaction-alone rows. */
  lines: string[];
  linesBytes: number;
  /** The same stripped text in ~4 KB pieces, for the baseline. */
  pieces: string[];
}

function prepare(ctx: BenchContext): Input {
  const raw = agentOutput(ctx.quick ? INPUT_BYTES.quick : INPUT_BYTES.full);
  const reads: Uint8Array[] = [];
  for (let i = 0; i < raw.length; i += READ_BYTES) reads.push(raw.subarray(i, i + READ_BYTES));
  const lines: string[] = [];
  const stripper = new AnsiStripper({ onLine: (l) => lines.push(l) });
  for (const r of reads) stripper.push(r);
  stripper.flush();
  const pieces: string[] = [];
  let piece = '';
  for (const l of lines) {
    piece += `${l}\n`;
    if (piece.length >= PIECE_CHARS) {
      pieces.push(piece);
      piece = '';
    }
  }
  if (piece) pieces.push(piece);
  const linesBytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
  return { reads, bytes: raw.length, lines, linesBytes, pieces };
}

/** One variant: processes the whole input once, returns a checksum (so no work is optimized away). */
type Variant = (input: Input) => number;

const VARIANTS = {
  stripAnsi: (input: Input): number => {
    const decoder = new StringDecoder('utf8');
    let n = 0;
    for (const r of input.reads) n += stripAnsi(decoder.write(r as Buffer)).length;
    return n;
  },
  ourStrip: (input: Input): number => {
    let n = 0;
    const s = new AnsiStripper({ onLine: (l) => (n += l.length) });
    for (const r of input.reads) s.push(r);
    s.flush();
    return n;
  },
  stripAnsiThenRegexes: (input: Input): number => {
    const decoder = new StringDecoder('utf8');
    let n = 0;
    for (const r of input.reads) n += baselineRedact(stripAnsi(decoder.write(r as Buffer))).length;
    return n;
  },
  ourStripRedact: (input: Input): number => {
    let n = 0;
    const redactor = new Redactor();
    const s = new AnsiStripper({ onLine: (l) => (n += redactor.line(l)?.length ?? 0) });
    for (const r of input.reads) s.push(r);
    s.flush();
    return n;
  },
  regexesOnPieces: (input: Input): number => {
    let n = 0;
    for (const p of input.pieces) n += baselineRedact(p).length;
    return n;
  },
  ourRedactLines: (input: Input): number => {
    let n = 0;
    const redactor = new Redactor();
    for (const l of input.lines) n += redactor.line(l)?.length ?? 0;
    return n;
  },
  // Reads every line the log keeps, so each is redacted (lines redact on first read); lines that
  // scrolled out unread are never scanned, as in a real session.
  ourPipeline: (input: Input): number => {
    const p = new TextPipeline();
    for (const r of input.reads) p.push(r);
    p.flush();
    return p.totalLines + p.read({ offset: 0, limit: PtyConstants.LOG_LINES }).lines.length;
  },
} satisfies Record<string, Variant>;

type VariantName = keyof typeof VARIANTS;

/** MB/s of each variant, repetitions interleaved so machine noise hits every variant alike. */
function measure(input: Input, names: VariantName[], reps: number, mbOf: (name: VariantName) => number): Map<VariantName, number[]> {
  const out = new Map<VariantName, number[]>(names.map((n) => [n, []]));
  for (const n of names) VARIANTS[n](input); // warm-up: JIT and regexp compilation
  for (let r = 0; r < reps; r++) {
    for (const n of names) {
      const t = performance.now();
      VARIANTS[n](input);
      out.get(n)!.push(mbOf(n) / ((performance.now() - t) / 1000));
    }
  }
  return out;
}

/** Fails the run loudly if our output would leak a fixture secret (a fast wrong answer is no answer). */
function checkRedacted(input: Input): void {
  const p = new TextPipeline({ capacityLines: input.lines.length + 1 });
  for (const r of input.reads) p.push(r);
  p.flush();
  const text = p.read({ offset: 0, limit: input.lines.length + 1 }).lines.join('\n');
  if (/sk-proj-|Bearer eyJ/.test(text) || !text.includes('[REDACTED:')) throw new Error('the pipeline output still holds fixture secrets');
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const input = prepare(ctx);
  checkRedacted(input);
  const reps = Math.max(3, ctx.repetitions);
  const raw = input.bytes / 1e6;
  const text = input.linesBytes / 1e6;
  const mbOf = (n: VariantName): number => (n === 'ourRedactLines' || n === 'regexesOnPieces' ? text : raw);
  const m = measure(input, Object.keys(VARIANTS) as VariantName[], reps, mbOf);
  const base = (name: string, n: VariantName) => ({ name, median: row('', '', ctx, '', m.get(n)!).median });
  const size = `${raw.toFixed(1)} MB agent output, ${READ_BYTES}-byte reads`;

  const stripBase = base('strip-ansi', 'stripAnsi');
  const naive = base('strip-ansi + regex per rule', 'stripAnsiThenRegexes');
  const seq = base('regex per rule, 4 KB pieces', 'regexesOnPieces');
  return [
    withNote(row('text: strip', 'strip-ansi (StringDecoder + strip-ansi)', ctx, 'MB/s', m.get('stripAnsi')!), size),
    withNote(
      row('text: strip', 'tuicd AnsiStripper (lines, CR/CUF model)', ctx, 'MB/s', m.get('ourStrip')!, stripBase),
      'byte machine, one UTF-8 decode per read',
    ),
    withNote(
      row('text: strip + redact', 'strip-ansi + regex per rule', ctx, 'MB/s', m.get('stripAnsiThenRegexes')!),
      `${BASELINE_RULES.length} regexes applied per read`,
    ),
    withNote(row('text: strip + redact', 'tuicd AnsiStripper + Redactor', ctx, 'MB/s', m.get('ourStripRedact')!, naive), 'goal ≥ 3×'),
    withNote(row('text: redact only', 'regex per rule, 4 KB pieces', ctx, 'MB/s', m.get('regexesOnPieces')!), `${text.toFixed(1)} MB stripped text`),
    withNote(row('text: redact only', 'tuicd Redactor, per line', ctx, 'MB/s', m.get('ourRedactLines')!, seq), 'goal ≥ 100 MB/s; one combined alternation'),
    withNote(
      row('text: full pipeline', 'tuicd TextPipeline (strip+redact+log)', ctx, 'MB/s', m.get('ourPipeline')!, naive),
      'then reads all kept lines (redacted on first read); ratio vs strip-ansi + regex per rule',
    ),
  ];
};
