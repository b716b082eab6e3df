// OS keyring access through @napi-rs/keyring: a startup probe that runs in a killable child, and
// async get/set/delete in process, one entry per secret name under one service name.

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

import type { AsyncEntry, EntryOptions } from '@napi-rs/keyring';

import { ErrorCode, SupervisorError } from '../../shared/errors.js';

export type KeyringBackendName = 'secret-service' | 'macos-keychain' | 'windows-credential-manager';

/**
 * Upper bound on one keyring call. The Secret Service client gives each D-Bus method 2 s and a
 * call makes a few of them; past this the caller gets KEYRING_FAILED instead of waiting forever.
 */
const OP_TIMEOUT_MS = 10_000;
/**
 * Starting node and loading the addon in the probe child is not the keyring's time: it took 0.5-1.4 s
 * on a loaded 2-core box. The child says "ready" first; only then does the probe timeout start.
 */
const PROBE_START_TIMEOUT_MS = 15_000;
/** The child's line announcing it is about to touch the keyring. */
export const PROBE_READY_LINE = 'ready';
/** Enough of the probe's stderr to explain a crash (a missing native binary, say) in the reason. */
const PROBE_STDERR_MAX_CHARS = 1_000;

const LABELS: Record<KeyringBackendName, string> = {
  'secret-service': 'Secret Service (D-Bus org.freedesktop.secrets)',
  'macos-keychain': 'macOS Keychain',
  'windows-credential-manager': 'Windows Credential Manager',
};

/** The keyring this platform would use, or null where @napi-rs/keyring has none. */
export function platformKeyring(platform: NodeJS.Platform = process.platform): KeyringBackendName | null {
  switch (platform) {
    case 'linux':
    case 'freebsd':
    case 'openbsd':
      return 'secret-service';
    case 'darwin':
      return 'macos-keychain';
    case 'win32':
      return 'windows-credential-manager';
    default:
      return null;
  }
}

export function keyringLabel(backend: string): string {
  return LABELS[backend as KeyringBackendName] ?? backend;
}

/**
 * On Linux the library's default store silently falls back to the kernel keyutils keyring when no
 * Secret Service answers: it "works" (get returns null, set succeeds) but lives in kernel memory
 * and is gone after logout or reboot. Pinning the store makes an absent Secret Service an error we
 * can see. Other platforms ignore the option and use their one native store.
 */
export function entryOptions(backend: KeyringBackendName): EntryOptions | undefined {
  return backend === 'secret-service' ? { linux: { store: 'secret-service' } } : undefined;
}

export type ProbeResult = { ok: true } | { ok: false; reason: string };

export interface ProbeOptions {
  service: string;
  backend: KeyringBackendName;
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
}

/**
 * A real set/get/delete round trip in a child process. It cannot run in process: building a Secret
 * Service entry connects to D-Bus synchronously, and a bus that accepts but never answers blocks
 * the calling thread forever (measured; an unanswered unlock prompt does the same). A stuck worker
 * thread or thread-pool task would also keep this process from ever exiting; a child is killed.
 */
export function probeKeyring(opts: ProbeOptions): Promise<ProbeResult> {
  const script = fileURLToPath(new URL('./keyringProbe.js', import.meta.url));
  // A unique account: concurrent instances must not read each other's probe value.
  const account = `tuicd-probe-${process.pid}-${randomUUID()}`;
  const label = keyringLabel(opts.backend);
  const child = spawn(process.execPath, [script, opts.service, account, opts.backend], { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let expired: string | null = null;
  const arm = (ms: number, why: string): NodeJS.Timeout =>
    setTimeout(() => {
      expired = why;
      child.kill('SIGKILL');
    }, ms);
  let timer = arm(PROBE_START_TIMEOUT_MS, `the keyring probe process did not start within ${PROBE_START_TIMEOUT_MS} ms`);
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const readyNow = !stdout.includes('\n') && chunk.includes('\n');
    stdout += chunk;
    if (readyNow && expired === null) {
      clearTimeout(timer);
      timer = arm(opts.timeoutMs, `${label} did not answer within ${opts.timeoutMs} ms (hung D-Bus session bus, or an unlock prompt nobody answered)`);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-PROBE_STDERR_MAX_CHARS)));
  return new Promise<ProbeResult>((resolve) => {
    child.on('error', (err) => resolve({ ok: false, reason: `cannot start the keyring probe: ${err.message}` }));
    child.on('close', (code, signal) => {
      if (expired !== null) return resolve({ ok: false, reason: expired });
      const exit = signal ?? `code ${code}`;
      resolve(parseProbeOutput(stdout, label) ?? { ok: false, reason: `keyring probe exited (${exit}) without a verdict: ${stderr.trim() || 'no output'}` });
    });
  }).finally(() => clearTimeout(timer));
}

/** stdout is the ready line, then one JSON verdict line. */
function parseProbeOutput(stdout: string, label: string): ProbeResult | null {
  const [first, second] = stdout.split('\n');
  if (first !== PROBE_READY_LINE || second === undefined) return null;
  try {
    const verdict = JSON.parse(second) as { ok?: unknown; reason?: unknown };
    if (verdict.ok === true) return { ok: true };
    if (typeof verdict.reason === 'string') return { ok: false, reason: `${label} not usable: ${verdict.reason}` };
  } catch {
    // Not the probe's JSON line (it crashed first): the caller reports the exit and stderr instead.
  }
  return null;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (err: unknown) => (clearTimeout(timer), reject(err)),
    );
  });
}

/** Keyring calls for one service; every failure is a KEYRING_FAILED error, never a null. */
export class KeyringBackend {
  /** One entry (one D-Bus connection on Linux) per secret, reused: building one blocks for ~10-30 ms. */
  private readonly entries = new Map<string, AsyncEntry>();

  private constructor(
    readonly name: KeyringBackendName,
    private readonly service: string,
    private readonly Entry: typeof AsyncEntry,
  ) {}

  /** Loads the native addon only now, so the file backend never needs it. Call after a good probe. */
  static async load(name: KeyringBackendName, service: string): Promise<KeyringBackend> {
    const { AsyncEntry: Entry } = await import('@napi-rs/keyring');
    return new KeyringBackend(name, service, Entry);
  }

  get(account: string): Promise<string | null> {
    return this.call(account, 'read', async (e) => (await e.getPassword()) ?? null);
  }

  set(account: string, value: string): Promise<void> {
    return this.call(account, 'write', (e) => e.setPassword(value));
  }

  /** True if an entry was removed, false if there was none. */
  delete(account: string): Promise<boolean> {
    return this.call(account, 'delete', (e) => e.deleteCredential());
  }

  private async call<T>(account: string, verb: string, op: (entry: AsyncEntry) => Promise<T>): Promise<T> {
    try {
      return await withTimeout(op(this.entry(account)), OP_TIMEOUT_MS);
    } catch (err) {
      // Rebuild the entry next time: the daemon may have restarted and dropped our session.
      this.entries.delete(account);
      throw new SupervisorError(ErrorCode.KEYRING_FAILED, `${keyringLabel(this.name)} could not ${verb} "${account}": ${(err as Error).message}`, {
        backend: this.name,
        name: account,
      });
    }
  }

  private entry(account: string): AsyncEntry {
    let entry = this.entries.get(account);
    if (entry === undefined) {
      // Synchronous: connects to D-Bus on Linux. The startup probe showed the bus answers.
      entry = new this.Entry(this.service, account, entryOptions(this.name));
      this.entries.set(account, entry);
    }
    return entry;
  }
}
