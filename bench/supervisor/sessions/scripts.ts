/**
 * The shell scripts every session bench runs, each the same in tuicd and on a bare node-pty:
 * `/bin/sh -c <script>`. Each prints READY_MARKER once it is set up and then waits for a newline,
 * so viewers attach (and baselines start timing) before the work begins and nothing is read from
 * the ring's catch-up.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

import type { OutputCheck } from './protocol.js';

export const SHELL = '/bin/sh';
/** One byte the script prints when it is ready for the go-newline; not part of the payload. */
export const READY_MARKER = 'R';
/** base64 wraps its output at 76 characters (GNU coreutils default). */
const BASE64_LINE = 76;

export interface StreamScript {
  script: string;
  /** Payload bytes printed after the marker. */
  expected: number;
  check: OutputCheck;
}

/**
 * `head -c N /dev/urandom | base64`: producer-bound. `stty -onlcr` keeps each `\n` one byte, so the
 * expected count is base64's own; `-echo` keeps the go-newline out of the output. The trailing
 * `read` keeps the shell (and the PTY) open, so the figure never depends on node-pty's exit tail.
 */
export function base64Flood(inputBytes: number): StreamScript {
  const chars = 4 * Math.ceil(inputBytes / 3);
  const expected = chars + Math.ceil(chars / BASE64_LINE);
  return {
    script: `stty -echo -onlcr; printf ${READY_MARKER}; read go; head -c ${inputBytes} /dev/urandom | base64; read stay`,
    expected,
    check: { kind: 'base64-lines', lineChars: BASE64_LINE },
  };
}

/** `cat` of a file prepared by the bench (agent output): printed as is, checked by its SHA-256. */
export function fileFlood(path: string, bytes: number, sha256: string): StreamScript {
  return {
    script: `stty -echo -onlcr; printf ${READY_MARKER}; read go; cat '${path}'; read stay`,
    expected: bytes,
    check: { kind: 'sha256', hex: sha256 },
  };
}

/** `head -c N /dev/zero | tr '\0' a`: reader-bound (no newlines, so onlcr does not matter). */
export function zeroFlood(bytes: number): StreamScript {
  return {
    script: `stty -echo; printf ${READY_MARKER}; read go; head -c ${bytes} /dev/zero | tr '\\0' a; read stay`,
    expected: bytes,
    check: { kind: 'repeated', byte: 'a'.charCodeAt(0) },
  };
}

/**
 * Keystroke echo: the line discipline echoes each typed byte at once (`-icanon`: no 4 KB line
 * limit), and `cat` drains the input. No process sits in the echo path, only the kernel.
 */
export const ECHO_SCRIPT = `stty -icanon; printf ${READY_MARKER}; exec cat >/dev/null`;

/** Bytes per line of the steady printer; with onlcr each line is LINE + 1 bytes on the wire. */
const STEADY_LINE_BYTES = 2048;
/** One line every 100 ms: ~20 KB/s, the per-session rate. */
const STEADY_PERIOD_S = 0.1;

/**
 * A session printing a 2 KB line every 100 ms for as long as it lives. perl, because a shell loop
 * would fork `sleep` 10 times a second per session (2,000 forks/s for 200 sessions), which would
 * load the machine more than the supervisor does. perl dies on the PTY's hang-up.
 */
export const STEADY_PRINTER = {
  command: 'perl',
  args: ['-e', `$| = 1; my $l = "x" x ${STEADY_LINE_BYTES - 1}; while (1) { print "$l\\n"; select(undef, undef, undef, ${STEADY_PERIOD_S}); }`],
  bytesPerSecond: (STEADY_LINE_BYTES + 1) / STEADY_PERIOD_S,
};

/** Absolute path of the steady printer's perl, or undefined when the machine has none. */
export function steadyPrinterPath(): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${STEADY_PRINTER.command}`], { encoding: 'utf8', timeout: 5000 });
  const path = r.stdout?.trim();
  return path && existsSync(path) ? path : undefined;
}

/** An unbounded flood for the stalled-viewer test; starts on the go-newline. */
export const YES_FLOOD = `stty -echo; printf ${READY_MARKER}; read go; exec yes`;
