/**
 * The contract between the hub worker (workers/mcp) and one stdio pump (workers/proxy-stdio: one
 * pump per stdio upstream, each on its own channel). JSON-RPC bodies ride beside the header as
 * UTF-8 JSON payloads, never re-encoded inside msgpack: the hub passes upstream results on without
 * parsing them twice.
 *
 * The pumps run inside the hub's thread, each on an in-memory link: the hub loads the proxy-stdio
 * host module by path and uses it only through ProxyStdioHost below. A separate pump thread was
 * measured and dropped: every proxied call paid a thread wake-up each way (sequential echo through
 * /mcp 1.22 → 0.56 ms p50 without it; 16 callers 1.15× → 1.55× the bare SDK server's throughput),
 * and each extra isolate costs ~30 MB.
 */
import { Type } from 'typebox';

import type { Transport } from '../transports/transport.js';
import { defineProtocol } from './defineProtocol.js';

export const PROXY_STDIO_PROTOCOL_VERSION = 2;

/** Every limit of the stdio upstream client (its stdout queue, respawn rate, shutdown, environment), in one place. */
export const StdioLimits = {
  /** Bounded lossy stdout queue: at most this many lines … */
  QUEUE_MAX_LINES: 256,
  /** … and this many bytes queued in total (drop-oldest past either). */
  QUEUE_MAX_BYTES: 8 * 1024 * 1024,
  /** A single line longer than this is discarded whole, never published truncated. */
  MAX_LINE_BYTES: 16 * 1024 * 1024,
  /** MIN_RESPAWN_INTERVAL: a spawn sooner than this after the last one fails at once. */
  MIN_RESPAWN_INTERVAL_MS: 5_000,
  /** Shutdown: close stdin, wait this long for a voluntary exit, then kill the process group. */
  SHUTDOWN_GRACE_MS: 2_000,
  /** Environment variables kept from the parent; everything else is cleared before the upstream's own env. */
  ENV_ALLOWLIST: ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TEMP', 'TMP', 'SHELL', 'TERM'],
} as const;

const JsonRpcErrorSchema = Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) });

export const ProxyStdioProtocol = defineProtocol({
  name: 'proxy-stdio',
  version: PROXY_STDIO_PROTOCOL_VERSION,
  requests: {
    /**
     * Spawns the upstream (env cleared to the allowlist + `env`, `~` expanded in command, args and
     * cwd) and runs the handshake: initialize → notifications/initialized → tools/list. Fails at once
     * with `Upstream '<n>' respawning too fast (<ms>ms since last spawn, min 5000ms)` when called
     * within MIN_RESPAWN_INTERVAL_MS of the previous spawn (error data: `reason: 'respawn_rate_limit'`
     * and `retry_after_ms`, how long until a start is taken). A running child is shut down first.
     * Reply payload: the upstream's `tools` array as JSON (`[]` when result.tools is missing).
     */
    start: {
      params: Type.Object({
        name: Type.String(),
        command: Type.String(),
        args: Type.Array(Type.String()),
        env: Type.Record(Type.String(), Type.String()),
        cwd: Type.Optional(Type.String()),
        /** One deadline per exchange (write + reads); 0 = none. */
        timeout_ms: Type.Integer({ minimum: 0 }),
        protocol_version: Type.String(),
        client_name: Type.String(),
        client_version: Type.String(),
        /** The client capabilities initialize declares (the hub's: sampling, elicitation, roots). */
        capabilities: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
      result: Type.Object({
        pid: Type.Integer(),
        server_name: Type.Union([Type.String(), Type.Null()]),
        /** initialize's `result.capabilities` as the server declared them ({} when absent). */
        capabilities: Type.Record(Type.String(), Type.Unknown()),
      }),
    },
    /**
     * One JSON-RPC exchange with the running child. Payload in: `params` as JSON (absent = no
     * params). Reply: `error` set for a JSON-RPC error answer, else payload = `result` as JSON.
     * Fails (channel error) when no child runs, on the deadline (the child is then torn down:
     * killed, every other pending exchange failed) or when the child exits mid-call.
     */
    rpc: {
      params: Type.Object({ method: Type.String(), timeout_ms: Type.Optional(Type.Integer({ minimum: 0 })) }),
      result: Type.Object({ error: Type.Optional(JsonRpcErrorSchema) }),
    },
    /** A JSON-RPC notification to the running child. Payload: params JSON, if any. Fails when no child runs. */
    notify: { params: Type.Object({ method: Type.String() }), result: Type.Object({}) },
    /**
     * The answer to a request the child sent (a `message` event with an `id`). Payload: the result
     * JSON when `error` is absent. A child that is no longer the one that asked gets nothing.
     */
    answer: {
      params: Type.Object({ id: Type.Union([Type.String(), Type.Number()]), pid: Type.Integer(), error: Type.Optional(JsonRpcErrorSchema) }),
      result: Type.Object({}),
    },
    /** Non-blocking liveness (the health check for stdio), and the pump's counters. */
    status: {
      params: Type.Object({}),
      result: Type.Object({
        alive: Type.Boolean(),
        pid: Type.Union([Type.Integer(), Type.Null()]),
        /** Lines dropped from the lossy queue since start (oldest first). */
        dropped_lines: Type.Integer(),
        /** Lines over MAX_LINE_BYTES discarded whole. */
        oversized_lines: Type.Integer(),
        queued_lines: Type.Integer(),
        queued_bytes: Type.Integer(),
        in_flight: Type.Integer(),
      }),
    },
    /** Closes stdin, waits SHUTDOWN_GRACE_MS, then SIGKILLs the process group. Idempotent. */
    shutdown: { params: Type.Object({}), result: Type.Object({}) },
  },
  events: {
    /** The child exited (for any reason, including teardown); pending exchanges have been failed. */
    exited: Type.Object({
      pid: Type.Integer(),
      code: Type.Union([Type.Integer(), Type.Null()]),
      signal: Type.Union([Type.String(), Type.Null()]),
      reason: Type.String(),
    }),
    /**
     * A notification, or a request other than `ping` (which the pump answers itself), the child
     * sent: `id` set for a request (answer it with `answer`, quoting `pid`). Payload: params JSON,
     * if any. Notifications share the lossy stdout queue with answers; see the pump.
     */
    message: Type.Object({ pid: Type.Integer(), method: Type.String(), id: Type.Optional(Type.Union([Type.String(), Type.Number()])) }),
    /** A line the child wrote to stderr (drained so it can never block on it), cut to 4 KiB. */
    stderr: Type.Object({ line: Type.String() }),
    /** Something the hub should log: timeouts (with the drop count), teardowns, oversized lines. */
    log: Type.Object({
      level: Type.Union([Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')]),
      msg: Type.String(),
      fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
});

export type ProxyStdioProtocolT = typeof ProxyStdioProtocol;

/** What workers/proxy-stdio's host module exports to the hub that loads it. */
export interface ProxyStdioHost {
  /**
   * A new Pump serving ProxyStdioProtocol on `transport`; when the link closes, the pump shuts its
   * child down. If the hosting thread ends first, however it ends, the children's process groups
   * are killed (workers/proxy-stdio/groupReaper.ts).
   */
  attachPump(transport: Transport): void;
}
