/** What the tools/call bench's servers and drivers share: the request, and the bare server's answer. */

/** The bare server's `session action=list` answer: two rows in the shape of tuicd's list, for two idle shells. */
export const BARE_SESSION_ROWS = [
  { session_id: '7f3c2a9e-1b4d-4c8a-9e2f-5a6b7c8d9e01', is_caller: false, cwd: '/tmp/tuicd-bench-a', foreground_process: 'bash', shell_state: 'idle' },
  { session_id: '0c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e', is_caller: false, cwd: '/tmp/tuicd-bench-b', foreground_process: 'bash', shell_state: 'idle' },
];

/** A tools/call's params. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** The tools/call bench's call: tuicd's `session action=list`. */
export const SESSION_LIST_CALL: ToolCall = { name: 'session', arguments: { action: 'list' } };

/** The measured call, the same bytes for every server. */
export function toolsCallBody(id: number, call: ToolCall = SESSION_LIST_CALL): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: call });
}

/** Any other request a driver may send (e.g. resources/read, prompts/get): its method and params. */
export interface RpcRequest {
  method: string;
  params: Record<string, unknown>;
}

/**
 * What a driver sends, from its command line: `--method tools/call` (default) with `--tool` and
 * `--arguments` (JSON), `--method tools/list`, or any other method with `--params` (JSON). Spread
 * into parseArgs' options.
 */
export const REQUEST_OPTIONS = {
  method: { type: 'string', default: 'tools/call' },
  tool: { type: 'string', default: SESSION_LIST_CALL.name },
  arguments: { type: 'string', default: JSON.stringify(SESSION_LIST_CALL.arguments) },
  params: { type: 'string' },
} as const;

/** The driver flags that ask for `request` (for a parent building a driver's command line). */
export function requestArgs(request: ToolCall | 'tools/list' | RpcRequest): string[] {
  if (request === 'tools/list') return ['--method', 'tools/list'];
  if ('method' in request) return ['--method', request.method, '--params', JSON.stringify(request.params)];
  return ['--tool', request.name, '--arguments', JSON.stringify(request.arguments)];
}

/** The JSON-RPC request body REQUEST_OPTIONS' values ask for, with this id. */
export function requestBody(id: number, values: { method: string; tool: string; arguments: string; params?: string | undefined }): string {
  if (values.method === 'tools/list') return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
  if (values.method !== 'tools/call') {
    if (values.params === undefined) throw new Error(`--method ${values.method} needs --params (JSON)`);
    return JSON.stringify({ jsonrpc: '2.0', id, method: values.method, params: JSON.parse(values.params) as Record<string, unknown> });
  }
  return toolsCallBody(id, { name: values.tool, arguments: JSON.parse(values.arguments) as Record<string, unknown> });
}

/** A tools/call result that reports a tool error (the answer is a JSON-RPC result all the same). */
export const IS_ERROR_MARK = '"isError":true';

/** The protocol version both sides negotiate (tuicd echoes the version the client asks for). */
export const PROTOCOL_VERSION = '2025-11-25';

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** What the parent reads: counts and latencies over the measured window. */
export interface ToolsCallLoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses since the first request, warm-up included (to pair with server CPU time). */
  totalRequests: number;
  /** Non-2xx answers, or 2xx answers without a JSON-RPC result (the figure would measure an error path). */
  bad: number;
  errors: number;
  /** This process's CPU time over the window / wall time: near 1 means the client was the limit. */
  clientCpu: number;
  firstProblem?: string;
  /** Drivers that start the server themselves (stdio): its CPU seconds over the window, the process and its descendants. */
  serverCpu?: { root: number; descendants: number };
}

/** What a driver counted since its first request. */
export interface DriverCounts {
  responses: number;
  bad: number;
  errors: number;
  /** Latencies recorded over the measured window only. */
  latenciesMs: number[];
  firstProblem: string | undefined;
}

/** The measured window's result: counts since `start`, wall time since `t0`, this process's CPU since `cpu0`. */
export function summarize(
  now: DriverCounts,
  start: { responses: number; bad: number; errors: number },
  t0: bigint,
  cpu0: NodeJS.CpuUsage,
): ToolsCallLoadResult {
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const requests = now.responses - start.responses;
  const sorted = now.latenciesMs.sort((a, b) => a - b);
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    totalRequests: now.responses,
    bad: now.bad - start.bad,
    errors: now.errors - start.errors,
    clientCpu: (cpu.user + cpu.system) / 1e6 / seconds,
    ...(now.firstProblem ? { firstProblem: now.firstProblem } : {}),
  };
}
