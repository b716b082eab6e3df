/**
 * What the session benches ask of their load generator (client.ts, its own process) and what it
 * answers: one JSON command per stdin line, one `RESULT {...}` line per answer on stdout.
 */

/** How a stream's bytes are checked once it has been read (never while it is timed). */
export type OutputCheck =
  /** base64's output with `stty -onlcr`: lines of 76 characters, each ending in a bare `\n`. */
  | { kind: 'base64-lines'; lineChars: number }
  /** One byte repeated (`tr '\0' a`). */
  | { kind: 'repeated'; byte: number }
  /** A file printed as is (`cat`): its SHA-256. */
  | { kind: 'sha256'; hex: string };

export interface StreamSpec {
  /** Payload bytes a viewer must receive after the ready marker. */
  expected: number;
  check: OutputCheck;
  /** A stream with no byte for this long is over (short, or stuck): the result says how many came. */
  idleTimeoutMs: number;
}

export interface EchoSpec {
  keystrokes: number;
  /** Leading keystrokes not recorded (JIT, first wake-ups). */
  warmup: number;
  /** Pause between an echo and the next keystroke, cycling through [min, max] ms. */
  gapMinMs: number;
  gapMaxMs: number;
}

export type ClientCommand =
  /** `viewers` WebSocket viewers on one tuicd session running a `readyScript` (see scripts.ts). */
  /** `json`: the viewers take the default JSON `output` frames instead of binary ones. */
  | ({ op: 'stream'; socket: string; sessionId: string; viewers: number; json?: boolean } & StreamSpec)
  /** The baseline: the same script on a bare node-pty in the client process, read as Buffers. */
  | ({ op: 'bareStream'; script: string } & StreamSpec)
  | ({ op: 'echo'; socket: string; sessionId: string } & EchoSpec)
  | ({ op: 'bareEcho'; script: string } & EchoSpec)
  /** `GET /health` every `intervalMs` (one in flight) for `durationMs`. */
  | { op: 'health'; socket: string; intervalMs: number; durationMs: number }
  /** The memory baseline: `sessions` bare node-ptys running `command args`, read as Buffers, for `durationMs`. */
  | { op: 'bareHold'; command: string; args: string[]; sessions: number; settleMs: number; durationMs: number; sampleMs: number }
  /** Opens one viewer and resolves once the session's ready marker arrived. */
  | { op: 'viewerOpen'; socket: string; sessionId: string }
  /** Types the newline that starts the session's work; with `pause`, the viewer stops reading first. */
  | { op: 'viewerGo'; handle: number; pause: boolean }
  /** Resumes reading, waits for `closed` (or `waitMs`), closes the socket and reports what it got. */
  | { op: 'viewerClose'; handle: number; waitMs: number };

export interface ViewerStreamResult {
  /** Payload bytes received after the marker. */
  bytes: number;
  /** performance.now() of the first and last payload byte's arrival. */
  firstAt: number;
  lastAt: number;
  /** Why the bytes are not what the script printed; null when they are. */
  problem: string | null;
  /** WebSocket viewers: control frames received, by type (`resync` means bytes were skipped). */
  frames?: Record<string, number>;
}

export interface StreamResult {
  viewers: ViewerStreamResult[];
}

export interface EchoResult {
  /** Round-trip of each recorded keystroke, ms. */
  samples: number[];
}

export interface HealthResult {
  /** Request latency of each GET /health, ms. */
  samples: number[];
  non2xx: number;
  errors: number;
  /** The client's own event-loop delay p99 over the window (ms): how much of the latency is ours. */
  clientLoopP99Ms: number;
}

export interface BareHoldResult {
  /** VmRSS of the client process after one warm-up pty came and went, KiB. */
  rssBeforeKiB: number;
  /** Largest VmRSS while the sessions ran, KiB. */
  rssMaxKiB: number;
  /** Output bytes read from all sessions during the window. */
  bytes: number;
  windowMs: number;
}

export interface ViewerOpenResult {
  handle: number;
}

export interface ViewerCloseResult {
  bytes: number;
  /** Control frames by type (`resync`, `exit`, `closed`, ...). */
  frames: Record<string, number>;
  /** Set when the socket errored or closed before the viewer closed it. */
  ended?: string;
}

/** The prefix of an answer line; everything else the client prints is log. */
export const RESULT_PREFIX = 'RESULT ';

export type ClientAnswer = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };
