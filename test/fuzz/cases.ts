/**
 * Case generation: one request per case index, drawn from that index's own PRNG, so a seed always
 * yields the same sequence and any single case can be replayed.
 *
 * Safety rules (tuicd runs real shells, as whoever runs the fuzzer):
 * - Shells and commands come from fixed pools: /bin/sh (with no arguments but -i), /bin/cat,
 *   paths that do not exist or are not executable, and the repo's mock MCP server. Never a random string.
 * - What reaches a terminal (REST write, WebSocket frames, MCP input/submit) is printable text
 *   without newline, or the fixed harmless commands `echo fuzz…`/`:`/`true`. Keys that submit a line
 *   (Enter, Ctrl-D) are never sent. Only the fuzzer's own `cat` sessions, addressed by their exact
 *   id, get arbitrary bytes (cat echoes them).
 * - Every URL a save could make tuicd connect to is on 127.0.0.1/localhost; config keys that would
 *   move or reopen the listener, change auth or the guard get only invalid values.
 */
import type { WsFrameSpec, WsPlan } from './client.js';
import { containmentCase, containmentToolArgs, sessionCwd } from './containment.js';
import { pct, query } from './encoding.js';
import type { Rng } from './rng.js';
import {
  anyTypedText,
  brokenJson,
  deepNest,
  longString,
  nastyNumber,
  nastyString,
  nastyValue,
  obj,
  pollution,
  PROTO_KEYS,
  raw,
  randomText,
  safeTypedText,
  toJson,
  TRAVERSALS,
  typeSafe,
} from './values.js';
import type { J, JObj } from './values.js';

export type Family = 'rest' | 'mcp' | 'ws' | 'sse' | 'method' | 'path' | 'headers' | 'oversize' | 'raw' | 'contain';
export type ListenerKind = 'socket' | 'tcp';

export interface Slot {
  kind: 'sh' | 'cat';
  id: string;
}

/** What the generators may refer to: the harness's own sessions, MCP session, event stream, upstream. */
export interface FuzzCtx {
  seed: number;
  tcpPort: number | null;
  /** `Basic …` for the TCP listener. */
  authHeader: string;
  username: string;
  /** sh, sh, cat, cat: fixed length, so a pick draws the same whatever their ids are now. */
  slots: Slot[];
  mcpSessionId: string;
  eventStreamId: string;
  /** The `{servers}` last read from GET /mcp/upstreams (the base of a save). */
  upstreamBase: J;
  upstreamName: string;
  upstreamId: string;
  nodePath: string;
  mockScript: string;
  /** A git repository the fuzzer's sessions run in (so a root). */
  workDir: string;
  /** Beside workDir and no root: holds secret.txt; workDir/link-out points here. */
  outsideDir: string;
  /** tuicd's HOME (what `~` means to it). */
  home: string;
}

export interface Case {
  index: number;
  family: Family;
  /** The route pattern, for grouping findings (e.g. `POST /sessions/:id/write`). */
  route: string;
  listener: ListenerKind;
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body: Buffer | null;
  chunked: boolean;
  /** Write the head and the body separately (a body that arrives after the head). */
  splitWrite: boolean;
  /** Verbatim request bytes (the raw family), instead of method/path/headers/body. */
  raw: Buffer | null;
  mode: 'http' | 'sse' | 'ws';
  ws?: WsPlan;
  timeoutMs: number;
  /** Long waits are this request's nature (ui confirm, session wait, broken framing): a timeout is no finding. */
  mayBlock: boolean;
  /** Raw protocol garbage: only a crash or a 5xx counts. */
  relaxed: boolean;
  /** TCP: the foreign Host/Origin it carries, which the guard must refuse. */
  crossSite: string | null;
  /** TCP: the bad credentials it carries. */
  badAuth: string | null;
  /** TCP: a body sent as a CORS "simple" content type, which must not be accepted. */
  textPlain: boolean;
  publicRoute: boolean;
  /** Names a path outside every root: a 2xx (or a tool result that is no error) is a breach. */
  outside: boolean;
  /** A file that must not exist after the answer (git ran a command or wrote where it was told). */
  canary: string | null;
  /** Free-form: what the generator did (mutations), for the report. */
  notes: string[];
}

const DEFAULT_TIMEOUT_MS = 15_000;
const BLOCKING_TIMEOUT_MS = 2_000;
const MIB = 1024 * 1024;

const jsonBody = (v: J): Buffer => Buffer.from(toJson(v), 'utf8');

/** A header value the HTTP parser accepts (no controls, latin1 only), so the case tests the route, not the parser. */
function headerSafe(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]/g, '?').replace(/[^\u0000-\u00ff]/g, '?');
}

// ---------------------------------------------------------------------------------------------
// Safe pools

/** Shells that run nothing of ours: dash with no script, cat, or things that cannot start. */
const SHELLS: readonly J[] = [
  '/bin/sh',
  '/bin/sh',
  '/bin/cat',
  'sh',
  '/nonexistent',
  '/nonexistent/fuzz-shell',
  '',
  '~',
  '/tmp',
  '/dev/null',
  '/etc/passwd',
  '../../etc/passwd',
  'a'.repeat(300),
  '/bin/sh\u0000x',
  'shé ll',
  42,
  null,
  ['/bin/sh'],
  obj([]),
];

function shellValue(r: Rng): J {
  return r.pick(SHELLS);
}

/** Arguments that cannot make the chosen shell run anything. */
function argsFor(r: Rng, shell: J): J {
  if (shell === '/bin/cat') return r.pick<J>([[], ['--fuzz-no-such-flag'], ['-u'], ['a'.repeat(5000)], ['-', '-'], [42, null]]);
  if (typeof shell === 'string' && shell.startsWith('/nonexistent')) return r.pick<J>([[], ['--fuzz-no-such-flag'], ['x'.repeat(5000)], 'not-an-array', null]);
  // /bin/sh, the default shell (/bin/sh), or something that fails to start: no script, no -c.
  // Every pool above is just as harmless to /bin/sh, should a mutation drop or retype `shell`.
  return r.pick<J>([[], ['-i'], [42, null, obj([])], 'not-an-array', null, nastyNumber(r)]);
}

/** Upstream commands: nothing executes but cat, true and the repo's mock MCP server. */
function upstreamTransport(r: Rng, ctx: FuzzCtx): J {
  const kind = r.weighted<string>([
    [4, 'mock'],
    [2, 'stdio-other'],
    [3, 'http'],
    [1, 'broken'],
  ]);
  if (kind === 'mock') {
    return obj({
      type: 'stdio',
      command: ctx.nodePath,
      args: r.chance(0.7) ? [ctx.mockScript] : [ctx.mockScript, r.pick(['normal', 'silent', 'exitMidCall'])],
      env: r.chance(0.8)
        ? obj([])
        : obj([
            [
              r.pick(['FUZZ_VAR', '', '__proto__', 'A'.repeat(300), 'BAD=KEY', 'LANG']),
              r.chance(0.5) ? nastyString(r).slice(0, 5000) : nastyValue(r, { strings: false }),
            ],
          ]),
      ...(r.chance(0.2) ? { cwd: r.chance(0.5) ? nastyString(r).slice(0, 5000) : nastyValue(r, { strings: false }) } : {}),
    });
  }
  if (kind === 'stdio-other') {
    const command = r.pick<J>(['/nonexistent/fuzz-upstream', '/bin/cat', '/bin/true', '', '   ', '../../etc/passwd', 'a'.repeat(5000), 42, null]);
    const args =
      command === '/bin/cat' || command === '/bin/true'
        ? r.pick<J>([[], ['-u'], ['--fuzz-no-such-flag']])
        : r.pick<J>([[], [nastyString(r).slice(0, 5000)], 'x', null]);
    return obj({ type: 'stdio', command, args, env: obj([]) });
  }
  if (kind === 'http') return obj({ type: 'http', url: loopbackUrl(r, ctx) });
  return r.pick<J>([
    obj({ type: r.pick(['ws', 'sse', '', 'STDIO']), url: loopbackUrl(r, ctx) }),
    obj({ type: 'stdio' }),
    obj({ type: 'http' }),
    'stdio',
    null,
    obj([[r.pick(PROTO_KEYS), obj({ type: 'stdio', command: '/nonexistent/fuzz-proto' })]]),
  ]);
}

/** URLs whose host is this machine's loopback, or not a URL at all: a save can never reach elsewhere. */
function loopbackUrl(r: Rng, ctx: FuzzCtx): J {
  const port = ctx.tcpPort ?? 1;
  return r.pick<J>([
    'http://127.0.0.1:1/mcp',
    'http://localhost:1/mcp',
    'https://127.0.0.1:1/mcp',
    `http://127.0.0.1:${port}/mcp`,
    `http://localhost:${port}/mcp`,
    'http://[::1]:1/mcp',
    'http://127.0.0.1:1/' + 'a'.repeat(5000),
    'http://127.0.0.1:1/../../etc/passwd',
    'http://u:p@127.0.0.1:1/mcp',
    'ftp://127.0.0.1/x',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'not a url',
    '',
    'http://',
    'http://[::1',
    42,
    null,
  ]);
}

function upstreamServer(r: Rng, ctx: FuzzCtx): J {
  const entries: Array<[string, J]> = [];
  if (r.chance(0.9)) entries.push(['id', r.chance(0.8) ? r.uuid() : r.pick<J>([ctx.upstreamId, '', 'not-a-uuid', 42, nastyString(r)])]);
  if (r.chance(0.9))
    entries.push(['name', r.chance(0.6) ? `fz-${r.hex(4)}` : r.pick<J>([ctx.upstreamName, 'Bad Name', '', 'x'.repeat(1_048_576), nastyString(r), 42])]);
  if (r.chance(0.9)) entries.push(['transport', upstreamTransport(r, ctx)]);
  if (r.chance(0.5)) entries.push(['enabled', r.chance(0.7) ? r.pick([true, false]) : nastyValue(r, { strings: false })]);
  if (r.chance(0.5)) entries.push(['timeout_secs', r.chance(0.5) ? r.int(0, 5) : nastyNumber(r)]);
  if (r.chance(0.3))
    entries.push([
      'tool_filter',
      obj({ mode: r.pick<J>(['allow', 'deny', 'maybe', 42]), patterns: r.pick<J>([['echo'], ['*'], ['e*'], [nastyString(r).slice(0, 5000)], [42], 'echo']) }),
    ]);
  if (r.chance(0.2)) {
    entries.push([
      'auth',
      r.pick<J>([
        obj({ type: 'bearer', token: nastyString(r).slice(0, 5000) }),
        obj({
          type: 'oauth2',
          client_id: nastyString(r).slice(0, 500),
          scopes: [nastyString(r).slice(0, 500)],
          authorization_endpoint: loopbackUrl(r, ctx),
          token_endpoint: loopbackUrl(r, ctx),
        }),
        obj({ type: 'basic' }),
        nastyValue(r, { strings: false }),
      ]),
    ]);
  }
  if (r.chance(0.2))
    entries.push([
      'headers',
      r.pick<J>([
        [obj({ name: 'X-Fuzz', credential_ref: r.uuid() })],
        [obj({ name: '', credential_ref: 'x' })],
        [obj({ name: 'Bad\r\nHeader', credential_ref: r.uuid() })],
        'x',
      ]),
    ]);
  if (r.chance(0.1)) entries.push(pollution(r));
  return obj(entries);
}

/** Stable copy of the harness's mock upstream: what the maintenance loop restores. */
export function baselineUpstreams(ctx: Pick<FuzzCtx, 'upstreamId' | 'upstreamName' | 'nodePath' | 'mockScript'>): object {
  return {
    servers: [
      {
        id: ctx.upstreamId,
        name: ctx.upstreamName,
        transport: { type: 'stdio', command: ctx.nodePath, args: [ctx.mockScript], env: {} },
        enabled: true,
        timeout_secs: 5,
        tool_filter: { mode: 'allow', patterns: ['echo', 'whoami', 'rpcError', 'initParams'] },
      },
    ],
  };
}

/**
 * A partial config for PUT /config or the config tool. Harmless keys get any value; keys that move
 * the listener, change auth, the guard, timeouts or limits, TLS or the default shell get only
 * values the schema refuses (or a safe one).
 */
export function configPartial(r: Rng): J {
  const entries: Array<[string, J]> = [];
  const n = r.int(1, 4);
  for (let i = 0; i < n; i++) {
    const which = r.int(0, 17);
    switch (which) {
      case 0:
        entries.push([
          r.pick(['theme', 'language', 'font_family', 'update_channel', 'issue_filter', 'index_strategy']),
          r.chance(0.6) ? nastyString(r) : nastyValue(r),
        ]);
        break;
      case 1:
        entries.push([r.pick(['font_size', 'standby_timeout_minutes', 'mcp_port']), nastyNumber(r)]);
        break;
      case 2:
        entries.push([
          r.pick(['collapse_tools', 'progress_tracking', 'intent_tab_title', 'suggest_followups', 'ai_terminal_mcp_enabled']),
          r.chance(0.7) ? r.pick([true, false]) : nastyValue(r),
        ]);
        break;
      case 3:
        entries.push(['mcp_server_enabled', r.chance(0.2) ? false : r.chance(0.5) ? true : nastyValue(r, { strings: false })]);
        break;
      case 4:
        entries.push([
          r.pick(['disabled_native_tools', 'disabled_mcp_agents']),
          r.pick<J>([['config', 'debug'], [], ['session'], [nastyString(r)], [42], 'config', nastyValue(r, { strings: false })]),
        ]);
        break;
      case 5:
        entries.push(['shell', r.pick<J>([null, '/bin/sh', '/nonexistent/fuzz-shell', 42, obj([]), ['x']])]);
        break;
      case 6:
        entries.push(['ego_executable', r.pick<J>(['', '/nonexistent/fuzz-ego', 42, null])]);
        break;
      case 7: {
        // Invalid only: a valid port, timeout or limit would move or cripple the listener under test.
        const bad = r.pick<[string, J][]>([
          [
            ['enabled', 'yes'],
            ['enabled', 1],
            ['enabled', null],
          ],
          [
            ['port', -1],
            ['port', 65536],
            ['port', 1.5],
            ['port', '80'],
            ['port', raw('1e999')],
          ],
          [
            ['max_sessions', 0],
            ['max_sessions', -1],
            ['max_sessions', 'x'],
            ['max_sessions', 1.5],
          ],
          [
            ['request_timeout_ms', 0],
            ['request_timeout_ms', -5],
            ['request_timeout_ms', 'x'],
          ],
          [
            ['max_body_bytes', 0],
            ['max_body_bytes', -1],
            ['max_body_bytes', raw('9'.repeat(400))],
          ],
          [
            ['max_mcp_sessions', 0],
            ['max_mcp_sessions', 'many'],
          ],
          [
            ['allowed_hosts', ['']],
            ['allowed_hosts', ['a'.repeat(300)]],
            ['allowed_hosts', [42]],
            ['allowed_hosts', 'evil.example'],
          ],
          [
            ['allowed_origins', ['']],
            ['allowed_origins', [42]],
            ['allowed_origins', ['h'.repeat(3000)]],
            ['allowed_origins', 'http://evil.example'],
          ],
          [
            ['ipv6_enabled', 'true'],
            ['ipv6_enabled', 1],
          ],
        ]);
        entries.push(['services', obj({ server: obj([r.pick(bad)]) })]);
        break;
      }
      case 8: {
        const bad = r.pick<[string, J]>([
          ['username', 42],
          ['username', null],
          ['password_hash', 42],
          ['password_hash', obj([])],
          ['session_token', 42],
          ['session_token_duration_secs', 0],
          ['session_token_duration_secs', -1],
          ['lan_auth_bypass', 'yes'],
          ['auth_rate_limit_max', -1],
          ['auth_rate_limit_max', 'x'],
          ['auth_rate_limit_window_secs', 0],
        ]);
        entries.push(['services', obj({ auth: obj([bad]) })]);
        break;
      }
      case 9:
        entries.push([
          'services',
          obj({ tls: r.pick<J>([obj({ mode: 'manual' }), obj({ mode: 'manual', cert_path: '', key_path: '' }), obj({ mode: 'weird' }), 'off', 42, null]) }),
        ]);
        break;
      case 10:
        entries.push([
          'services',
          obj({
            relay: obj([
              r.pick<[string, J]>([
                ['enabled', 'x'],
                ['url', loopbackUrlLite(r)],
                ['token', nastyString(r).slice(0, 5000)],
                ['session_id', nastyString(r).slice(0, 5000)],
              ]),
            ]),
          }),
        ]);
        break;
      case 11:
        entries.push([
          'services',
          obj({
            push: obj([
              r.pick<[string, J]>([
                ['enabled', 'x'],
                ['vapid_private_key', nastyString(r).slice(0, 5000)],
                ['vapid_public_key', 42],
                ['vapid_subject', nastyString(r).slice(0, 5000)],
              ]),
            ]),
          }),
        ]);
        break;
      case 12:
        // Not null: a merge-patch null resets the section to its defaults (TCP off, no auth) by design.
        entries.push(['services', r.pick<J>([42, 'x', [], obj([['server', 42]]), obj([['auth', []]])])]);
        break;
      case 13:
        entries.push(pollution(r));
        break;
      case 14:
        entries.push([nastyString(r).slice(0, 2000), nastyValue(r)]);
        break;
      case 15:
        entries.push([`fuzz_unknown_${r.hex(4)}`, deepNest(r.pick([100, 5000, 50_000]), r.pick(['array', 'object'] as const))]);
        break;
      default:
        entries.push([r.pick(['theme', 'language']), longString(r)]);
    }
  }
  return obj(entries);
}

function loopbackUrlLite(r: Rng): string {
  return r.pick(['http://127.0.0.1:1/relay', 'ws://localhost:1/relay', 'not a url', '']);
}

// ---------------------------------------------------------------------------------------------
// Session references

interface Ref {
  ref: string;
  /** The exact id of a harness `cat` session: the only target arbitrary bytes may be typed into. */
  cat: boolean;
  slot: Slot | null;
}

function sessionRef(r: Rng, ctx: FuzzCtx): Ref {
  return r.weighted<() => Ref>([
    [
      10,
      () => {
        const slot = r.pick(ctx.slots);
        return { ref: slot.id, cat: slot.kind === 'cat', slot };
      },
    ],
    [2, () => ({ ref: `tu-${r.int(0, 6)}`, cat: false, slot: null })],
    [1, () => ({ ref: r.uuid(), cat: false, slot: null })],
    [4, () => ({ ref: nastyString(r).slice(0, r.chance(0.9) ? 2000 : 200_000), cat: false, slot: null })],
  ])();
}

// ---------------------------------------------------------------------------------------------
// Body mutation

/** Structure-level mutations that cannot smuggle an unsafe string into a sensitive field. */
function mutateBody(r: Rng, body: J, notes: string[], sensitive: boolean): J | Buffer {
  const m = r.int(0, 8);
  switch (m) {
    case 0:
      notes.push('body: broken JSON');
      return brokenJson(r, toJson(body), !sensitive);
    case 1:
      notes.push('body: wrapped in an array');
      return [body];
    case 2:
      notes.push('body: replaced by a non-object');
      return nastyValue(r, { strings: r.chance(0.5) });
    case 3:
      if (isJObj(body)) {
        const p = pollution(r);
        notes.push(`body: added ${p[0]} key`);
        return obj([...body.$obj, p]);
      }
      return body;
    case 4:
      if (isJObj(body) && body.$obj.length > 0) {
        const [k] = r.pick(body.$obj);
        notes.push(`body: duplicate key ${k}`);
        return obj([...body.$obj, [k, nastyValue(r, { strings: false })]]);
      }
      return body;
    case 5:
      if (isJObj(body) && body.$obj.length > 0) {
        const i = r.int(0, body.$obj.length - 1);
        notes.push(`body: dropped key ${body.$obj[i]![0]}`);
        return obj(body.$obj.filter((_, j) => j !== i));
      }
      return body;
    case 6:
      if (isJObj(body) && body.$obj.length > 0) {
        const i = r.int(0, body.$obj.length - 1);
        notes.push(`body: wrong type for ${body.$obj[i]![0]}`);
        return obj(body.$obj.map(([k, v], j): [string, J] => [k, j === i ? nastyValue(r, { strings: false }) : v]));
      }
      return body;
    case 7:
      notes.push('body: deep nesting');
      return deepNest(r.pick([1000, 10_000, 100_000]), r.pick(['array', 'object'] as const), body);
    default:
      notes.push('body: extra unknown keys');
      return isJObj(body) ? obj([...body.$obj, [nastyString(r).slice(0, 1000), nastyValue(r, { strings: false })]]) : body;
  }
}

function isJObj(v: J): v is JObj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && '$obj' in v;
}

// ---------------------------------------------------------------------------------------------
// REST routes

interface RouteDraft {
  method: string;
  route: string;
  path: string;
  /** JSON body (mutated later) or raw bytes; undefined for no body. */
  body?: J | Buffer;
  headers?: Array<[string, string]>;
  mayBlock?: boolean;
  timeoutMs?: number;
  publicRoute?: boolean;
  /** The body may reach a terminal or a spawn: mutations stay structural (no byte flips that could forge a newline escape or a command name). */
  sensitive?: boolean;
}

type RouteGen = (r: Rng, ctx: FuzzCtx) => RouteDraft;

function numParam(r: Rng): string {
  return r.pick([
    '0',
    '1',
    '5',
    '200',
    '10000',
    '10001',
    '-1',
    '1.5',
    '1e3',
    '1e309',
    'NaN',
    '0x10',
    ' 5',
    '5abc',
    '',
    '9'.repeat(40),
    '-0',
    String(2 ** 53 + 1),
  ]);
}

function maybe<T>(r: Rng, p: number, f: () => T): T | undefined {
  return r.chance(p) ? f() : undefined;
}

const REST: Array<[number, RouteGen]> = [
  [2, () => ({ method: 'GET', route: 'GET /health', path: '/health', publicRoute: true })],
  [1, () => ({ method: 'GET', route: 'GET /api/version', path: '/api/version' })],
  [1, () => ({ method: 'GET', route: 'GET /stats', path: '/stats' })],
  [
    2,
    (r) => ({
      method: 'GET',
      route: 'GET /metrics',
      path: '/metrics' + query(r.chance(0.5) ? [['format', r.pick(['prometheus', 'json', '', nastyString(r).slice(0, 500)])]] : []),
      headers: r.chance(0.3)
        ? [['Accept', r.pick(['text/plain', 'text/plain;q=0', '*/*', 'application/json, text/plain', headerSafe(nastyString(r).slice(0, 300))])]]
        : [],
    }),
  ],
  [
    1,
    (r) => {
      const path = r.pick(['/auth/hash-password', '/config/hash-password']);
      return {
        method: 'POST',
        route: `POST ${path}`,
        path,
        body: obj({
          password: r.weighted<J>([
            [3, randomText(r, r.int(1, 30))],
            [1, 'x'.repeat(73)],
            [1, 'é'.repeat(40)],
            [2, nastyValue(r)],
            [1, ''],
          ]),
        }),
      };
    },
  ],
  [2, () => ({ method: 'GET', route: 'GET /config', path: '/config' })],
  [5, (r) => ({ method: 'PUT', route: 'PUT /config', path: '/config', body: configPartial(r), sensitive: true })],
  [
    2,
    (r) => ({
      method: 'POST',
      route: 'POST /config/project-mcp-upstreams',
      path: '/config/project-mcp-upstreams',
      body: obj({
        repoPath: r.pick<J>([`/tmp/fz-repo-${r.hex(4)}`, r.pick(TRAVERSALS), '/tmp/a\u0000b', 'relative/path', '', nastyString(r).slice(0, 100_000), 42, null]),
        upstreamNames: r.pick<J>([['mock'], [], null, [''], [nastyString(r).slice(0, 5000)], [42], 'mock', obj([])]),
      }),
    }),
  ],
  [
    2,
    (r, ctx) => ({
      method: 'POST',
      route: 'POST /events/types',
      path: '/events/types',
      body: obj({
        stream_id: r.pick<J>([ctx.eventStreamId, ctx.eventStreamId, 'fz-no-such-stream', '', nastyString(r).slice(0, 5000), 42]),
        types: r.pick<J>([null, [], ['session-created', 'session-closed'], ['*'], [nastyString(r).slice(0, 5000)], [42], 'session-created', obj([])]),
      }),
    }),
  ],
  [3, () => ({ method: 'GET', route: 'GET /sessions', path: '/sessions' })],
  [
    4,
    (r, ctx) => {
      const shell = shellValue(r);
      const entries: Array<[string, J]> = [];
      const withShell = r.chance(0.8);
      if (withShell) entries.push(['shell', shell]);
      if (r.chance(0.5)) entries.push(['args', argsFor(r, withShell ? shell : '/bin/sh')]);
      if (r.chance(0.6))
        entries.push([
          'cwd',
          sessionCwd(r.chance(0.5) ? ctx.workDir : r.chance(0.7) ? nastyString(r).slice(0, 5000) : nastyValue(r, { strings: false }), ctx)!,
        ]);
      if (r.chance(0.4)) entries.push(['rows', r.chance(0.5) ? r.int(1, 500) : nastyNumber(r)]);
      if (r.chance(0.4)) entries.push(['cols', r.chance(0.5) ? r.int(1, 500) : nastyNumber(r)]);
      if (r.chance(0.3)) entries.push(['session_id', r.pick<J>([`fz-${r.hex(8)}`, ctx.slots[0]!.id, nastyString(r).slice(0, 5000), 42])]);
      if (r.chance(0.3)) entries.push(['alias', r.pick<J>([`tu-${r.int(0, 5)}`, nastyString(r).slice(0, 5000), 42])]);
      if (r.chance(0.2)) entries.push(['tuic_session', r.pick<J>([`fz-tuic-${r.hex(6)}`, nastyString(r).slice(0, 5000), 42])]);
      if (r.chance(0.2)) entries.push(['display_name', nastyString(r)]);
      return { method: 'POST', route: 'POST /sessions', path: '/sessions', body: obj(entries), sensitive: true };
    },
  ],
  [
    6,
    (r, ctx) => {
      const t = sessionRef(r, ctx);
      const data = r.chance(0.85) ? (t.cat ? anyTypedText(r) : safeTypedText(r)) : nastyValue(r, { strings: false });
      return { method: 'POST', route: 'POST /sessions/:id/write', path: `/sessions/${pct(t.ref)}/write`, body: obj({ data }), sensitive: !t.cat };
    },
  ],
  [
    3,
    (r, ctx) => {
      const t = sessionRef(r, ctx);
      return {
        method: 'POST',
        route: 'POST /sessions/:id/resize',
        path: `/sessions/${pct(t.ref)}/resize`,
        body: obj({ rows: r.chance(0.4) ? r.int(1, 500) : nastyNumber(r), cols: r.chance(0.4) ? r.int(1, 500) : nastyNumber(r) }),
      };
    },
  ],
  [
    2,
    (r, ctx) => {
      const t = sessionRef(r, ctx);
      const which = r.pick(['pause', 'resume']);
      return {
        method: 'POST',
        route: `POST /sessions/:id/${which}`,
        path: `/sessions/${pct(t.ref)}/${which}`,
        ...(r.chance(0.3) ? { body: nastyValue(r, { strings: false }) } : {}),
      };
    },
  ],
  [
    5,
    (r, ctx) => {
      const t = sessionRef(r, ctx);
      const params: Array<[string, string]> = [];
      if (r.chance(0.7)) params.push(['format', r.pick(['raw', 'text', 'log', 'log', '', 'LOG', nastyString(r).slice(0, 500)])]);
      for (const k of ['limit', 'offset', 'since_cursor']) if (r.chance(0.4)) params.push([k, numParam(r)]);
      if (r.chance(0.1)) params.push(['limit', numParam(r)]);
      return { method: 'GET', route: 'GET /sessions/:id/output', path: `/sessions/${pct(t.ref)}/output${query(params)}` };
    },
  ],
  [
    2,
    (r, ctx) => {
      const t = sessionRef(r, ctx);
      const which = r.pick(['shell-family', 'shell-state']);
      return { method: 'GET', route: `GET /sessions/:id/${which}`, path: `/sessions/${pct(t.ref)}/${which}` };
    },
  ],
  [1, (r, ctx) => ({ method: 'DELETE', route: 'DELETE /sessions/:id', path: `/sessions/${pct(sessionRef(r, ctx).ref)}` })],
  [1, () => ({ method: 'GET', route: 'GET /process/stats', path: '/process/stats' })],
  [1, () => ({ method: 'GET', route: 'GET /process/monitor', path: '/process/monitor' })],
  [
    3,
    (r) => {
      const params: Array<[string, string]> = [];
      if (r.chance(0.5)) params.push(['level', r.pick(['debug', 'info', 'warn', 'error', 'fatal', 'INFO', '', nastyString(r).slice(0, 500)])]);
      if (r.chance(0.4)) params.push(['source', r.pick(['app', 'fuzz', '', nastyString(r).slice(0, 500)])]);
      if (r.chance(0.5)) params.push(['limit', numParam(r)]);
      return { method: 'GET', route: 'GET /logs', path: `/logs${query(params)}` };
    },
  ],
  [
    3,
    (r) => ({
      method: 'POST',
      route: 'POST /logs',
      path: '/logs',
      body: obj({
        level: r.pick<J>(['info', 'warn', 'error', 'debug', 'fatal', 'INFO', '', nastyString(r).slice(0, 1000), 42]),
        source: r.pick<J>(['fuzz', 'app', '', nastyString(r), 42]),
        message: r.chance(0.7) ? nastyString(r) : nastyValue(r),
        ...(r.chance(0.4) ? { data_json: r.pick<J>(['{"a":1}', '{', '', nastyString(r), toJson(deepNest(2000, 'array')), 42]) } : {}),
      }),
    }),
  ],
  [1, () => ({ method: 'DELETE', route: 'DELETE /logs', path: '/logs' })],
  [1, () => ({ method: 'GET', route: 'GET /mcp/status', path: '/mcp/status' })],
  [1, () => ({ method: 'GET', route: 'GET /mcp/instructions', path: '/mcp/instructions' })],
  [
    2,
    (r) => ({
      method: 'POST',
      route: 'POST /mcp/confirm-response',
      path: '/mcp/confirm-response',
      body: obj({ request_id: r.pick<J>([r.uuid(), '', nastyString(r), 42, null]), confirmed: r.pick<J>([true, false, 'yes', 1, null]) }),
    }),
  ],
  [
    2,
    (r) => {
      const params: Array<[string, string]> = [];
      if (r.chance(0.5)) params.push(['project', r.pick(['/tmp', 'unknown', '', nastyString(r).slice(0, 5000)])]);
      if (r.chance(0.6)) params.push(['limit', numParam(r)]);
      return { method: 'GET', route: 'GET /progress/list', path: `/progress/list${query(params)}` };
    },
  ],
  [2, () => ({ method: 'GET', route: 'GET /mcp/upstreams', path: '/mcp/upstreams' })],
  [
    4,
    (r, ctx) => {
      const servers = Array.from(
        {
          length: r.weighted<number>([
            [2, 0],
            [6, 1],
            [2, 2],
            [1, 3],
          ]),
        },
        () => upstreamServer(r, ctx),
      );
      const body = obj({
        base: r.weighted<J>([
          [6, ctx.upstreamBase],
          [1, obj({ servers: [] })],
          [1, nastyValue(r, { strings: false })],
          [1, obj({ servers: [obj({ id: r.uuid() })] })],
        ]),
        config: r.weighted<J>([
          [8, obj({ servers })],
          [1, nastyValue(r, { strings: false })],
          [1, obj({ servers: 'x' })],
        ]),
      });
      return { method: 'PUT', route: 'PUT /mcp/upstreams', path: '/mcp/upstreams', body, timeoutMs: 30_000, sensitive: true };
    },
  ],
  [2, () => ({ method: 'GET', route: 'GET /mcp/upstream-status', path: '/mcp/upstream-status' })],
  [
    2,
    (r, ctx) => ({
      method: 'POST',
      route: 'POST /mcp/upstreams/reconnect',
      path: '/mcp/upstreams/reconnect',
      body: obj({ name: r.pick<J>([ctx.upstreamName, 'fz-none', '', 'x'.repeat(r.pick([300, 1_048_576])), nastyString(r), 42]) }),
      timeoutMs: 30_000,
    }),
  ],
  [
    3,
    (r, ctx) => {
      const method = r.pick(['POST', 'DELETE']);
      const entries: Array<[string, J]> = [
        ['name', r.pick<J>([ctx.upstreamName, 'fz-cred', 'Bad Name', '', 'x'.repeat(r.pick([300, 1_048_576])), nastyString(r), 42])],
      ];
      if (r.chance(0.3))
        entries.push([
          'header',
          r.pick<J>([
            obj({ name: 'X-Fuzz', credential_ref: r.uuid() }),
            obj({ name: '', credential_ref: 'nope' }),
            obj({ name: nastyString(r), credential_ref: r.uuid() }),
            'x',
            null,
          ]),
        ]);
      if (method === 'POST' || r.chance(0.2)) entries.push(['token', r.pick<J>([`fz-token-${r.hex(8)}`, '', nastyString(r), 42])]);
      return { method, route: `${method} /mcp/upstreams/credential`, path: '/mcp/upstreams/credential', body: obj(entries) };
    },
  ],
  [1, () => ({ method: 'GET', route: 'GET /diagnostics/capture', path: '/diagnostics/capture' })],
  [
    1,
    (r, ctx) => ({
      method: 'POST',
      route: 'POST /diagnostics/capture',
      path: '/diagnostics/capture',
      body: obj({
        enabled: r.pick<J>([true, false, false, 'yes', null]),
        ...(r.chance(0.5) ? { session_id: r.pick<J>([ctx.slots[0]!.id, ctx.slots[2]!.id, '', nastyString(r).slice(0, 5000), 42]) } : {}),
      }),
    }),
  ],
];

// ---------------------------------------------------------------------------------------------
// MCP

const TOOL_NAMES: Array<readonly [number, string]> = [
  [8, 'session'],
  [2, 'task'],
  [2, 'progress'],
  [3, 'ui'],
  [1, 'plugin_dev_guide'],
  [2, 'config'],
  [2, 'debug'],
  [1, 'search_tools'],
  [1, 'get_tool_schema'],
  [2, 'call_tool'],
  [2, 'mock__echo'],
  [1, 'mock__whoami'],
  [1, 'mock__rpcError'],
  [1, 'mock__initParams'],
  [2, 'repo'],
  [2, '*nasty*'],
];

/** Special keys that cannot submit a line to a shell (no Enter, no Ctrl-D). */
const SAFE_KEYS = [
  'tab',
  'ctrl+c',
  'ctrl+z',
  'ctrl+l',
  'ctrl+a',
  'ctrl+e',
  'ctrl+k',
  'ctrl+u',
  'ctrl+w',
  'ctrl+r',
  'up',
  'down',
  'left',
  'right',
  'home',
  'end',
  'backspace',
  'delete',
  'escape',
  ' TAB ',
  'Ctrl+C',
  'f1',
  'ctrl+x',
  '',
  '__proto__',
  'constructor',
];
const ANY_KEYS = [...SAFE_KEYS, 'enter', ' ENTER ', 'ctrl+d'];

interface ToolCall {
  name: string;
  args: J;
  mayBlock: boolean;
}

function toolArgs(r: Rng, ctx: FuzzCtx, name: string, depth: number): ToolCall {
  const e: Array<[string, J]> = [];
  let mayBlock = false;
  const put = (k: string, v: J | undefined) => {
    if (v !== undefined) e.push([k, v]);
  };
  switch (name) {
    case 'session': {
      const action = r.weighted<string>([
        [3, 'list'],
        [1, 'create'],
        [2, 'submit'],
        [3, 'input'],
        [3, 'output'],
        [2, 'status'],
        [1, 'wait'],
        [1, 'resize'],
        [1, 'close'],
        [1, 'kill'],
        [1, 'pause'],
        [1, 'resume'],
        [1, 'process_stats'],
        [1, '*nasty*'],
      ]);
      put('action', action === '*nasty*' ? nastyValue(r) : action);
      const t = sessionRef(r, ctx);
      if (action !== 'list' && action !== 'create' && action !== 'process_stats' ? r.chance(0.9) : r.chance(0.1))
        put('session_id', r.chance(0.9) ? t.ref : nastyValue(r, { strings: false }));
      switch (action) {
        case 'create':
          put(
            'shell',
            maybe(r, 0.8, () => shellValue(r)),
          );
          put(
            'cwd',
            sessionCwd(
              maybe(r, 0.5, () => (r.chance(0.5) ? ctx.workDir : nastyString(r).slice(0, 5000))),
              ctx,
            ),
          );
          put(
            'rows',
            maybe(r, 0.3, () => nastyNumber(r)),
          );
          put(
            'cols',
            maybe(r, 0.3, () => nastyNumber(r)),
          );
          break;
        case 'submit':
          put('input', t.cat ? anyTypedText(r) : r.pick<J>(['echo fuzz', ':', 'true', `echo fuzz-${r.hex(6)}`, 'echo a\necho b', '', '   ', 42, null]));
          put(
            'timeout_ms',
            maybe(r, 0.5, () => (r.chance(0.5) ? r.int(250, 3000) : nastyNumber(r))),
          );
          put(
            'pty_description',
            maybe(r, 0.3, () => nastyValue(r)),
          );
          break;
        case 'input':
          put(
            'input',
            maybe(r, 0.8, () => (t.cat ? anyTypedText(r) : r.chance(0.9) ? safeTypedText(r) : nastyValue(r, { strings: false }))),
          );
          put(
            'special_key',
            maybe(r, 0.4, () => (r.chance(0.9) ? r.pick(t.cat ? ANY_KEYS : SAFE_KEYS) : nastyValue(r, { strings: false }))),
          );
          put(
            'pty_description',
            maybe(r, 0.2, () => nastyValue(r)),
          );
          break;
        case 'output':
          put(
            'format',
            maybe(r, 0.5, () => r.pick<J>(['text', 'raw', 'log', '', 42])),
          );
          for (const k of ['limit', 'from_line', 'since_cursor'])
            put(
              k,
              maybe(r, 0.3, () => (r.chance(0.5) ? r.int(0, 300) : nastyNumber(r))),
            );
          break;
        case 'wait':
          mayBlock = true;
          put(
            'until',
            maybe(r, 0.7, () => r.pick<J>(['idle', 'exited', 'never', '', 42])),
          );
          put(
            'timeout_ms',
            maybe(r, 0.7, () => (r.chance(0.5) ? r.int(1, 1500) : nastyNumber(r))),
          );
          break;
        case 'resize':
          put('rows', r.chance(0.5) ? r.int(1, 500) : nastyNumber(r));
          put('cols', r.chance(0.5) ? r.int(1, 500) : nastyNumber(r));
          break;
        default:
          break;
      }
      break;
    }
    case 'task':
      put('action', r.pick<J>(['get', 'cancel', 'list', '', 42]));
      put(
        'task_id',
        maybe(r, 0.9, () => r.pick<J>([r.uuid(), '', nastyString(r), 42])),
      );
      break;
    case 'progress':
      put(
        'type',
        maybe(r, 0.9, () => r.pick<J>(['done', 'blocked', 'intent', 'message', '', nastyString(r), 42])),
      );
      put(
        'text',
        maybe(r, 0.9, () => (r.chance(0.7) ? nastyString(r) : nastyValue(r))),
      );
      put(
        'step',
        maybe(r, 0.4, () => nastyValue(r)),
      );
      break;
    case 'ui': {
      const action = r.weighted<J>([
        [4, 'toast'],
        [3, 'tab'],
        [1, 'confirm'],
        [1, 'screenshot'],
        [1, nastyString(r)],
      ]);
      if (action === 'confirm') mayBlock = true;
      put('action', action);
      put(
        'title',
        maybe(r, 0.9, () => nastyValue(r)),
      );
      put(
        'message',
        maybe(r, 0.5, () => nastyValue(r)),
      );
      put(
        'id',
        maybe(r, 0.5, () => nastyValue(r)),
      );
      put(
        'html',
        maybe(r, 0.4, () => (r.chance(0.7) ? nastyString(r) : nastyValue(r))),
      );
      put(
        'url',
        maybe(r, 0.4, () =>
          r.pick<J>([
            'http://127.0.0.1:1/',
            'https://example.invalid/',
            'javascript:alert(1)',
            'file:///etc/passwd',
            'file://',
            'tuic://edit//etc/passwd?line=1',
            'tuic://open/x',
            'vscode://x',
            'http://[',
            nastyString(r),
          ]),
        ),
      );
      put(
        'level',
        maybe(r, 0.4, () => r.pick<J>(['info', 'warn', 'error', 'fatal', 42])),
      );
      put(
        'sound',
        maybe(r, 0.3, () => r.pick<J>([true, false, 'question', 'attention', 'beep', 42])),
      );
      put(
        'pinned',
        maybe(r, 0.2, () => nastyValue(r, { strings: false })),
      );
      put(
        'focus',
        maybe(r, 0.2, () => nastyValue(r, { strings: false })),
      );
      break;
    }
    case 'config':
      put('action', r.pick<J>(['get', 'save', 'save', 'prompt', '', 42]));
      put(
        'config',
        maybe(r, 0.8, () => (r.chance(0.85) ? configPartial(r) : nastyValue(r, { strings: false }))),
      );
      break;
    case 'debug':
      put('action', r.pick<J>(['sessions', 'logs', 'agent_detection', 'help', 'invoke_js', nastyString(r), 42]));
      put(
        'level',
        maybe(r, 0.3, () => r.pick<J>(['info', 'warn', 'trace', 'bogus', 42])),
      );
      put(
        'source',
        maybe(r, 0.3, () => nastyValue(r)),
      );
      put(
        'limit',
        maybe(r, 0.3, () => nastyNumber(r)),
      );
      put(
        'session_id',
        maybe(r, 0.3, () => sessionRef(r, ctx).ref),
      );
      put(
        'script',
        maybe(r, 0.2, () => 'document.title'),
      );
      break;
    case 'search_tools':
      put(
        'query',
        maybe(r, 0.9, () => nastyValue(r)),
      );
      put(
        'limit',
        maybe(r, 0.5, () => nastyNumber(r)),
      );
      break;
    case 'get_tool_schema':
      put(
        'tool_name',
        maybe(r, 0.9, () => (r.chance(0.6) ? r.weighted(TOOL_NAMES) : nastyValue(r))),
      );
      break;
    case 'call_tool': {
      let inner = r.weighted(TOOL_NAMES);
      if (inner === '*nasty*' || depth > 0) inner = r.chance(0.5) ? 'call_tool' : nastyString(r);
      if (inner === 'call_tool' && depth > 0) inner = 'plugin_dev_guide';
      const call = TOOL_SET.has(inner) ? toolArgs(r, ctx, inner, depth + 1) : { name: inner, args: nastyValue(r, { strings: false }), mayBlock: false };
      mayBlock = call.mayBlock;
      put('tool_name', call.name);
      put('arguments', call.args);
      break;
    }
    case 'mock__echo':
      put(
        'text',
        maybe(r, 0.9, () => nastyValue(r)),
      );
      break;
    default:
      if (r.chance(0.5)) put(nastyString(r).slice(0, 500), nastyValue(r, { strings: false }));
  }
  if (r.chance(0.08)) {
    const [k] = r.chance(0.5) ? pollution(r) : [nastyString(r).slice(0, 200)];
    put(k, nastyValue(r, { strings: false }));
  }
  const args: J = r.chance(0.06) ? nastyValue(r, { strings: false }) : obj(e);
  return { name, args, mayBlock };
}

const TOOL_SET = new Set(TOOL_NAMES.map(([, n]) => n).filter((n) => n !== '*nasty*'));

function rpcId(r: Rng, index: number): J {
  return r.weighted<J>([
    [8, index],
    [2, `fz-${index}`],
    [1, null],
    [1, nastyValue(r, { strings: false })],
    [1, 'x'.repeat(r.pick([300, 100_000]))],
  ]);
}

interface McpDraft {
  body: Buffer;
  what: string;
  mayBlock: boolean;
  outside?: boolean;
}

function mcpMessage(r: Rng, ctx: FuzzCtx, index: number): McpDraft {
  const id = rpcId(r, index);
  const rpc = (method: J, params?: J): J => obj({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
  const kind = r.weighted<string>([
    [6, 'initialize'],
    [5, 'tools/list'],
    [22, 'tools/call'],
    [2, 'ping'],
    [3, 'notification'],
    [1, 'response'],
    [2, 'unknown'],
    [8, 'malformed'],
  ]);
  switch (kind) {
    case 'initialize': {
      const clientName = r.pick<J>(['fuzz', 'claude-code', 'tuic-bridge', 'grok-shell-fz', '', nastyString(r), 42]);
      const params = obj({
        protocolVersion: r.pick<J>(['2025-11-25', '2026-07-28', '2025-03-26', '1999-01-01', '', 42, null]),
        capabilities: r.chance(0.8) ? obj({ roots: obj({ listChanged: true }) }) : nastyValue(r, { strings: false }),
        clientInfo: r.chance(0.9) ? obj({ name: clientName, version: r.pick<J>(['1.0', nastyString(r), 42]) }) : nastyValue(r, { strings: false }),
        ...(r.chance(0.4)
          ? {
              roots: r.pick<J>([
                [obj({ uri: `file://${ctx.workDir}` })],
                [obj({ uri: r.pick<J>(['file:///../../etc', 'file://%zz', 'http://x', '', nastyString(r).slice(0, 5000), 42]) })],
                [],
                'x',
              ]),
            }
          : {}),
      });
      return {
        body: jsonBody(r.chance(0.9) ? rpc('initialize', params) : rpc('initialize', nastyValue(r, { strings: false }))),
        what: 'initialize',
        mayBlock: false,
      };
    }
    case 'tools/list':
      return {
        body: jsonBody(rpc('tools/list', r.chance(0.8) ? undefined : r.pick<J>([obj({ cursor: nastyString(r) }), nastyValue(r, { strings: false })]))),
        what: 'tools/list',
        mayBlock: false,
      };
    case 'tools/call': {
      const name = r.weighted(TOOL_NAMES);
      if (name === 'repo') {
        // The repo tool asked about a directory outside every root: its result must be an error.
        const params = obj({ name, arguments: obj(containmentToolArgs(r, ctx)) });
        return { body: jsonBody(rpc('tools/call', params)), what: 'tools/call repo (outside)', mayBlock: false, outside: true };
      }
      const call = name === '*nasty*' ? { name: nastyString(r), args: nastyValue(r, { strings: false }), mayBlock: false } : toolArgs(r, ctx, name, 0);
      const params = r.chance(0.95)
        ? obj({ name: call.name, arguments: call.args, ...(r.chance(0.1) ? { _meta: nastyValue(r, { strings: false }) } : {}) })
        : nastyValue(r, { strings: false });
      return { body: jsonBody(rpc('tools/call', params)), what: `tools/call ${call.name.slice(0, 40)}`, mayBlock: call.mayBlock };
    }
    case 'ping':
      return { body: jsonBody(rpc('ping')), what: 'ping', mayBlock: false };
    case 'notification':
      return {
        body: jsonBody(
          obj({
            jsonrpc: '2.0',
            method: r.pick<J>(['notifications/initialized', 'notifications/cancelled', 'notifications/roots/list_changed', 'notifications/fz', nastyString(r)]),
            ...(r.chance(0.6)
              ? {
                  params: r.pick<J>([
                    obj({ requestId: r.pick<J>([index - 1, index, 'fz-1', null, nastyValue(r, { strings: false })]), reason: nastyValue(r) }),
                    nastyValue(r, { strings: false }),
                  ]),
                }
              : {}),
          }),
        ),
        what: 'notification',
        mayBlock: false,
      };
    case 'response':
      return {
        body: jsonBody(
          obj({ jsonrpc: '2.0', id, ...(r.chance(0.5) ? { result: nastyValue(r) } : { error: obj({ code: nastyNumber(r), message: nastyValue(r) }) }) }),
        ),
        what: 'response',
        mayBlock: false,
      };
    case 'unknown':
      return {
        body: jsonBody(
          rpc(
            r.pick<J>(['resources/list', 'prompts/list', 'rpc.discover', 'tools/call/x', '', ...PROTO_KEYS, nastyString(r)]),
            nastyValue(r, { strings: false }),
          ),
        ),
        what: 'unknown method',
        mayBlock: false,
      };
    default: {
      const m = r.int(0, 11);
      const valid = toJson(rpc('tools/list'));
      const body: Buffer =
        m === 0
          ? brokenJson(r, valid, true)
          : m === 1
            ? jsonBody([rpc('ping'), rpc('tools/list')])
            : m === 2
              ? jsonBody([])
              : m === 3
                ? jsonBody(obj({ jsonrpc: r.pick<J>(['1.0', 2, null, '']), id, method: 'ping' }))
                : m === 4
                  ? jsonBody(obj({ id, method: 'ping' }))
                  : m === 5
                    ? jsonBody(obj({ jsonrpc: '2.0', id, method: nastyValue(r, { strings: false }) }))
                    : m === 6
                      ? jsonBody(obj({ jsonrpc: '2.0', id: obj([['a', 1]]), method: 'ping' }))
                      : m === 7
                        ? jsonBody(
                            obj({
                              jsonrpc: '2.0',
                              id,
                              method: 'tools/call',
                              params: obj({ name: 'session', arguments: deepNest(r.pick([1000, 50_000]), 'object') }),
                            }),
                          )
                        : m === 8
                          ? jsonBody(
                              obj({
                                jsonrpc: '2.0',
                                id,
                                method: 'tools/call',
                                params: obj({ name: 'mock__echo', arguments: obj({ text: 'x'.repeat(r.pick([100_000, 1_900_000])) }) }),
                              }),
                            )
                          : m === 9
                            ? jsonBody(obj({ jsonrpc: '2.0', id, result: 1, error: obj({ code: 1 }), method: 'ping' }))
                            : m === 10
                              ? jsonBody(nastyValue(r))
                              : jsonBody(obj([pollution(r), ['jsonrpc', '2.0'], ['id', id], ['method', 'tools/list']]));
      return { body, what: `malformed #${m}`, mayBlock: false };
    }
  }
}

function mcpSessionHeader(r: Rng, ctx: FuzzCtx): Array<[string, string]> {
  return r.weighted<Array<[string, string]>>([
    [5, [['Mcp-Session-Id', ctx.mcpSessionId]]],
    [3, []],
    [1, [['Mcp-Session-Id', r.uuid()]]],
    [1, [['Mcp-Session-Id', r.pick(['has space', 'x'.repeat(300), 'é', '', '\u00ff\u00fe', '../../etc/passwd', '__proto__'])]]],
  ]);
}

// ---------------------------------------------------------------------------------------------
// Odd paths, methods, headers, raw protocol

const ODD_METHODS = [
  'PROPFIND',
  'BREW',
  'PATCH',
  'TRACE',
  'CONNECT',
  'SEARCH',
  'PURGE',
  'M-SEARCH',
  'LINK',
  'UNLINK',
  'MKCOL',
  'COPY',
  'MOVE',
  'LOCK',
  'QUERY',
  'ACL',
  'REPORT',
  'SUBSCRIBE',
  'get',
  'Get',
  'post',
  'delete',
  'HEAD',
  'OPTIONS',
  'X'.repeat(64),
  'GETS',
  'G',
];

function weirdPath(r: Rng, ctx: FuzzCtx): string {
  const seg = () =>
    r.pick([
      '%',
      '%zz',
      '%ff%fe',
      '%c0%af',
      '..%2f..%2fetc%2fpasswd',
      '%2e%2e',
      '%00',
      '%0d%0a',
      pct(nastyString(r).slice(0, 3000)),
      'a'.repeat(r.pick([300, 10_000])),
      '',
      '.',
      '..',
      ctx.slots[0]!.id,
    ]);
  const suffix = () => r.pick(['/output', '/write', '/stream', '/shell-state', '/shell-family', '/resize', '', '/', '/x/y', '/output/..', '%2foutput']);
  return r.pick<() => string>([
    () => `/sessions/${seg()}${suffix()}`,
    () =>
      r.pick([
        '//health',
        '/health/',
        '/HEALTH',
        '/Health',
        '/health?',
        '/health?&&&',
        '/health;x',
        '/./health',
        '/../health',
        '/%2e%2e/health',
        '/health%00',
        '/health%2f',
        '/health/..',
        '*',
        'http://127.0.0.1/health',
        'health',
        '/',
      ]),
    () =>
      r.pick([
        '/mcp/../config',
        '/events/../sessions',
        '/sessions/../config',
        '/mcp/upstreams/../../config',
        '/logs/',
        '/mcp/',
        '/mcp//status',
        '/config/',
        '/sessions//write',
        '/sessions/%2F/write',
      ]),
    () => '/' + 'a/'.repeat(r.pick([50, 5000])),
    () => '/' + '%41'.repeat(r.pick([100, 3000])),
    () => `/logs?limit=${pct(numParam(r))}&limit=${pct(numParam(r))}&level=${pct(nastyString(r).slice(0, 200))}`,
    () => `/progress/list?${r.pick(['limit', 'limit=', '=', '&', 'project=%zz', 'project=' + '%ff'.repeat(100), 'limit=5#frag'])}`,
    () => `/events?types=${pct(nastyString(r).slice(0, 500))}&stream_id=${r.pick(['%', '%zz', pct(nastyString(r).slice(0, 500))])}`,
    () => `/sessions?${'x=1&'.repeat(r.pick([10, 5000]))}`,
    () => `/${pct(nastyString(r).slice(0, 5000))}`,
  ])();
}

function crossSiteHeaders(r: Rng, ctx: FuzzCtx): { headers: Array<[string, string]>; what: string; hostOverride: string | null } {
  const port = ctx.tcpPort ?? 0;
  return r.pick<() => { headers: Array<[string, string]>; what: string; hostOverride: string | null }>([
    () => ({ headers: [], what: 'Host: evil.example', hostOverride: 'evil.example' }),
    () => ({ headers: [], what: `Host: evil.example:${port}`, hostOverride: `evil.example:${port}` }),
    () => ({ headers: [['Origin', 'http://evil.example']], what: 'Origin: http://evil.example', hostOverride: null }),
    () => ({ headers: [['Origin', 'http://203.0.113.5']], what: 'Origin: http://203.0.113.5', hostOverride: null }),
    () => ({ headers: [['Origin', `http://203.0.113.5:${port}`]], what: `Origin: http://203.0.113.5:${port}`, hostOverride: null }),
    () => ({ headers: [['Origin', 'null']], what: 'Origin: null', hostOverride: null }),
    () => ({ headers: [['Origin', `http://127.0.0.1:${port}.evil.example`]], what: 'Origin: http://127.0.0.1:<port>.evil.example', hostOverride: null }),
    () => ({ headers: [['Origin', 'http://evil.example']], what: 'Host: evil.example + Origin: http://evil.example', hostOverride: 'evil.example' }),
    () => ({ headers: [['Host', 'evil.example']], what: 'two Host headers (loopback, then evil.example)', hostOverride: null }),
    () => ({ headers: [], what: 'Host: 203.0.113.5', hostOverride: '203.0.113.5' }),
  ])();
}

/** Bad credentials on TCP: a header, or (with no Authorization) a guessed session token in the query or the cookie. */
function badAuthHeader(r: Rng, ctx: FuzzCtx): { header: string | null; what: string; query?: string; cookie?: string } {
  const b64 = (s: string) => Buffer.from(s, 'latin1').toString('base64');
  const guess = () => r.pick([r.hex(32), r.hex(64), r.uuid(), '', 'null', headerSafe(nastyString(r).slice(0, 300))]);
  return r.pick<() => { header: string | null; what: string; query?: string; cookie?: string }>([
    () => ({ header: null, what: 'no Authorization' }),
    () => ({ header: null, what: 'guessed ?token=', query: `token=${pct(guess())}` }),
    () => ({ header: null, what: 'guessed tui-session cookie', cookie: `tui-session=${guess().replace(/[;,\s]/g, '')}` }),
    () => ({ header: null, what: 'guessed token and cookie', query: `token=${pct(guess())}`, cookie: `tui-session=${r.hex(32)}; other=1` }),
    () => ({ header: `Basic ${b64(`${ctx.username}:wrong-password`)}`, what: 'wrong password' }),
    () => ({ header: `Basic ${b64('admin:admin')}`, what: 'wrong user' }),
    () => ({ header: `Basic ${b64(ctx.username)}`, what: 'Basic without a colon' }),
    () => ({ header: 'Basic !!!not-base64!!!', what: 'Basic with garbage' }),
    () => ({ header: 'Basic ', what: 'empty Basic' }),
    () => ({ header: `Bearer ${r.hex(32)}`, what: 'Bearer token' }),
    () => ({ header: `basic ${b64(`${ctx.username}:wrong`)}`, what: 'lower-case scheme, wrong password' }),
    () => ({ header: `Basic ${'A'.repeat(r.pick([1000, 60_000]))}`, what: 'huge Basic' }),
    () => ({ header: `Basic ${b64(`${ctx.username}:\u00ff\u0000`)}`, what: 'latin1/NUL password' }),
  ])();
}

function rawGarbage(r: Rng, _ctx: FuzzCtx, host: string, auth: string | null): { bytes: Buffer; what: string } {
  const a = auth ? `Authorization: ${auth}\r\n` : '';
  const h = `Host: ${host}\r\n`;
  const body = '{"level":"info","source":"fuzz","message":"raw"}';
  const pick = r.int(0, 21);
  const s = (x: string) => Buffer.from(x, 'latin1');
  switch (pick) {
    case 0:
      return { bytes: s(`GET /health HTTP/1.1\nHost: ${host}\n${a.replace('\r\n', '\n')}\n`), what: 'bare LF line endings' };
    case 1:
      return { bytes: s(`GET /stats HTTP/1.0\r\n${h}${a}\r\n`), what: 'HTTP/1.0' };
    case 2:
      return { bytes: s(`GET /stats HTTP/${r.pick(['2.0', '9.9', '1.1.1', '0.9', 'x'])}\r\n${h}${a}\r\n`), what: 'odd HTTP version' };
    case 3:
      return { bytes: s(`GET /stats\r\n${h}${a}\r\n`), what: 'no HTTP version' };
    case 4:
      return { bytes: s(`GET /he alth HTTP/1.1\r\n${h}${a}\r\n`), what: 'space in the path' };
    case 5:
      return { bytes: s(`GET /stats HTTP/1.1\r\n${h}${a}NoColonHeader\r\n\r\n`), what: 'header without a colon' };
    case 6:
      return { bytes: s(`GET /stats HTTP/1.1\r\n${h}${a}X-Fuzz : spaced\r\n\r\n`), what: 'space before the colon' };
    case 7:
      return { bytes: s(`GET /stats HTTP/1.1\r\n${h}${a}X-Fold: one\r\n two\r\n\r\n`), what: 'obs-fold header' };
    case 8:
      return {
        bytes: s(
          `POST /logs HTTP/1.1\r\n${h}${a}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: ${body.length + 5}\r\n\r\n${body}`,
        ),
        what: 'two different Content-Length',
      };
    case 9:
      return {
        bytes: s(
          `POST /logs HTTP/1.1\r\n${h}${a}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        ),
        what: 'Content-Length and chunked',
      };
    case 10:
      return {
        bytes: s(
          `POST /logs HTTP/1.1\r\n${h}${a}Content-Type: application/json\r\nContent-Length: ${r.pick(['-1', 'abc', '1e3', '99999999999999999999', ' 5', '0x10', ''])}\r\n\r\n${body}`,
        ),
        what: 'bad Content-Length',
      };
    case 11:
      return {
        bytes: s(
          `POST /logs HTTP/1.1\r\n${h}${a}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${r.pick(['zz', 'ffffffffffffffff', '-1', '1;ext=' + 'x'.repeat(10_000)])}\r\n${body}\r\n0\r\n\r\n`,
        ),
        what: 'bad chunk size',
      };
    case 12:
      return {
        bytes: s(
          `POST /logs HTTP/1.1\r\n${h}${a}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        ),
        what: 'two Transfer-Encodings',
      };
    case 13:
      return { bytes: s(`GET /st\u0000ats HTTP/1.1\r\n${h}${a}X-Nul: a\u0000b\r\n\r\n`), what: 'NUL bytes' };
    case 14:
      return { bytes: s(`GET /${'a'.repeat(r.pick([10_000, 100_000]))} HTTP/1.1\r\n${h}${a}\r\n`), what: 'very long request line' };
    case 15:
      return {
        bytes: s(`GET /stats HTTP/1.1\r\n${h}${a}${Array.from({ length: r.pick([200, 2000]) }, (_, i) => `X-H${i}: ${i}\r\n`).join('')}\r\n`),
        what: 'many headers',
      };
    case 16:
      return { bytes: s(`GET /stats HTTP/1.1\r\n${h}${a}X-Big: ${'b'.repeat(r.pick([100_000, 1_000_000]))}\r\n\r\n`), what: 'huge header value' };
    case 17:
      return {
        bytes: Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), r.bytes(200)]),
        what: 'TLS ClientHello bytes',
      };
    case 18:
      return { bytes: s('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), what: 'HTTP/2 preface' };
    case 19:
      return { bytes: r.bytes(r.int(1, 2000)), what: 'random bytes' };
    case 20:
      return { bytes: s(`GET /stats HTTP/1.1\r\n${h}${a}\r\nGET /health HTTP/1.1\r\n${h}\r\nGARBAGE\r\n\r\n`), what: 'pipelined requests, then garbage' };
    default:
      return {
        bytes: s(`POST /mcp HTTP/1.1\r\n${h}${a}Content-Type: application/json\r\nContent-Length: ${r.pick([10, 1000, 3 * MIB])}\r\n\r\n{"jsonrpc"`),
        what: 'body shorter than its Content-Length',
      };
  }
}

// ---------------------------------------------------------------------------------------------
// WebSocket plans

function wsPlan(r: Rng, t: Ref): WsPlan {
  const frames: WsFrameSpec[] = [];
  const n = r.int(0, 6);
  for (let i = 0; i < n; i++) {
    const delayMs = r.chance(0.3) ? r.int(1, 50) : 0;
    const k = r.int(0, t.cat ? 12 : 6);
    const safe = () => Buffer.from(typeSafe(safeTypedText(r)).slice(0, 65_536), 'utf8');
    switch (k) {
      case 0:
      case 1:
        frames.push({ opcode: 1, payload: safe(), delayMs });
        break;
      case 2:
        frames.push({ opcode: 2, payload: safe(), delayMs });
        break;
      case 3:
        frames.push({ opcode: 9, payload: r.bytes(r.pick([0, 10, 125, 126, 1000])), delayMs });
        break;
      case 4:
        frames.push({ opcode: 10, payload: r.bytes(r.int(0, 125)), delayMs });
        break;
      case 5: {
        // A fragmented message of safe text.
        const p = safe();
        const cut = r.int(0, p.length);
        frames.push({ opcode: 1, fin: false, payload: p.subarray(0, cut), delayMs });
        frames.push({ opcode: 0, fin: true, payload: p.subarray(cut) });
        break;
      }
      case 6: {
        const code = r.pick([1000, 1001, 1005, 1006, 1015, 999, 0, 2999, 4000, 5000, 65535]);
        const p = Buffer.alloc(2);
        p.writeUInt16BE(code);
        frames.push({ opcode: 8, payload: Buffer.concat([p, r.chance(0.5) ? Buffer.from([0xff, 0xfe, 0xc0]) : Buffer.from('bye')]), delayMs });
        break;
      }
      // cat sessions only below: arbitrary bytes and broken framing.
      case 7:
        frames.push({ opcode: r.pick([1, 2]), payload: Buffer.from(anyTypedText(r), 'utf8'), delayMs });
        break;
      case 8:
        frames.push({ opcode: 1, payload: Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]), delayMs });
        break;
      case 9:
        frames.push({ opcode: r.pick([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), payload: r.bytes(r.int(0, 100)), delayMs });
        break;
      case 10:
        frames.push({ opcode: 2, rsv: r.int(1, 7), payload: r.bytes(r.int(0, 100)), delayMs });
        break;
      case 11:
        frames.push({ opcode: 2, masked: r.chance(0.5), payload: r.bytes(r.int(0, 100)), claimLength: r.pick([2 * MIB + 1, 2 ** 40, 200]), delayMs });
        break;
      default:
        frames.push({ opcode: 2, payload: Buffer.alloc(r.pick([2 * MIB + 10, 3 * MIB]), 0x61), delayMs });
    }
  }
  return { frames, readMs: r.int(20, 300), closeAtEnd: r.chance(0.6) };
}

// ---------------------------------------------------------------------------------------------
// The case

function emptyCase(index: number, family: Family): Case {
  return {
    index,
    family,
    route: '',
    listener: 'socket',
    method: 'GET',
    path: '/',
    headers: [],
    body: null,
    chunked: false,
    splitWrite: false,
    raw: null,
    mode: 'http',
    timeoutMs: DEFAULT_TIMEOUT_MS,
    mayBlock: false,
    relaxed: false,
    crossSite: null,
    badAuth: null,
    textPlain: false,
    publicRoute: false,
    outside: false,
    canary: null,
    notes: [],
  };
}

/** The body routes (for the oversize, header and method families). */
function bodyRoute(r: Rng, ctx: FuzzCtx): { method: string; route: string; path: string } {
  return r.pick([
    { method: 'POST', route: 'POST /logs', path: '/logs' },
    { method: 'PUT', route: 'PUT /config', path: '/config' },
    { method: 'POST', route: 'POST /mcp', path: '/mcp' },
    { method: 'POST', route: 'POST /sessions', path: '/sessions' },
    { method: 'POST', route: 'POST /sessions/:id/write', path: `/sessions/${pct(ctx.slots[0]!.id)}/write` },
    { method: 'POST', route: 'POST /events/types', path: '/events/types' },
    { method: 'PUT', route: 'PUT /mcp/upstreams', path: '/mcp/upstreams' },
    { method: 'POST', route: 'POST /auth/hash-password', path: '/auth/hash-password' },
    { method: 'POST', route: 'POST /mcp/confirm-response', path: '/mcp/confirm-response' },
  ]);
}

export function generateCase(r: Rng, ctx: FuzzCtx, index: number): Case {
  const family = r.weighted<Family>([
    [44, 'rest'],
    [22, 'mcp'],
    [8, 'ws'],
    [4, 'sse'],
    [5, 'method'],
    [5, 'path'],
    [5, 'headers'],
    [3, 'oversize'],
    [4, 'raw'],
    [5, 'contain'],
  ]);
  const c = emptyCase(index, family);
  const tcp = ctx.tcpPort !== null && r.chance(0.45);
  c.listener = tcp ? 'tcp' : 'socket';
  const host = tcp ? r.pick([`127.0.0.1:${ctx.tcpPort}`, `localhost:${ctx.tcpPort}`, '127.0.0.1']) : 'localhost';
  let json: J | Buffer | undefined;
  let contentType: string | null = 'application/json';

  switch (family) {
    case 'rest': {
      const d = r.weighted(REST)(r, ctx);
      c.method = d.method;
      c.route = d.route;
      c.path = d.path;
      c.headers.push(...(d.headers ?? []));
      c.publicRoute = d.publicRoute ?? false;
      if (d.mayBlock) c.mayBlock = true;
      if (d.timeoutMs) c.timeoutMs = d.timeoutMs;
      json = d.body;
      if (json !== undefined && !Buffer.isBuffer(json) && r.chance(0.3)) json = mutateBody(r, json, c.notes, d.sensitive ?? false);
      break;
    }
    case 'contain': {
      const d = containmentCase(r, ctx, index);
      c.method = d.method;
      c.route = d.route;
      c.path = d.path;
      c.outside = d.outside;
      c.canary = d.canary;
      if (d.body !== undefined) json = d.body;
      break;
    }
    case 'mcp': {
      const which = r.weighted<string>([
        [12, 'post'],
        [1, 'get'],
        [1, 'delete'],
      ]);
      c.route = which === 'post' ? 'POST /mcp' : which === 'get' ? 'GET /mcp' : 'DELETE /mcp';
      c.path = '/mcp';
      c.headers.push(...mcpSessionHeader(r, ctx));
      if (r.chance(0.15)) c.headers.push(['X-Tuic-Session', r.pick([ctx.slots[0]!.id, 'fz-unbound', headerSafe(nastyString(r).slice(0, 300))])]);
      if (r.chance(0.1)) c.headers.push(['Mcp-Protocol-Version', r.pick(['2025-11-25', '1999-01-01', 'x'.repeat(300), ''])]);
      if (which === 'post') {
        c.method = 'POST';
        if (r.chance(0.85))
          c.headers.push(['Accept', r.pick(['application/json, text/event-stream', 'application/json', 'text/event-stream', '*/*', 'text/html'])]);
        const m = mcpMessage(r, ctx, index);
        c.notes.push(m.what);
        c.route = `POST /mcp (${m.what.split(' ')[0]})`;
        json = m.body;
        if (m.outside) c.outside = true;
        if (m.mayBlock) {
          c.mayBlock = true;
          c.timeoutMs = BLOCKING_TIMEOUT_MS;
        } else c.timeoutMs = 20_000;
      } else if (which === 'get') {
        c.method = 'GET';
        c.mode = 'sse';
        c.headers.push(['Accept', r.pick(['text/event-stream', 'application/json', '*/*'])]);
        if (r.chance(0.2)) c.headers.push(['Last-Event-ID', r.pick(['0', '-1', 'x'.repeat(1000), '999999999999'])]);
      } else c.method = 'DELETE';
      break;
    }
    case 'sse': {
      c.method = 'GET';
      c.mode = 'sse';
      c.route = 'GET /events';
      const params: Array<[string, string]> = [];
      if (r.chance(0.5))
        params.push([
          'types',
          r.pick(['', 'session-created,session-closed', '*', ',,,', 'mcp-confirm', nastyString(r).slice(0, r.chance(0.9) ? 1000 : 100_000)]),
        ]);
      if (r.chance(0.5)) params.push(['stream_id', r.pick([ctx.eventStreamId, `fz-sse-${r.hex(6)}`, '', nastyString(r).slice(0, 5000)])]);
      c.path = `/events${query(params)}`;
      if (r.chance(0.2)) c.headers.push(['Last-Event-ID', r.pick(['0', '-1', 'abc', '9'.repeat(100), ''])]);
      if (r.chance(0.2)) c.headers.push(['Accept', r.pick(['text/event-stream', 'application/json', 'text/html'])]);
      break;
    }
    case 'ws': {
      const t = sessionRef(r, ctx);
      const params: Array<[string, string]> = [];
      if (r.chance(0.3)) params.push(['offset', numParam(r)]);
      if (r.chance(0.4)) params.push(['format', r.pick(['raw', 'text', 'log', '', 'html', nastyString(r).slice(0, 300)])]);
      if (r.chance(0.3)) params.push(['encoding', r.pick(['binary', 'text', '', 'x'])]);
      c.method = 'GET';
      c.mode = 'ws';
      c.route = 'WS /sessions/:id/stream';
      c.path = `/sessions/${pct(t.ref)}/stream${query(params)}`;
      const variant = r.weighted<string>([
        [8, 'good'],
        [1, 'no-key'],
        [1, 'bad-version'],
        [1, 'bad-key'],
        [1, 'no-upgrade'],
        [1, 'extensions'],
      ]);
      c.headers.push(['Upgrade', variant === 'no-upgrade' ? 'h2c' : r.pick(['websocket', 'websocket', 'WebSocket'])]);
      c.headers.push(['Connection', 'Upgrade']);
      if (variant !== 'no-key')
        c.headers.push([
          'Sec-WebSocket-Key',
          variant === 'bad-key' ? r.pick(['', 'short', 'x'.repeat(1000), '!!!!']) : Buffer.from(r.hex(32), 'hex').toString('base64'),
        ]);
      c.headers.push(['Sec-WebSocket-Version', variant === 'bad-version' ? r.pick(['8', '14', 'x', '']) : '13']);
      if (variant === 'extensions')
        c.headers.push(['Sec-WebSocket-Extensions', r.pick(['permessage-deflate', 'permessage-deflate; client_max_window_bits', 'x-fuzz'])]);
      if (r.chance(0.2)) c.headers.push(['Sec-WebSocket-Protocol', r.pick(['chat', 'x'.repeat(500), ',,,'])]);
      c.ws = wsPlan(r, t);
      c.timeoutMs = 10_000;
      c.notes.push(
        `${c.ws.frames.length} frame(s): ${c.ws.frames.map((f) => `op${f.opcode}${f.fin === false ? ' nofin' : ''}${f.rsv ? ' rsv' + f.rsv : ''}${f.masked === false ? ' unmasked' : ''}${f.claimLength !== undefined ? ' claims ' + f.claimLength : ''} ${f.payload.length}B`).join(', ')}`,
      );
      if (variant !== 'good') c.notes.push(`upgrade: ${variant}`);
      break;
    }
    case 'method': {
      const base = r.chance(0.5)
        ? bodyRoute(r, ctx)
        : r.pick([
            { route: 'GET /health', path: '/health' },
            { route: 'GET /sessions', path: '/sessions' },
            { route: 'GET /mcp/status', path: '/mcp/status' },
            { route: 'GET /events', path: '/events' },
            { route: 'unknown path', path: '/fz-nowhere' },
          ]);
      c.method = r.pick(ODD_METHODS);
      c.route = `${c.method.length > 20 ? c.method.slice(0, 8) + '…' : c.method} ${base.route.split(' ').slice(1).join(' ') || base.path}`;
      c.path = base.path;
      if (r.chance(0.4)) json = obj({ level: 'info', source: 'fuzz', message: 'odd method' });
      break;
    }
    case 'path': {
      c.method = r.pick(['GET', 'GET', 'POST', 'DELETE', 'PUT']);
      c.path = weirdPath(r, ctx);
      c.route = `${c.method} (odd path)`;
      if (c.method !== 'GET' && r.chance(0.5)) json = obj({ data: 'fuzz', rows: 24, cols: 80 });
      break;
    }
    case 'headers': {
      const base = r.chance(0.6) ? bodyRoute(r, ctx) : { method: 'GET', route: 'GET /stats', path: '/stats' };
      c.method = base.method;
      c.route = base.route;
      c.path = base.path;
      if (base.method !== 'GET')
        json =
          base.route === 'POST /mcp'
            ? jsonBody(obj({ jsonrpc: '2.0', id: index, method: 'tools/list' }))
            : base.route.includes('/write')
              ? obj({ data: 'echo fuzz' })
              : obj({ level: 'info', source: 'fuzz', message: 'headers' });
      const v = r.int(0, 11);
      const before = c.headers.length;
      switch (v) {
        case 0:
          c.headers.push(['X-Fuzz-Big', 'h'.repeat(r.pick([8_000, 64_000, 200_000]))]);
          c.notes.push('huge header');
          break;
        case 1:
          for (let i = 0; i < r.pick([100, 500]); i++) c.headers.push([`X-Fuzz-${i}`, String(i)]);
          c.notes.push('many headers');
          break;
        case 2:
          contentType = r.pick([
            'application/json; charset=utf-16',
            'application/json;;;',
            'APPLICATION/JSON',
            'application/json, text/plain',
            'application/vnd.api+json',
            'application/jsonx',
            '',
            'application/x-ndjson',
          ]);
          c.notes.push(`content-type ${JSON.stringify(contentType)}`);
          break;
        case 3:
          c.headers.push([
            'Accept-Encoding',
            r.pick(['gzip', 'br', 'deflate', 'gzip, br', '*', 'identity;q=0', 'x-fuzz', 'gzip;q=abc', 'br;q=1, gzip;q=1, deflate;q=1']),
          ]);
          break;
        case 4:
          c.headers.push(['Expect', r.pick(['100-continue', 'x-fuzz'])]);
          break;
        case 5:
          c.chunked = true;
          c.notes.push('chunked body');
          break;
        case 6:
          c.headers.push(['Cookie', r.pick(['tuic_session=' + 'x'.repeat(5000), 'a=b; a=c', '=;=;=', 'tuic_session=' + r.hex(64)])]);
          break;
        case 7:
          c.headers.push(['X-Latin1', '\u00e9\u00ff\u0080\u00a0']);
          break;
        case 8:
          c.headers.push(['Content-Type', 'application/json']);
          c.notes.push('Content-Type twice');
          break;
        case 9:
          c.headers.push(['Transfer-Encoding', 'identity']);
          break;
        case 10:
          c.headers.push(['Authorization', `Basic ${Buffer.from(`${ctx.username}:x`).toString('base64')}`]);
          c.notes.push('Authorization twice');
          break;
        default:
          c.headers.push(['Connection', r.pick(['keep-alive', 'Upgrade', 'close, Upgrade', 'x'])]);
      }
      // The variant names the case's shape (the first note), for grouping findings.
      if (c.notes.length === 0)
        c.notes.push(
          c.headers
            .slice(before)
            .map(([k, val]) => `${k}: ${val.slice(0, 40)}`)
            .join(', ') || `variant ${v}`,
        );
      break;
    }
    case 'oversize': {
      const base = bodyRoute(r, ctx);
      c.method = base.method;
      c.route = base.route;
      c.path = base.path;
      // 6.4 MB: the PUT /config that an immediate 413-and-close left with no answer (issue 26 item 8).
      const size = r.pick([2 * MIB + 1, 2 * MIB + 4096, 3 * MIB, 5 * MIB, 6_400_000]);
      const shape = r.int(0, 3);
      json =
        shape === 0
          ? Buffer.from(toJson(obj({ data: 'A'.repeat(size), message: 'A', level: 'info', source: 'fuzz' })), 'utf8')
          : shape === 1
            ? Buffer.from(
                toJson(
                  obj({ jsonrpc: '2.0', id: index, method: 'tools/call', params: obj({ name: 'mock__echo', arguments: obj({ text: 'é'.repeat(size / 2) }) }) }),
                ),
                'utf8',
              )
            : shape === 2
              ? Buffer.alloc(size, 0x7b)
              : Buffer.from('[' + '0,'.repeat(size / 2) + '0]', 'utf8');
      c.chunked = r.chance(0.3);
      c.notes.push(`${(json.length / MIB).toFixed(2)} MiB body${c.chunked ? ', chunked' : ''}`);
      c.timeoutMs = 30_000;
      break;
    }
    case 'raw': {
      const auth = tcp ? ctx.authHeader : null;
      const g = rawGarbage(r, ctx, host, auth);
      c.raw = g.bytes;
      c.relaxed = true;
      c.mayBlock = true;
      c.timeoutMs = 1_500;
      c.route = `raw: ${g.what}`;
      c.method = '(raw)';
      c.path = '';
      c.notes.push(g.what);
      return c;
    }
  }

  if (c.route === '') c.route = `${c.method} ${c.path}`;
  // /health is the one route TCP serves without credentials (any method the router maps to it).
  if (/^\/health(\?|$)/.test(c.path)) c.publicRoute = true;

  // Listener decoration: Host, credentials, cross-site and simple content types on TCP.
  let hostValue: string | null = host;
  if (tcp) {
    let auth: string | null = ctx.authHeader;
    if (r.chance(0.1)) {
      const bad = badAuthHeader(r, ctx);
      auth = bad.header;
      c.badAuth = bad.what;
      if (bad.query !== undefined && c.path.startsWith('/')) c.path += (c.path.includes('?') ? '&' : '?') + bad.query;
      if (bad.cookie !== undefined) c.headers.push(['Cookie', bad.cookie]);
    }
    if (auth !== null) c.headers.unshift(['Authorization', auth]);
    if (r.chance(0.14)) {
      const x = crossSiteHeaders(r, ctx);
      c.crossSite = x.what;
      if (x.hostOverride !== null) hostValue = x.hostOverride;
      c.headers.push(...x.headers);
    } else if (r.chance(0.05)) {
      const name = r.pick(['127.0.0.1', 'localhost']);
      hostValue = `${name}:${ctx.tcpPort}`;
      c.headers.push(['Origin', `http://${hostValue}`]);
      c.notes.push('same-origin Origin');
    }
    if (r.chance(0.02)) {
      hostValue = null;
      c.crossSite = c.crossSite ?? 'no Host header';
    }
  } else if (r.chance(0.05)) {
    // The socket has no guard (no browser reaches it): these must simply not break anything.
    c.headers.push(['Origin', r.pick(['http://evil.example', 'http://203.0.113.5', 'null'])]);
    if (r.chance(0.5)) hostValue = 'evil.example';
    c.notes.push('cross-site headers on the socket (no guard expected)');
  }
  if (hostValue !== null) c.headers.unshift(['Host', hostValue]);

  if (json !== undefined) {
    c.body = Buffer.isBuffer(json) ? json : jsonBody(json);
    if (r.chance(0.15)) {
      c.splitWrite = true;
      c.notes.push('head and body written separately');
    }
    if (tcp && r.chance(0.08) && c.method !== 'GET') {
      contentType = r.pick(['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=fz']);
      c.textPlain = true;
    } else if (r.chance(0.03)) contentType = null;
    if (contentType !== null) c.headers.push(['Content-Type', contentType]);
  }
  return c;
}

/** The request bytes of a case (chunked bodies go in 64 KiB chunks). */
export function requestBytes(c: Case): Buffer[] {
  if (c.raw) return [c.raw];
  const lines = [`${c.method} ${c.path} HTTP/1.1`];
  for (const [k, v] of c.headers) lines.push(`${k}: ${v}`);
  if (c.body !== null) {
    if (c.chunked) lines.push('Transfer-Encoding: chunked');
    else lines.push(`Content-Length: ${c.body.length}`);
  }
  if (c.mode !== 'ws') lines.push('Connection: close');
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  if (c.body === null) return [head];
  // One write, as most clients send a small request; big bodies and split cases follow the head.
  if (!c.chunked) return c.splitWrite || c.body.length > 1024 * 1024 ? [head, c.body] : [Buffer.concat([head, c.body])];
  const parts: Buffer[] = [head];
  for (let i = 0; i < c.body.length; i += 65_536) {
    const chunk = c.body.subarray(i, i + 65_536);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`, 'latin1'), chunk, Buffer.from('\r\n', 'latin1'));
  }
  parts.push(Buffer.from('0\r\n\r\n', 'latin1'));
  return parts;
}
