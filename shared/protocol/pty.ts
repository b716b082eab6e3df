/**
 * The contract between the supervisor and the pty host process (workers/pty): every message shape,
 * declared once. Output bytes ride beside the header as the payload, never inside msgpack.
 */
import { Type } from 'typebox';

import { defineProtocol } from './defineProtocol.js';
import { ParsedEventSchema } from './parsedEvents.js';

/**
 * Bumped on any incompatible change; the handshake refuses a stale pty host build, and a newer
 * supervisor replaces a detached host of another version (its sessions end). 6: memory, screenQuery,
 * output watchers, adopt and records, loopDelay. 7: `watch` and `activity` (an unwatched session's output
 * crosses as counts, not bytes).
 */
export const PTY_PROTOCOL_VERSION = 7;

/** Limits both sides rely on. */
export const PtyConstants = {
  /** Rows and cols must be 1..500. */
  MAX_TERMINAL_DIMENSION: 500,
  /** Raw output ring per session (OUTPUT_RING_BUFFER_CAPACITY): what catch-up and `output` read from. */
  OUTPUT_RING_BYTES: 2 * 1024 * 1024,
  /** WS catch-up and raw reads are cut into pieces of at most this size. */
  CATCH_UP_CHUNK_BYTES: 64 * 1024,
  /** Stripped line log kept per session (VT_LOG_BUFFER_CAPACITY). */
  LOG_LINES: 10_000,
  /** A shell with no output for this long is idle (SHELL_IDLE_MS). */
  SHELL_IDLE_MS: 500,
  /** An agent with no output for this long is idle (AGENT_IDLE_MS): agents pause longer between bursts. */
  AGENT_IDLE_MS: 2_500,
  /**
   * Flow control host → supervisor: a session whose sent output the supervisor has not yet
   * acknowledged (`ack` events) by more than this stops being read until the backlog halves, so a
   * supervisor that falls behind (a long GC, a blocked loop) holds the producing child instead of
   * letting the host queue output without bound. The supervisor acks a batch once it has fanned it
   * out, but never further than its slowest live raw viewer allows (supervisor/streaming/viewerFlow.ts),
   * so the producer slows to a viewer that drains slowly instead of running past the ring under it.
   */
  UNACKED_OUTPUT_BYTES: 2 * 1024 * 1024,
  /**
   * Flow control the other way: input the session's program has not read yet (queued in the host
   * because the PTY's input buffer, a few KiB, is full). Past this a write is refused, so a client
   * typing into a program that never reads cannot grow the host. Well above one WebSocket frame or
   * request body (2 MiB), so a large paste into a program that is still reading is never refused.
   */
  INPUT_BACKLOG_BYTES: 8 * 1024 * 1024,
  /**
   * A session whose child exited keeps only a tombstone in the host (workers/pty/tombstone.ts): the
   * final screen, the exit status, the last TOMBSTONE_RING_BYTES of raw output and the last
   * TOMBSTONE_LOG_LINES lines of the log (at most TOMBSTONE_LOG_CHARS characters of them).
   */
  TOMBSTONE_RING_BYTES: 64 * 1024,
  TOMBSTONE_LOG_LINES: 1_000,
  TOMBSTONE_LOG_CHARS: 256 * 1024,
  /**
   * What all tombstones together may hold; past it the oldest are dropped (`tombstoneDropped`), so a
   * churn of sessions that print and exit cannot grow the host. The host's environment may lower it
   * (TUIC_PTY_TOMBSTONE_BUDGET_BYTES, for tests).
   */
  TOMBSTONE_BUDGET_BYTES: 64 * 1024 * 1024,
  /** Output watchers the host runs at once: every client's set together (8 clients of up to 32). */
  MAX_OUTPUT_WATCHERS: 256,
  /** Matched lines one `watcherLines` event carries; past it a flush counts them in `dropped`. */
  WATCHER_LINES_PER_EVENT: 200,
  /** A matched line is sent cut to this many characters. */
  WATCHER_LINE_CHARS: 4096,
  /** The largest supervisor record (the `record` event) a detached host keeps per session. */
  RECORD_MAX_CHARS: 256 * 1024,
} as const;

const SessionRef = { session_id: Type.String({ minLength: 1 }) };
const Dimension = Type.Integer({ minimum: 1, maximum: PtyConstants.MAX_TERMINAL_DIMENSION });
const Ok = Type.Object({});

export const ShellState = Type.Union([Type.Literal('busy'), Type.Literal('idle')]);

export const LogLine = Type.Object({ text: Type.String() });

/** Raw capture state (POST/GET /diagnostics/capture): the filter, the directory and each opened file. */
export const CaptureStatus = Type.Object({
  enabled: Type.Boolean(),
  /** The one session captured; null = every session (including ones created later). */
  session_id: Type.Union([Type.String(), Type.Null()]),
  dir: Type.Union([Type.String(), Type.Null()]),
  sessions: Type.Array(
    Type.Object({
      session_id: Type.String(),
      path: Type.String(),
      bytes: Type.Integer(),
      full: Type.Boolean(),
      error: Type.Optional(Type.String()),
    }),
  ),
});

export const PtyProtocol = defineProtocol({
  name: 'pty',
  version: PTY_PROTOCOL_VERSION,
  requests: {
    /** Liveness: the supervisor's heartbeat. */
    ping: { params: Type.Object({}), result: Type.Object({ pid: Type.Integer() }) },
    spawn: {
      params: Type.Object({
        ...SessionRef,
        /** Program to run; the host resolves $SHELL or /bin/sh when absent. */
        shell: Type.Optional(Type.String()),
        args: Type.Optional(Type.Array(Type.String())),
        cwd: Type.String(),
        /** The complete child environment (the supervisor builds it). */
        env: Type.Record(Type.String(), Type.String()),
        rows: Dimension,
        cols: Dimension,
        /** The agent the session starts as (POST /sessions `agent_type`), for the output parser. */
        agent_type: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
        /**
         * true: nobody watches the session's bytes yet, so its output leaves as `activity` notices
         * (no payload, nothing to ack) until a `watch` event says otherwise. Absent: `data` as always.
         */
        unwatched: Type.Optional(Type.Boolean()),
      }),
      result: Type.Object({ pid: Type.Integer(), shell: Type.String() }),
    },
    /** Payload = bytes to write to the PTY. */
    write: { params: Type.Object({ ...SessionRef }), result: Ok },
    resize: { params: Type.Object({ ...SessionRef, rows: Dimension, cols: Dimension }), result: Ok },
    pause: { params: Type.Object({ ...SessionRef }), result: Ok },
    resume: { params: Type.Object({ ...SessionRef }), result: Ok },
    /** Sends a signal to the session's process group (default SIGHUP, as a closing terminal would). */
    kill: { params: Type.Object({ ...SessionRef, signal: Type.Optional(Type.String()) }), result: Ok },
    /**
     * Raw bytes from the ring: from `offset` (absolute, clamped to the oldest byte kept) or the last
     * `limit` bytes. Payload = the bytes; `start` = absolute offset of the first byte returned.
     */
    readRaw: {
      params: Type.Object({ ...SessionRef, offset: Type.Optional(Type.Integer({ minimum: 0 })), limit: Type.Optional(Type.Integer({ minimum: 0 })) }),
      result: Type.Object({ start: Type.Integer(), total_written: Type.Integer() }),
    },
    /** Stripped, redacted lines: from `offset` (absolute line index) or the last `limit` lines. */
    readLog: {
      params: Type.Object({ ...SessionRef, offset: Type.Optional(Type.Integer({ minimum: 0 })), limit: Type.Optional(Type.Integer({ minimum: 0 })) }),
      result: Type.Object({
        lines: Type.Array(Type.String()),
        offset: Type.Integer(),
        total_lines: Type.Integer(),
        oldest_offset: Type.Integer(),
        /** The unfinished last line (a prompt, a progress bar), stripped and redacted. */
        partial: Type.String(),
      }),
    },
    /**
     * The current screen, rendered on demand from the raw ring: one right-trimmed, redacted string per
     * row (`rows_count` of them), the cursor (0-based) and whether the alternate screen is active.
     */
    readScreen: {
      params: Type.Object({ ...SessionRef }),
      result: Type.Object({
        rows: Type.Array(Type.String()),
        cursor_row: Type.Integer(),
        cursor_col: Type.Integer(),
        alt_screen: Type.Boolean(),
        cols: Type.Integer(),
        rows_count: Type.Integer(),
      }),
    },
    /**
     * A question about a live session's current screen (rows and columns 0-based): the logical line a
     * row belongs to, a selection's text, the OSC 8 hyperlink under a cell, the kitty keyboard flags.
     * `retained: false`: the rows asked for are not on the screen (scrolled away, or past its end).
     */
    screenQuery: {
      params: Type.Object({
        ...SessionRef,
        query: Type.Union([
          Type.Object({ kind: Type.Literal('logical_line'), row: Type.Integer({ minimum: 0 }) }),
          Type.Object({
            kind: Type.Literal('selection'),
            start_row: Type.Integer({ minimum: 0 }),
            start_col: Type.Integer({ minimum: 0 }),
            end_row: Type.Integer({ minimum: 0 }),
            end_col: Type.Integer({ minimum: 0 }),
          }),
          Type.Object({ kind: Type.Literal('hyperlink'), row: Type.Integer({ minimum: 0 }), col: Type.Integer({ minimum: 0 }) }),
          Type.Object({ kind: Type.Literal('kitty_flags') }),
        ]),
      }),
      result: Type.Object({
        retained: Type.Optional(Type.Literal(false)),
        start_row: Type.Optional(Type.Integer()),
        text: Type.Optional(Type.String()),
        link: Type.Optional(Type.Union([Type.Object({ start_col: Type.Integer(), end_col: Type.Integer(), url: Type.String() }), Type.Null()])),
        kitty_flags: Type.Optional(Type.Integer({ minimum: 0 })),
      }),
    },
    /** Drops a session: a live one is killed first, an exited one's tombstone is freed (it expired). */
    forget: { params: Type.Object({ ...SessionRef }), result: Ok },
    /** The tombstones held: how many, their bytes, and the budget they share (GET /stats). */
    tombstones: {
      params: Type.Object({}),
      result: Type.Object({ count: Type.Integer({ minimum: 0 }), bytes: Type.Integer({ minimum: 0 }), budget_bytes: Type.Integer({ minimum: 0 }) }),
    },
    /** The host's event-loop delay, 99th percentile over the last 5–10 s (GET /metrics). */
    loopDelay: { params: Type.Object({}), result: Type.Object({ p99_ms: Type.Number({ minimum: 0 }) }) },
    /** What each live session holds (raw ring, line log, screen grid), in bytes, for GET /stats. */
    memory: {
      params: Type.Object({}),
      result: Type.Object({
        sessions: Type.Array(
          Type.Object({
            session_id: Type.String(),
            ring_bytes: Type.Integer({ minimum: 0 }),
            log_bytes: Type.Integer({ minimum: 0 }),
            screen_bytes: Type.Integer({ minimum: 0 }),
          }),
        ),
      }),
    },
    /** Per-session process ids, for /process/stats. */
    processes: {
      params: Type.Object({}),
      result: Type.Object({ host_pid: Type.Integer(), sessions: Type.Array(Type.Object({ session_id: Type.String(), pid: Type.Integer() })) }),
    },
    /** Starts (fresh files in `dir`, for `session_id` or all sessions) or stops the raw capture. */
    capture: {
      params: Type.Object({ enabled: Type.Boolean(), dir: Type.Optional(Type.String()), session_id: Type.Optional(Type.String({ minLength: 1 })) }),
      result: CaptureStatus,
    },
    captureStatus: { params: Type.Object({}), result: CaptureStatus },
    /**
     * A supervisor takes over a detached host (after a crash or a restart that kept the sessions):
     * every session the host still holds, live or tombstoned, with the supervisor's own record of it
     * as last sent (`record` events), and the flow control restarted (nothing sent before is owed).
     */
    adopt: {
      params: Type.Object({}),
      result: Type.Object({
        host_pid: Type.Integer(),
        sessions: Type.Array(
          Type.Object({
            ...SessionRef,
            pid: Type.Integer(),
            shell: Type.String(),
            total_written: Type.Integer({ minimum: 0 }),
            shell_state: Type.Union([ShellState, Type.Null()]),
            /** Null while the child runs. */
            exit: Type.Union([
              Type.Object({ exit_code: Type.Union([Type.Integer(), Type.Null()]), signal: Type.Union([Type.Integer(), Type.Null()]) }),
              Type.Null(),
            ]),
            /** The supervisor's record (opaque JSON to the host); absent when none was sent. */
            record: Type.Optional(Type.String()),
          }),
        ),
      }),
    },
  },
  events: {
    /** Coalesced output; payload = bytes, `offset` = absolute offset of the payload's first byte. */
    data: Type.Object({ ...SessionRef, offset: Type.Integer() }),
    /**
     * Host → supervisor: in place of `data` for a session nobody watches (`watch`): the batch
     * [offset, offset + bytes) was printed, without its bytes (the ring has them) and owing no `ack`.
     * At most one per session per window (ACTIVITY_WINDOW_MS, workers/pty/ptyService.ts): the first
     * batch after a quiet window at once, the rest summed at the window's end, always before the
     * session's next other event.
     */
    activity: Type.Object({ ...SessionRef, offset: Type.Integer({ minimum: 0 }), bytes: Type.Integer({ minimum: 0 }) }),
    /**
     * Supervisor → host: whether something on the supervisor needs the session's bytes (a viewer):
     * from the next batch on they leave as `data` (watched) or as `activity` notices (not). A viewer
     * sends this before its ring read, so the read and the batches after it cover every byte.
     * `adopt` makes every session unwatched (a new supervisor has no viewers yet).
     */
    watch: Type.Object({ ...SessionRef, watched: Type.Boolean() }),
    /** The child exited; the host keeps its tombstone readable until `forget` or `tombstoneDropped`. */
    exit: Type.Object({
      ...SessionRef,
      exit_code: Type.Union([Type.Integer(), Type.Null()]),
      signal: Type.Union([Type.Integer(), Type.Null()]),
      total_written: Type.Integer(),
    }),
    state: Type.Object({ ...SessionRef, shell_state: ShellState }),
    /** Host → supervisor: an exited session's tombstone was dropped (the budget was full); its reads are gone. */
    tombstoneDropped: Type.Object({ ...SessionRef }),
    /**
     * Supervisor → host: bytes a viewer typed (payload), written like `write` but with no reply: the
     * keystroke path skips a round of request bookkeeping on both sides. Only sent while no `write`
     * of the session is in flight, so the two keep their order.
     */
    input: Type.Object({ ...SessionRef, from: Type.Optional(Type.Integer({ minimum: 0 })) }),
    /**
     * Host → supervisor: an `input` event was refused (INPUT_BACKLOG_BYTES unread); `from` is the
     * tag the event carried, so the supervisor can tell the viewer that typed it.
     */
    inputRefused: Type.Object({ ...SessionRef, from: Type.Optional(Type.Integer({ minimum: 0 })), backlog_bytes: Type.Integer({ minimum: 0 }) }),
    /** Host → supervisor: what the output parser found, in stream order. */
    parsed: Type.Object({ ...SessionRef, events: Type.Array(ParsedEventSchema, { minItems: 1 }) }),
    /** Host → supervisor: the program switched to or from the alternate screen (SessionState terminal_mode). */
    screenMode: Type.Object({ ...SessionRef, alt_screen: Type.Boolean() }),
    /** Supervisor → host: the agent now in the session's foreground (null: none), for the parser. */
    agent: Type.Object({ ...SessionRef, agent_type: Type.Union([Type.String({ minLength: 1, maxLength: 32 }), Type.Null()]) }),
    /**
     * Supervisor → host: the supervisor's record of a session (aliases, names, agent state…), opaque
     * JSON the host keeps for the next supervisor in case this one dies (detached hosts only).
     */
    record: Type.Object({ ...SessionRef, record: Type.String({ maxLength: PtyConstants.RECORD_MAX_CHARS }) }),
    /** Supervisor → host: `bytes` more of the session's output were handled (UNACKED_OUTPUT_BYTES). */
    ack: Type.Object({ ...SessionRef, bytes: Type.Integer({ minimum: 0 }) }),
    /**
     * Supervisor → host: every output watcher now set (all clients', ids qualified `<client>/<id>`),
     * replacing the previous list; matched against every session's stripped lines. Empty: none.
     */
    outputWatchers: Type.Object({
      watchers: Type.Array(Type.Object({ id: Type.String({ minLength: 1 }), pattern: Type.String({ minLength: 1 }), flags: Type.String() }), {
        maxItems: PtyConstants.MAX_OUTPUT_WATCHERS,
      }),
    }),
    /** Host → supervisor: lines of a session some watchers matched (redacted), in output order; `dropped` past the per-event cap. */
    watcherLines: Type.Object({
      ...SessionRef,
      lines: Type.Array(Type.Object({ text: Type.String(), matched_ids: Type.Array(Type.String(), { minItems: 1 }) }), { minItems: 1 }),
      dropped: Type.Integer({ minimum: 0 }),
    }),
  },
});

export type PtyProtocolT = typeof PtyProtocol;
