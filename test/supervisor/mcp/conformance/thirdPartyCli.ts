/**
 * Runs the third-party MCP clients under Node 22, each in a throwaway HOME and working directory so
 * neither touches the user's ~ (the Inspector keeps a catalog and storage there; the conformance
 * CLI writes results/ into its cwd): the MCP conformance suite's server scenarios and the MCP
 * Inspector CLI.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { devDependencyFile, node22 } from '../../../helpers/node22.js';

const CONFORMANCE_JS = '@modelcontextprotocol/conformance/dist/index.js';
const INSPECTOR_JS = '@modelcontextprotocol/inspector/clients/launcher/build/index.js';
/** Far above a run's few seconds; only a hang reaches it. */
const RUN_TIMEOUT_MS = 120_000;

/** One entry of a scenario's checks.json. */
export interface ConformanceCheck {
  id: string;
  name: string;
  description: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: Record<string, unknown>;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[]): Promise<CliRun> {
  const home = mkdtempSync(join(tmpdir(), 'tuicd-mcp-cli-'));
  return new Promise<CliRun>((resolve, reject) => {
    execFile(
      node22(),
      args,
      {
        cwd: home,
        timeout: RUN_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json'), NO_COLOR: '1' },
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(new Error(`${args[0]} did not finish (${err.signal ?? err.message}): ${stderr.slice(-500)}`));
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  }).finally(() => rmSync(home, { recursive: true, force: true }));
}

/**
 * `conformance server --url <url>` for one scenario or a whole suite ("active" by default, "all"
 * adds the pending ones), results in a temp dir; returns every scenario's checks by name.
 */
export async function runConformance(
  url: string,
  which: { scenario: string } | { suite: 'active' | 'all' },
): Promise<CliRun & { checks: Map<string, ConformanceCheck[]> }> {
  const out = mkdtempSync(join(tmpdir(), 'tuicd-conformance-'));
  try {
    const selection = 'scenario' in which ? ['--scenario', which.scenario] : ['--suite', which.suite];
    const result = await run([devDependencyFile(CONFORMANCE_JS), 'server', '--url', url, ...selection, '-o', out]);
    const checks = new Map<string, ConformanceCheck[]>();
    for (const dir of readdirSync(out)) {
      // <out>/server-<scenario>-<ISO timestamp with - for :>
      const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir);
      if (m) checks.set(m[1]!, JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as ConformanceCheck[]);
    }
    return { ...result, checks };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The suite's own verdict for one scenario: it passes when no check failed or warned. */
export function verdict(checks: readonly ConformanceCheck[]): { passed: boolean; problems: string[] } {
  const problems = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
  return { passed: problems.length === 0, problems };
}

/** `inspector --cli <url> --transport http …` (MCP Inspector 2.12); its answer is JSON on stdout. */
export function runInspector(url: string, args: string[]): Promise<CliRun> {
  return run([devDependencyFile(INSPECTOR_JS), '--cli', url, '--transport', 'http', ...args]);
}

/** `inspector --cli <command> [args] -e K=V … <args>` (MCP Inspector 2.12) over stdio: it launches the server itself. */
export function runInspectorStdio(command: string, commandArgs: string[], env: Record<string, string>, args: string[]): Promise<CliRun> {
  const envFlags = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  return run([devDependencyFile(INSPECTOR_JS), '--cli', command, ...commandArgs, ...envFlags, ...args]);
}
