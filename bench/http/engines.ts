/**
 * Which HTTP engine a bench server runs on. tuicd serves on uWebSockets.js where a build loads for
 * this Node ABI and libc, otherwise on node:http + ws (supervisor/http/engine/). The bench forces
 * the engine of every tuicd variant (`--http-engine`) and checks the start line, so a row never
 * measures the other engine by accident; its own uWS servers (bare uWS, the one-process PTY peer,
 * the SSE bench) load uWS exactly as tuicd does, never through a package's slow JS fallback.
 */
import { loadUws } from '../../supervisor/http/engine/select.js';
import type { EngineRequest, EngineResponse, EngineSocket } from '../../supervisor/http/engine/types.js';

export type TuicdEngine = 'uws' | 'node';

/** The end of tuicd's start line: `(http engine <name>: <detail>)`; the detail may hold parentheses. */
const ENGINE_IN_READY_LINE_RE = /\(http engine (\w+): (.*)\)\s*$/;

/** The subset of uWebSockets.js the bench's own servers call (both known builds have it). */
export interface BenchUws {
  App(): BenchUwsApp;
  us_listen_socket_close(listenSocket: unknown): void;
  us_socket_local_port(socket: unknown): number;
}

export interface BenchUwsApp {
  get(pattern: string, handler: (res: EngineResponse, req: EngineRequest) => void): BenchUwsApp;
  ws<U>(pattern: string, behavior: BenchUwsWsBehavior<U>): BenchUwsApp;
  /** The listen socket, or false when the address cannot be bound. */
  listen(host: string, port: number, cb: (listenSocket: unknown) => void): BenchUwsApp;
  listen_unix(cb: (listenSocket: unknown) => void, path: string): BenchUwsApp;
}

export interface BenchUwsWsBehavior<U> {
  maxBackpressure?: number;
  open?(ws: EngineSocket<U>): void;
  message?(ws: EngineSocket<U>, message: ArrayBuffer, isBinary: boolean): void;
  drain?(ws: EngineSocket<U>): void;
  close?(ws: EngineSocket<U>, code: number): void;
}

export type BenchUwsLoad = { ok: true; uws: BenchUws; label: string } | { ok: false; why: string };

let loaded: BenchUwsLoad | undefined;

/** uWS as tuicd would load it in this Node (`loadUws()`), once per process. */
export function benchUws(): BenchUwsLoad {
  if (!loaded) {
    const attempt = loadUws();
    loaded = attempt.ok ? { ok: true, uws: attempt.module as unknown as BenchUws, label: attempt.label } : { ok: false, why: attempt.why };
  }
  return loaded;
}

/** The reason every uWS row gives where no build loads: the bench still runs, those rows say why. */
export function uwsUnavailable(why: string): string {
  return `uWS unavailable: ${why} (Node ${process.versions.node}, ABI ${process.versions.modules})`;
}

/** For a child server (bare uWS, the PTY peer): uWS, or exit 3 with the reason on stderr. */
export function uwsOrExit(server: string): BenchUws {
  const u = benchUws();
  if (u.ok) return u.uws;
  process.stderr.write(`${server}: ${uwsUnavailable(u.why)}\n`);
  process.exit(3);
}

/**
 * Why a tuicd cannot be started on `engine` in this Node, before trying: forcing uws where no
 * build loads makes tuicd exit, and the row should say why in the bench's words.
 */
export function engineUnavailable(engine: TuicdEngine | undefined): string | undefined {
  if (engine !== 'uws') return undefined;
  const u = benchUws();
  return u.ok ? undefined : uwsUnavailable(u.why);
}

/** tuicd's command-line flag for `engine` (none: tuicd picks, as a user's default start does). */
export function engineArgs(engine: TuicdEngine | undefined): string[] {
  return engine ? ['--http-engine', engine] : [];
}

export interface EngineInUse {
  name: string;
  detail: string;
}

/**
 * The engine tuicd reports in its start line; throws when it is not the one asked for (a row must
 * not measure the other engine) or when the line does not say (an older tuicd build).
 */
export function engineOfReadyLine(line: string, wanted: TuicdEngine | undefined): EngineInUse | undefined {
  const m = ENGINE_IN_READY_LINE_RE.exec(line);
  if (!m) {
    if (wanted)
      throw new Error(
        `tuicd's start line does not name its HTTP engine ("(http engine <name>: <detail>)"): rebuild (npm run build); line: ${line.slice(0, 200)}`,
      );
    return undefined;
  }
  const inUse = { name: m[1]!, detail: m[2]! };
  if (wanted && inUse.name !== wanted) throw new Error(`tuicd started with --http-engine ${wanted} runs on the ${inUse.name} engine (${inUse.detail})`);
  return inUse;
}
