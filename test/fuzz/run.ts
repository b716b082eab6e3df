#!/usr/bin/env node
/**
 * `npm run fuzz -- [--seed N] [--requests N] [--seconds N] [--concurrency N] [--engine uws|node]
 *                  [--no-tcp] [--replay I,J,…] [--examples N] [--groups N]`
 *
 * Starts a real tuicd in a temporary dir (unix socket + TCP on 127.0.0.1 only), fuzzes every route,
 * prints a summary and every distinct finding with the seed and index that reproduce it, stops
 * every process it started. Exit 0: no finding; 1: findings; 2: the fuzzer itself failed.
 */
import { formatReport, runFuzz } from './fuzzer.js';

const USAGE =
  'usage: node dist/test/fuzz/run.js [--seed N] [--requests N] [--seconds N] [--concurrency N] [--engine uws|node] [--no-tcp] [--replay I,J,...] [--examples N] [--groups N] [--verbose]';

function parseArgs(argv: string[]): Record<string, string | true> {
  const out: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) out[a.slice(2)] = argv[++i]!;
    else out[a.slice(2)] = true;
  }
  return out;
}

function int(v: string | true | undefined, name: string, fallback: number, min = 0): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v === true || !Number.isInteger(n) || n < min) throw new Error(`--${name} needs an integer >= ${min}`);
  return n;
}

async function main(): Promise<number> {
  let args: Record<string, string | true>;
  let opts;
  try {
    args = parseArgs(process.argv.slice(2));
    if (args['help']) {
      console.log(USAGE);
      return 0;
    }
    const known = new Set(['seed', 'requests', 'seconds', 'concurrency', 'engine', 'no-tcp', 'replay', 'examples', 'groups', 'verbose']);
    for (const k of Object.keys(args)) if (!known.has(k)) throw new Error(`unknown option --${k}`);
    const engine = args['engine'];
    if (engine !== undefined && engine !== 'uws' && engine !== 'node') throw new Error('--engine is uws or node');
    const replay = typeof args['replay'] === 'string' ? args['replay'].split(',').map((s) => int(s.trim(), 'replay', 0)) : undefined;
    opts = {
      seed: int(args['seed'], 'seed', 1),
      requests: int(args['requests'], 'requests', 2000, 1),
      seconds: int(args['seconds'], 'seconds', 60, 1),
      concurrency: int(args['concurrency'], 'concurrency', 6, 1),
      tcp: !args['no-tcp'],
      examples: int(args['examples'], 'examples', 3, 1),
      verbose: args['verbose'] === true,
      ...(engine ? { engine } : {}),
      ...(replay ? { replay } : {}),
    };
    if (opts.concurrency > 32) throw new Error('--concurrency is at most 32');
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const groups = int(args['groups'], 'groups', 60, 1);
  const startedAt = new Date().toISOString();
  console.log(
    `fuzzing tuicd: seed ${opts.seed}, up to ${opts.replay ? `${opts.replay.length} replayed` : opts.requests} cases or ${opts.seconds} s, concurrency ${opts.concurrency} (${startedAt})`,
  );
  const report = await runFuzz({ ...opts, log: (line) => console.log(`  ${line}`) });
  console.log('');
  console.log(formatReport(report, { maxGroups: groups }));
  return report.failed ? 1 : 0;
}

// A reader that went away (`| head`) must not kill the run before it stops tuicd: drop further output.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`fuzzer failed: ${(err as Error)?.stack ?? String(err)}`);
    process.exit(2);
  },
);
