/**
 * What counts as a finding, and how findings are grouped: one group per (kind, route, status,
 * normalized error message), with a count and the first few cases to reproduce it.
 */
import { existsSync } from 'node:fs';

import type { Answer } from './client.js';
import type { Case } from './cases.js';

export type FindingKind =
  | 'crash'
  | '5xx'
  | 'non-json-error'
  | 'no-answer'
  | 'parser-drop'
  | 'hang'
  | 'truncated'
  | 'huge-error-body'
  | 'cross-site-accepted'
  | 'auth-bypass'
  | 'simple-content-type-accepted'
  | 'ws-internal-error'
  | 'mcp-internal-error'
  | 'containment-breach'
  | 'command-ran';

export const KIND_TITLES: Record<FindingKind, string> = {
  crash: 'crashes (tuicd exited)',
  '5xx': '5xx answers',
  'non-json-error': 'non-JSON error answers (4xx/5xx whose body is not JSON)',
  'no-answer': 'no answer (connection closed before any HTTP answer)',
  'parser-drop':
    "dropped by uWS 20.30's HTTP parser before any handler (known, not failing: a method outside the standard nine, no Host, a Transfer-Encoding other than chunked, over 50 headers, a header block over 4 KiB, a target not starting with /)",
  hang: 'hangs (no answer in time to a request that should answer at once)',
  truncated: 'truncated answers (closed mid-body)',
  'huge-error-body': 'huge error bodies (4xx/5xx over 8 KiB: input echoed back)',
  'cross-site-accepted': 'cross-site requests accepted on TCP (foreign Host/Origin answered 2xx/3xx/101)',
  'auth-bypass': 'TCP requests with bad credentials answered 2xx/101',
  'simple-content-type-accepted': 'TCP bodies with a CORS-simple Content-Type (text/plain, form) accepted',
  'ws-internal-error': 'WebSocket closed by the server with 1011 (internal error)',
  'containment-breach': 'a path outside every root answered (2xx, or a tool result that is no error)',
  'command-ran': "git ran a command or wrote a file it was handed (the case's canary file exists)",
  'mcp-internal-error': "MCP internal errors (JSON-RPC -32603, or a tool result \"Tool '…' failed\": an unexpected exception, MCP's 5xx)",
};

export const KIND_ORDER: FindingKind[] = [
  'crash',
  '5xx',
  'non-json-error',
  'no-answer',
  'parser-drop',
  'hang',
  'truncated',
  'huge-error-body',
  'cross-site-accepted',
  'auth-bypass',
  'simple-content-type-accepted',
  'ws-internal-error',
  'mcp-internal-error',
  'containment-breach',
  'command-ran',
];

export const HUGE_ERROR_BYTES = 8 * 1024;

export interface Finding {
  kind: FindingKind;
  detail: string;
}

function isJson(a: Answer): boolean {
  if (a.body.length === 0) return false;
  try {
    JSON.parse(a.body.toString('utf8'));
    return (a.headers['content-type'] ?? '').includes('json');
  } catch {
    return false;
  }
}

/** The public /health answer (an odd path the router maps to /health is just as public). */
function isHealthBody(a: Answer): boolean {
  try {
    const b = JSON.parse(a.body.toString('utf8')) as { ok?: unknown; instance_id?: unknown };
    return b.ok === true && typeof b.instance_id === 'string';
  } catch {
    return false;
  }
}

/** A tools/call answer (JSON or one SSE message) that carries a result which is not an error. */
function isToolSuccess(text: string): boolean {
  const json = text.trimStart().startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '');
  try {
    const parsed = JSON.parse(json) as { result?: { isError?: unknown } };
    return parsed.result !== undefined && parsed.result.isError !== true;
  } catch {
    return false;
  }
}

/** A JSON-RPC error must echo the request's id, however long: that part is not counted as echoed input. */
function echoedIdBytes(a: Answer): number {
  try {
    const parsed = JSON.parse(a.body.toString('utf8')) as { jsonrpc?: unknown; id?: unknown };
    return parsed && parsed.jsonrpc === '2.0' && parsed.id !== undefined ? Buffer.byteLength(JSON.stringify(parsed.id)) : 0;
  } catch {
    return 0;
  }
}

/** Kinds that are reported but do not fail a run: behaviour of a dependency tuicd cannot change. */
export const KNOWN_KINDS: ReadonlySet<FindingKind> = new Set(['parser-drop']);

/** The nine methods HTTP/1.1 defines: uWS's parser knows no others. */
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
/** uWS 20.30's parser limits (measured: it closes the connection, no handler runs). */
const UWS_MAX_HEADERS = 50;
const UWS_MAX_HEADER_BYTES = 4096;

/** True when uWS's parser drops this request before tuicd's code could answer it. */
export function uwsParserDrops(c: Case): boolean {
  if (c.raw !== null) return true;
  if (!HTTP_METHODS.has(c.method)) return true;
  if (!c.path.startsWith('/')) return true;
  if (!c.headers.some(([k]) => k.toLowerCase() === 'host')) return true;
  const te = c.headers.find(([k]) => k.toLowerCase() === 'transfer-encoding')?.[1];
  if (te !== undefined && te.toLowerCase() !== 'chunked') return true;
  if (c.headers.length >= UWS_MAX_HEADERS) return true;
  const headerBytes = c.method.length + c.path.length + c.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  return headerBytes > UWS_MAX_HEADER_BYTES;
}

/** The findings one answered case yields (crashes are detected by the harness, not here). */
export function judge(c: Case, a: Answer, engine = 'uws'): Finding[] {
  const out: Finding[] = [];
  if (c.canary !== null && existsSync(c.canary)) out.push({ kind: 'command-ran', detail: c.canary });
  if (a.kind === 'error') return out; // could not connect: the harness decides whether tuicd died
  if (c.relaxed) {
    if (a.status >= 500) out.push({ kind: '5xx', detail: `${a.status}` });
    return out;
  }
  if (a.kind === 'dropped') {
    out.push({ kind: engine === 'uws' && uwsParserDrops(c) ? 'parser-drop' : 'no-answer', detail: a.note ?? 'closed' });
    return out;
  }
  if (a.kind === 'timeout') {
    if (!c.mayBlock && !(a.status === 101))
      out.push({ kind: 'hang', detail: a.status ? `head ${a.status}, body incomplete after ${a.ms} ms` : `no answer in ${Math.round(a.ms / 1000)} s` });
    return out;
  }
  if (a.kind === 'truncated') out.push({ kind: 'truncated', detail: `${a.status}: ${a.note ?? ''}` });
  const s = a.status;
  if (s >= 500) out.push({ kind: '5xx', detail: `${s}` });
  if (s >= 400 && c.method !== 'HEAD') {
    if (!isJson(a))
      out.push({ kind: 'non-json-error', detail: `${s} content-type ${JSON.stringify(a.headers['content-type'] ?? null)}${a.note ? `, ${a.note}` : ''}` });
    const size = a.body.length - echoedIdBytes(a);
    if (size > HUGE_ERROR_BYTES) out.push({ kind: 'huge-error-body', detail: `${s}, ${a.body.length} bytes` });
  }
  if (c.listener === 'tcp') {
    const accepted = (s >= 200 && s < 400) || s === 101;
    if (c.crossSite && accepted)
      out.push({
        kind: 'cross-site-accepted',
        detail: `${c.crossSite} → ${s}${a.headers['access-control-allow-origin'] ? `, Access-Control-Allow-Origin: ${a.headers['access-control-allow-origin']}` : ''}`,
      });
    if (c.badAuth && !c.publicRoute && !isHealthBody(a) && c.method !== 'OPTIONS' && ((s >= 200 && s < 300) || s === 101))
      out.push({ kind: 'auth-bypass', detail: `${c.badAuth} → ${s}` });
    // OPTIONS is a preflight (its 204 acts on no body), not the simple request a browser sends cross-site.
    if (c.textPlain && s >= 200 && s < 300 && c.method !== 'OPTIONS')
      out.push({ kind: 'simple-content-type-accepted', detail: `${c.headers.find(([k]) => k === 'Content-Type')?.[1] ?? ''} → ${s}` });
  }
  if (c.path === '/mcp' && c.method === 'POST' && s < 500) {
    const text = a.body.toString('utf8');
    const failed = /Tool '[^'\\]{0,80}' failed: ([^"\\]{0,160})/.exec(text);
    if (failed) out.push({ kind: 'mcp-internal-error', detail: `tool failed: ${failed[1]}` });
    else if (/"code":\s*-32603/.test(text)) out.push({ kind: 'mcp-internal-error', detail: 'JSON-RPC -32603' });
  }
  if (c.outside && s >= 200 && s < 300) {
    if (c.path !== '/mcp') out.push({ kind: 'containment-breach', detail: `${s}` });
    else if (isToolSuccess(a.body.toString('utf8'))) out.push({ kind: 'containment-breach', detail: 'tool result without isError' });
  }
  if (a.ws?.closeCode === 1011) out.push({ kind: 'ws-internal-error', detail: `close 1011 ${JSON.stringify(a.ws.closeReason ?? '')}` });
  return out;
}

/** Turns an error message into a grouping key: ids, numbers and long runs folded away. */
export function normalizeMessage(text: string): string {
  let msg = text;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') {
      const p = parsed as { error?: unknown; message?: unknown };
      const e = p.error;
      msg =
        typeof e === 'string'
          ? e
          : e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string'
            ? (e as { message: string }).message
            : typeof p.message === 'string'
              ? p.message
              : text;
    }
  } catch {
    // not JSON: use the text
  }
  return msg
    .slice(0, 400)
    .replace(/[^\s'"]*tuicd-fuzz-\w+/g, '<fuzzdir>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/fz\d*-[a-z]+\d-g\d+/g, '<slot>')
    .replace(/(.{1,4}?)\1{7,}/g, '$1…')
    .replace(/'[^']{0,200}'|"[^"]{0,200}"/g, '<q>')
    .replace(/\d+/g, 'N')
    .slice(0, 120);
}

function excerpt(buf: Buffer | string, max: number): string {
  const text = typeof buf === 'string' ? buf : buf.toString('utf8');
  const shown = text.length <= max ? text : `${text.slice(0, Math.floor(max * 0.7))} …[${text.length} chars]… ${text.slice(-Math.floor(max * 0.2))}`;
  return JSON.stringify(shown);
}

/** The request, as the report prints it: enough to resend it by hand. */
export function describeRequest(c: Case): string {
  if (c.raw) return `raw bytes (${c.raw.length}): ${excerpt(c.raw.toString('latin1'), 300)}`;
  // eslint-disable-next-line no-control-regex
  const printable = (v: string) => v.replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const headers = c.headers.map(([k, v]) => `${k}: ${printable(v.length > 120 ? `${v.slice(0, 80)}…[${v.length} chars]` : v)}`).join(' | ');
  const body = c.body ? ` body (${c.body.length} bytes${c.chunked ? ', chunked' : ''}): ${excerpt(c.body, 400)}` : '';
  const ws = c.ws ? ` ws: ${c.notes.find((n) => n.includes('frame')) ?? ''}` : '';
  const path = c.path.length > 300 ? `${c.path.slice(0, 200)}…[${c.path.length} chars]` : c.path;
  return `${c.listener} ${c.method} ${path} | ${headers}${body}${ws}`;
}

export function describeAnswer(a: Answer): string {
  if (a.kind !== 'answer')
    return `${a.kind}${a.status ? ` (status ${a.status})` : ''}${a.note ? `: ${a.note}` : ''}${a.body.length ? ` ${excerpt(a.body, 200)}` : ''} after ${a.ms} ms`;
  const ws = a.ws ? ` ws: ${a.ws.framesIn} frames in, close ${a.ws.closeCode ?? 'none'}${a.ws.closedByServer ? ' (server closed)' : ''}` : '';
  return `${a.status} ${a.headers['content-type'] ?? '(no content-type)'} ${excerpt(a.body, 300)}${ws} in ${a.ms} ms`;
}

export interface Example {
  index: number;
  request: string;
  answer: string;
  notes: string[];
}

export interface Group {
  kind: FindingKind;
  /** The grouping key: a route, or the request shape where the route is incidental (empty: by message). */
  key: string;
  /** Every route the group was seen on (first few). */
  routes: string[];
  status: number;
  message: string;
  count: number;
  examples: Example[];
}

const STANDARD_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);

/** What makes a request odd, independent of its route: the grouping key for drops and hangs. */
export function shapeOf(c: Case): string {
  if (c.family !== 'raw' && c.listener === 'tcp' && !c.headers.some(([k]) => k === 'Host')) return 'TCP request without Host';
  switch (c.family) {
    case 'method':
      if (STANDARD_METHODS.has(c.method)) return `standard method ${c.method}${c.body ? ' with a body' : ''}`;
      if (STANDARD_METHODS.has(c.method.toUpperCase())) return 'lower/mixed-case standard method';
      return 'unknown method';
    case 'path':
      return 'odd path';
    case 'headers':
      return `header case: ${
        c.notes[0] ??
        c.headers
          .filter(([k]) => !['Host', 'Authorization', 'Content-Type'].includes(k))
          .map(([k]) => k)
          .slice(0, 2)
          .join(', ')
      }`;
    case 'raw':
      return c.route;
    default:
      return c.route;
  }
}

export class Findings {
  readonly groups = new Map<string, Group>();
  readonly counts = new Map<FindingKind, number>();

  /** `key` decides the grouping; `route` is listed in the group. */
  add(kind: FindingKind, key: string, route: string, status: number, message: string, example: Example, maxExamples: number): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    const k = `${kind}\u0000${key}\u0000${status}\u0000${message}`;
    let g = this.groups.get(k);
    if (!g) this.groups.set(k, (g = { kind, key, routes: [], status, message, count: 0, examples: [] }));
    g.count++;
    if (!g.routes.includes(route) && g.routes.length < 12) g.routes.push(route);
    if (g.examples.length < maxExamples) g.examples.push(example);
  }

  count(kind: FindingKind): number {
    return this.counts.get(kind) ?? 0;
  }

  get total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }

  /** Findings that fail a run: all but the known kinds. */
  get failing(): number {
    let n = 0;
    for (const [kind, v] of this.counts) if (!KNOWN_KINDS.has(kind)) n += v;
    return n;
  }
}

/** The grouping key of a finding: by route where the route is the bug, by request shape where the route is incidental. */
export function groupKey(kind: FindingKind, c: Case): string {
  switch (kind) {
    case 'no-answer':
    case 'parser-drop':
    case 'hang':
    case 'truncated':
      return shapeOf(c);
    case 'non-json-error':
    case 'huge-error-body':
      return c.family === 'method' || c.family === 'path' || c.family === 'headers' || c.family === 'raw' ? shapeOf(c) : '';
    default:
      return c.route;
  }
}
