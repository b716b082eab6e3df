/**
 * The "busy" regime: one core kept busy by a bounded shell spinner
 * (`timeout N sh -c 'while :; do :; done'`), so idle-vCPU wake-up latency stops dominating.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Each spinner dies on its own after this long, even if this process is SIGKILLed;
 *  while a busy run still wants it, an expired spinner is replaced. */
const SPINNER_BOUND_S = 120;
/** A spinner that dies sooner than this was not bounded out: something is wrong, do not respawn it. */
const SPINNER_MIN_LIFE_MS = 1000;
/** Let the spinner reach the CPU before the measured work starts. */
const SPINNER_SETTLE_MS = 200;

/** Starts and stops the busy-core spinner; `stop()` is idempotent and also runs on process exit. */
export class BusyCore {
  private child: ChildProcess | undefined;
  private wanted = false;
  private readonly onExit = (): void => this.killNow();

  /** Starts the spinner and resolves once it has had time to occupy a core. */
  async start(): Promise<void> {
    if (this.wanted) return;
    this.wanted = true;
    process.once('exit', this.onExit);
    this.spawnOne();
    await new Promise((resolve) => setTimeout(resolve, SPINNER_SETTLE_MS));
    if (!this.child) throw new Error('busy-core spinner did not start (needs `timeout` and `sh` from coreutils)');
  }

  stop(): void {
    this.wanted = false;
    process.removeListener('exit', this.onExit);
    this.killNow();
  }

  private spawnOne(): void {
    // detached: the spinner gets its own process group, so killing -pid reaches both
    // `timeout` and the `sh` it runs.
    const child = spawn('timeout', [String(SPINNER_BOUND_S), 'sh', '-c', 'while :; do :; done'], {
      stdio: 'ignore',
      detached: true,
    });
    this.child = child;
    const bornMs = Date.now();
    child.on('error', () => {
      // spawn failed (no `timeout`); start() reports it through the missing child.
      if (this.child === child) this.child = undefined;
    });
    child.on('exit', () => {
      if (this.child !== child) return;
      this.child = undefined;
      // Bound reached while a busy run is still going: replace it.
      if (this.wanted && Date.now() - bornMs >= SPINNER_MIN_LIFE_MS) this.spawnOne();
    });
    child.unref();
  }

  private killNow(): void {
    const child = this.child;
    this.child = undefined;
    if (!child?.pid) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already gone (bound reached)
    }
  }
}

/** Above this share of all cores busy before a module starts, the machine is not really "idle". */
export const FOREIGN_LOAD_WARN = 0.25;

/**
 * Share of all cores (0..1) busy over `ms` while this process only waits: the load someone else
 * puts on the machine. Read from /proc/stat; undefined off Linux.
 */
export async function backgroundCpuShare(ms: number): Promise<number | undefined> {
  const a = readCpuJiffies();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const b = readCpuJiffies();
  if (!a || !b || b.total === a.total) return undefined;
  return 1 - (b.idle - a.idle) / (b.total - a.total);
}

function readCpuJiffies(): { idle: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user).
    const idle = v[3]! + (v[4] ?? 0);
    const total = v.slice(0, 8).reduce((sum, n) => sum + n, 0);
    return { idle, total };
  } catch {
    return undefined; // no /proc
  }
}
