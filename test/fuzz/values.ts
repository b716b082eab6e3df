/**
 * Hostile values and a JSON writer that can say what JSON.stringify cannot: duplicate keys, own
 * `__proto__` keys, raw number tokens (`1e999`, `-0`), and deliberately broken documents.
 *
 * Safety: nothing here is ever used where tuicd would execute it (a shell, a command, typed input
 * followed by Enter). Those fields draw from the explicit pools in cases.ts instead.
 */
import type { Rng } from './rng.js';

/** A JSON value as the fuzzer builds it. */
export type J = null | boolean | number | string | J[] | JObj | JRaw;
/** An object as ordered entries: keys may repeat or be `__proto__`. */
export interface JObj {
  $obj: Array<[string, J]>;
}
/** A token written verbatim (numbers JSON.stringify would rewrite, or broken syntax on purpose). */
export interface JRaw {
  $raw: string;
}

export const obj = (entries: Record<string, J | undefined> | Array<[string, J]>): JObj => ({
  $obj: Array.isArray(entries) ? entries : (Object.entries(entries).filter(([, v]) => v !== undefined) as Array<[string, J]>),
});
export const raw = (text: string): JRaw => ({ $raw: text });

function isObj(v: J): v is JObj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && '$obj' in v;
}
function isRaw(v: J): v is JRaw {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && '$raw' in v;
}

/** Serializes iteratively, so a 100 000-deep nesting does not overflow the fuzzer's own stack. */
export function toJson(value: J): string {
  const out: string[] = [];
  const stack: Array<J | { $close: string } | { $sep: string }> = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (v !== null && typeof v === 'object' && '$close' in v) {
      out.push(v.$close);
      continue;
    }
    if (v !== null && typeof v === 'object' && '$sep' in v) {
      out.push(v.$sep);
      continue;
    }
    const j = v as J;
    if (j === null || typeof j === 'boolean') out.push(String(j));
    else if (typeof j === 'number') out.push(Number.isFinite(j) ? (Object.is(j, -0) ? '-0' : String(j)) : 'null');
    else if (typeof j === 'string') out.push(JSON.stringify(j));
    else if (Array.isArray(j)) {
      out.push('[');
      stack.push({ $close: ']' });
      for (let i = j.length - 1; i >= 0; i--) {
        stack.push(j[i]!);
        if (i > 0) stack.push({ $sep: ',' });
      }
    } else if (isRaw(j)) out.push(j.$raw);
    else if (isObj(j)) {
      out.push('{');
      stack.push({ $close: '}' });
      for (let i = j.$obj.length - 1; i >= 0; i--) {
        const [k, val] = j.$obj[i]!;
        stack.push(val);
        stack.push({ $sep: `${JSON.stringify(k)}:` });
        if (i > 0) stack.push({ $sep: ',' });
      }
    }
  }
  return out.join('');
}

/** Nests `inner` `depth` times in arrays or objects (for parsers and deep merges that recurse). */
export function deepNest(depth: number, kind: 'array' | 'object', inner: J = 1): J {
  let v: J = inner;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : obj([['a', v]]);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Strings

export const TRAVERSALS: readonly string[] = [
  '../../etc/passwd',
  '../../../../../../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '%252e%252e%252fetc%252fpasswd',
  '..%c0%af..%c0%afetc%c0%afpasswd',
  '....//....//etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '/etc/passwd',
  '/etc/passwd\u0000.json',
  'file:///etc/passwd',
  '/proc/self/environ',
  '~/.ssh/id_rsa',
  '..',
  '.',
  '/',
  '//',
  '/..',
  '/tmp/../etc',
];

export const PROTO_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'then'];

const SHORT_STRINGS: readonly string[] = [
  '',
  ' ',
  '\t',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  'Infinity',
  '0x10',
  '{}',
  '[]',
  '{"a":1}',
  '"',
  "'",
  '\\',
  '%',
  '%00',
  '%zz',
  '%ff',
  '%s%s%s%n',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as a literal string
  '${7*7}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  "' OR '1'='1",
  'a\r\nX-Injected: 1',
  'a\nb',
  '\u0000',
  'a\u0000b',
  '\u0007\u001b[31mred\u001b[0m',
  '\ufeff',
  '\u200b\u200d',
  '\u202eevil',
  'é',
  '中文',
  '🦊',
  '👩‍👩‍👧‍👦',
  '\ud800',
  '\udfff',
  'a\ud800b',
  '\udc00\ud800',
  'tu-1',
  'tu-0',
  'tu-999',
  'evil.example',
  'http://evil.example',
];

/** A string with every kind of trouble; never used where tuicd would execute it. */
export function nastyString(r: Rng): string {
  switch (r.int(0, 9)) {
    case 0:
    case 1:
    case 2:
      return r.pick(SHORT_STRINGS);
    case 3:
      return r.pick(TRAVERSALS);
    case 4:
      return r.pick(PROTO_KEYS);
    case 5:
      return longString(r);
    case 6:
      return randomText(r, r.int(1, 40));
    case 7:
      return randomCodeUnits(r, r.int(1, 64));
    case 8:
      return r.pick(SHORT_STRINGS) + r.pick(TRAVERSALS) + r.pick(SHORT_STRINGS);
    default:
      return r.pick(['a', 'x', 'fuzz', 'fz']) + '-' + r.hex(r.int(1, 12));
  }
}

/** 1 KiB to 1 MiB (rarely 3 MiB, past the body limit once serialized). */
export function longString(r: Rng): string {
  const n = r.weighted<number>([
    [5, 1024],
    [4, 10_000],
    [3, 65_536],
    [2, 300_000],
    [2, 1_048_576],
    [1, 3 * 1_048_576],
  ]);
  const unit = r.pick(['A', 'é', '🦊', '\ud800', '%', '../', '\\u0000', ' ', '\u0000']);
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

/** Printable ASCII (no controls, no newline). */
export function randomText(r: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(r.int(0x20, 0x7e));
  return s;
}

/** Any UTF-16 code units: controls, lone surrogates, noncharacters. */
export function randomCodeUnits(r: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    s += String.fromCharCode(
      r.weighted<number>([
        [3, r.int(0, 0x1f)],
        [4, r.int(0x20, 0x7e)],
        [2, r.int(0x80, 0x7ff)],
        [2, r.int(0xd800, 0xdfff)],
        [1, r.int(0xe000, 0xffff)],
      ]),
    );
  }
  return s;
}

/** Text that is safe to type into a real shell: printable, no control characters, so never a newline. */
export function typeSafe(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
}

/** A value to type into a /bin/sh session: printable only; nothing it contains can run. */
export function safeTypedText(r: Rng): string {
  return r.weighted<() => string>([
    [4, () => 'echo fuzz'],
    [4, () => randomText(r, r.int(1, 80))],
    [2, () => typeSafe(nastyString(r)).slice(0, r.chance(0.1) ? 1_048_576 : 65_536)],
    [1, () => '\ud800é🦊中文'],
    [1, () => ''],
  ])();
}

/** Anything at all, for `cat` sessions only (they just echo it). Never 0x1c (SIGQUIT: a core dump). */
export function anyTypedText(r: Rng): string {
  return r
    .weighted<() => string>([
      [5, () => randomCodeUnits(r, r.int(1, 200))],
      [2, () => nastyString(r)],
      [1, () => 'line one\nline two\r\n\u0003\u0004\u001a'],
    ])()
    .replace(/\u001c/g, '');
}

// ---------------------------------------------------------------------------------------------
// Numbers and values

const NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  2,
  24,
  80,
  500,
  501,
  1000,
  65535,
  65536,
  1.5,
  -1.5,
  0.1,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  -(2 ** 31),
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER,
  1e21,
  1e308,
  -1e308,
  5e-324,
  Number.MAX_VALUE,
];
const RAW_NUMBERS: readonly string[] = [
  '1e999',
  '-1e999',
  '9'.repeat(400),
  '-0',
  '0.0000000000000000000000000001',
  '1E2',
  '1e-7',
  '123456789012345678901234567890',
];

export function nastyNumber(r: Rng): J {
  if (r.chance(0.2)) return raw(r.pick(RAW_NUMBERS));
  return r.pick(NUMBERS);
}

/** A JSON value of a random type; `strings: false` keeps out strings (for fields whose string values must come from a safe pool). */
export function nastyValue(r: Rng, opts: { strings?: boolean; depth?: number } = {}): J {
  const strings = opts.strings ?? true;
  const depth = opts.depth ?? 0;
  const kinds: Array<readonly [number, () => J]> = [
    [3, () => nastyNumber(r)],
    [2, () => r.pick([true, false])],
    [2, () => null],
    [1, () => []],
    [1, () => obj([])],
    [1, () => (depth < 2 ? Array.from({ length: r.int(1, 4) }, () => nastyValue(r, { strings, depth: depth + 1 })) : [1])],
    [1, () => (depth < 2 ? obj([[r.pick(PROTO_KEYS), obj([['polluted_fuzz', true]])]]) : obj([]))],
    [1, () => deepNest(r.pick([64, 1000, 10_000, 100_000]), r.pick(['array', 'object'] as const))],
    [1, () => Array.from({ length: r.pick([1000, 100_000]) }, () => 0)],
  ];
  if (strings) kinds.push([5, () => nastyString(r)]);
  return r.weighted(kinds)();
}

/** A prototype-pollution attempt whose values are harmless if it ever worked. */
export function pollution(r: Rng): [string, J] {
  const payload = obj([
    ['polluted_fuzz', true],
    ['isAdmin', true],
    ['shell', '/nonexistent/fuzz-proto-shell'],
    ['enabled', false],
    ['status', 500],
  ]);
  const key = r.pick(PROTO_KEYS.slice(0, 3));
  return key === 'constructor' ? [key, obj([['prototype', payload]])] : [key, payload];
}

// ---------------------------------------------------------------------------------------------
// Broken bodies

const BROKEN_JSON: readonly string[] = [
  '',
  ' ',
  '{',
  '}',
  '[',
  '{"a":}',
  '{"a":1,}',
  '[1,]',
  "{'a':1}",
  '{a:1}',
  '{"a":1}{"b":2}',
  '{"a":1} trailing',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":undefined}',
  '{"a":0x10}',
  '{"a":01}',
  '{"a":"\\x41"}',
  '{"a":"\\u12"}',
  '{"a":"\\ud800"}',
  '{"a":"unterminated}',
  '/* comment */ {}',
  '\ufeff{}',
  'null',
  'true',
  '0',
  '-1',
  '"string"',
  '[]',
  '[[[[[[[[[[[[',
  '{"__proto__":{"polluted_fuzz":true}}',
  '{"constructor":{"prototype":{"polluted_fuzz":true}}}',
];

/** `flips: false` for bodies that may reach a terminal or a spawn: a flipped byte could forge `\\n` or a command name. */
export function brokenJson(r: Rng, valid?: string, flips = true): Buffer {
  const which = r.int(0, flips ? 5 : 4);
  if (which <= 2 || valid === undefined) return Buffer.from(r.pick(BROKEN_JSON), 'utf8');
  const bytes = Buffer.from(valid, 'utf8');
  if (which === 3) return bytes.subarray(0, r.int(0, Math.max(0, bytes.length - 1))); // truncated
  if (which === 4) {
    // Invalid UTF-8 spliced in: lone continuation bytes, overlong encodings, CESU surrogates, 0xff.
    const junk = Buffer.from(r.pick([[0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x00]]));
    const at = r.int(0, bytes.length);
    return Buffer.concat([bytes.subarray(0, at), junk, bytes.subarray(at)]);
  }
  // Random byte flips.
  const copy = Buffer.from(bytes);
  for (let i = 0; i < r.int(1, 4) && copy.length > 0; i++) copy[r.int(0, copy.length - 1)] = r.int(0, 255);
  return copy;
}

/** A parsed JSON value (plain objects) as a J, so a server's answer can be sent back. */
export function fromPlain(v: unknown): J {
  if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(fromPlain);
  if (typeof v === 'object') return obj(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, fromPlain(x)] as [string, J]));
  return null;
}
