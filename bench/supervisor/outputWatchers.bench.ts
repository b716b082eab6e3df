/**
 * Output watchers on the PTY path (issue 32): pty host CPU per MB of a `urandom | base64` flood with
 * 8 output watchers set (POST /api/plugins/output-watchers) against none, same build, same run.
 * Two tuicds side by side: one never gets a watcher (its host runs exactly as without the feature),
 * the other has 8 set before the session starts. The runs alternate, order rotating per repetition.
 * Goal: ≤ 1.15× host CPU per MB with the 8 watchers.
 */
import { cpuSeconds } from '../http/children.js';
import { errorText, failedRow, median, row, withNote, type BenchContext, type BenchModule, type BenchRow } from '../harness.js';
import { fmt, goal } from './sessions/stats.js';
import { createSession, deleteSession, ptyHostPid, request, sleep, startTuicd, type TuicdUnderTest } from './sessions/tuicd.js';

const Constants = {
  /** Input bytes of random data; base64 prints 4/3 of it plus a newline every 76 characters. */
  INPUT_BYTES: 24_000_000,
  INPUT_BYTES_QUICK: 6_000_000,
  GOAL: 1.15,
  EXIT_TIMEOUT_MS: 120_000,
} as const;

/** Eight watchers a plugin set might hold: none matches base64 text, so the cost is the matching itself. */
const WATCHERS = [
  { id: 'error', pattern: '\\berror\\b', flags: 'i' },
  { id: 'warn', pattern: '^warn(ing)?:', flags: 'i' },
  { id: 'prompt', pattern: '^\\$ $' },
  { id: 'done', pattern: 'done in \\d+(\\.\\d+)?s$' },
  { id: 'url', pattern: 'https?://localhost:\\d+' },
  { id: 'panic', pattern: 'panicked at' },
  { id: 'failed', pattern: '\\d+ (tests? )?failed' },
  { id: 'ready', pattern: '^ready - started server' },
];

const NONE = 'tuicd, no output watcher';
const EIGHT = 'tuicd, 8 output watchers';

async function waitExited(t: TuicdUnderTest, id: string): Promise<void> {
  const deadline = Date.now() + Constants.EXIT_TIMEOUT_MS;
  for (;;) {
    const r = await request(t.socketPath, 'GET', `/sessions/${id}/output?limit=1`);
    if (r.status === 404 || (r.status === 200 && JSON.parse(r.body).exit_code !== undefined)) return;
    if (Date.now() > deadline) throw new Error(`session ${id} still running after ${Constants.EXIT_TIMEOUT_MS / 1000} s`);
    await sleep(50);
  }
}

/** One flood in a fresh session: the pty host's CPU ms per MB printed. */
async function flood(t: TuicdUnderTest, inputBytes: number): Promise<number> {
  const outputMb = (4 * Math.ceil(inputBytes / 3) * (1 + 1 / 76)) / 1e6;
  const id = await createSession(t.socketPath, '/bin/sh', ['-c', `head -c ${inputBytes} /dev/urandom | base64`]);
  try {
    const host = ptyHostPid(t.pid);
    if (host === undefined) throw new Error('no pty host process found');
    const cpu0 = cpuSeconds(host);
    await waitExited(t, id);
    const cpu1 = cpuSeconds(host);
    if (cpu0 === undefined || cpu1 === undefined) throw new Error('pty host CPU time unreadable (/proc)');
    return ((cpu1 - cpu0) * 1000) / outputMb;
  } finally {
    await deleteSession(t.socketPath, id).catch(() => undefined);
  }
}

export const run: BenchModule = async (ctx: BenchContext): Promise<BenchRow[]> => {
  const group = 'output watchers: urandom | base64 flood';
  const unit = 'pty host CPU ms/MB (lower is better)';
  const inputBytes = ctx.quick ? Constants.INPUT_BYTES_QUICK : Constants.INPUT_BYTES;
  let none: TuicdUnderTest | undefined;
  let eight: TuicdUnderTest | undefined;
  try {
    none = await startTuicd();
    eight = await startTuicd();
    const set = await request(eight.socketPath, 'POST', '/api/plugins/output-watchers', { client_id: 'bench', seq: 1, watchers: WATCHERS });
    const answer = JSON.parse(set.body) as { applied?: boolean; rejected?: string[] };
    if (set.status !== 200 || answer.applied !== true || answer.rejected?.length) throw new Error(`setting the watchers answered ${set.status}: ${set.body}`);
    const variants: Array<[string, TuicdUnderTest]> = [
      [NONE, none],
      [EIGHT, eight],
    ];
    const values = new Map<string, number[]>([
      [NONE, []],
      [EIGHT, []],
    ]);
    // Warm-up: each host's JIT, and the first session's start-up, not recorded.
    for (const [, t] of variants) await flood(t, Math.min(inputBytes, 2_000_000));
    for (let rep = 0; rep < Math.max(3, ctx.repetitions); rep++) {
      const order = rep % 2 === 0 ? variants : [...variants].reverse();
      for (const [name, t] of order) values.get(name)!.push(await flood(t, inputBytes));
    }
    const base = values.get(NONE)!;
    const mine = values.get(EIGHT)!;
    const ratio = median(mine) / median(base);
    const size = `${Math.round((4 * Math.ceil(inputBytes / 3)) / 1e6)} MB of base64 per run${ctx.quick ? ' (--quick)' : ''}`;
    return [
      withNote(row(group, NONE, ctx, unit, base), size),
      withNote(
        row(group, EIGHT, ctx, unit, mine, { name: NONE, median: median(base) }),
        `${fmt(ratio, 3)}× (goal ≤ ${Constants.GOAL}: ${goal(ratio <= Constants.GOAL)})`,
      ),
    ];
  } catch (err) {
    return [failedRow(group, EIGHT, ctx, unit, errorText(err))];
  } finally {
    await none?.stop();
    await eight?.stop();
  }
};
