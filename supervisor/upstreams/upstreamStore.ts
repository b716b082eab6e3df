/**
 * Owns `<configDir>/mcp-upstreams.json`: load (never creates or overwrites), and
 * the `{base, config}` save: under the cross-process file lock re-read the latest file, apply the
 * client's three-way delta, validate, move Bearer tokens to the credential store, write atomically.
 *
 * Live-registry order: every save (and load) of one store runs in a FIFO sequence, and a save's
 * plan is applied to the hub (`applyPlan`) after the file lock is released but before the next
 * save of this process starts. So the hub sees the configs in the order they reached the disk,
 * and other processes are not kept waiting on the file lock while this one reconnects upstreams.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { ApiError, asApiError } from '../../shared/apiError.js';
import { ErrorCode, SupervisorError } from '../../shared/errors.js';
import { atomicWriteFile } from '../config/atomicWrite.js';
import { withFileLock } from '../config/fileLock.js';
import { isPlainObject } from '../config/merge.js';
import { diffUpstreams, type UpstreamDiffPlan } from './configDiff.js';
import { BearerTokenStoreError, storeBearerTokens, takeBearerTokens, withoutBearerTokens, type UpstreamSecrets } from './upstreamCredentials.js';
import { parseUpstreamConfig, UPSTREAMS_FILE, UpstreamShapeError, type UpstreamConfig } from './upstreamConfig.js';
import { applyUpstreamDelta } from './upstreamDelta.js';
import { validateUpstreamConfig, type ValidationContext } from './validateUpstreams.js';
import { clipClientInput } from '../../shared/quoteClientInput.js';

/** Upstream commands, URLs and OAuth client ids: owner read/write only, like config.json. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
export const INVALID_PREFIX = 'Invalid upstream config: ';

export interface UpstreamStoreOptions {
  configDir: string;
  /** Where Bearer tokens go; null while no credential store is open (a save carrying a token then fails). */
  credentials: () => UpstreamSecrets | null;
}

export interface UpstreamSaveOptions extends ValidationContext {
  /**
   * Brings the running hub to the saved config. Runs once the file is written and its lock
   * released, and before this store's next save starts, so plans reach the hub in disk order.
   */
  applyPlan?: (plan: UpstreamDiffPlan) => Promise<void>;
}

export interface UpstreamSaveResult {
  /** The file right before this save's locked mutation (tokens blanked). */
  before: UpstreamConfig;
  /** The file as written. */
  after: UpstreamConfig;
  /**
   * From this process's previous view (what its hub was given: the loaded or last saved file) to
   * `after`. That is `diffUpstreams(before, after)` unless another process wrote the file since,
   * in which case its changes are brought to this hub too.
   */
  plan: UpstreamDiffPlan;
}

/** Two saves added a server with the same id; the file is left as it was (`conflict`: the caller reloads). */
export class UpstreamIdConflictError extends ApiError {
  constructor(readonly id: string) {
    super('conflict', `Upstream id '${clipClientInput(id)}' was added concurrently; reload before adding it again`);
    this.name = 'UpstreamIdConflictError';
  }
}

/**
 * The save is on disk but the hub refused the plan (it is then out of step until the next save or
 * restart). Its code is the hub failure's: a hub that is down or restarting is `unavailable` (with
 * the Retry-After it knows), a call that timed out `upstream_timeout`, anything else `internal`.
 */
export class UpstreamApplyError extends ApiError {
  constructor(
    readonly result: UpstreamSaveResult,
    cause: unknown,
  ) {
    const known = asApiError(cause);
    super(
      known?.code ?? 'internal',
      `The upstream config was saved, but applying it to the running hub failed: ${(cause as Error)?.message ?? String(cause)}`,
      known?.retryAfterS === undefined ? {} : { retryAfterS: known.retryAfterS },
    );
    this.name = 'UpstreamApplyError';
    this.cause = cause;
  }
}

/** A request the caller must fix: `invalid_input`, nothing written. */
function invalid(message: string): ApiError {
  return new ApiError('invalid_input', message);
}

function serversOf(envelope: unknown, what: 'base' | 'requested'): unknown[] {
  if (!isPlainObject(envelope)) throw invalid(`${INVALID_PREFIX}${what} must be an object with servers`);
  const servers = envelope['servers'] ?? [];
  if (!Array.isArray(servers)) throw invalid(`${INVALID_PREFIX}${what}.servers must be an array`);
  return servers;
}

/** Ids are the delta's keys: each server needs one, and only one server may carry it. */
function checkIds(servers: readonly unknown[], what: 'base' | 'requested' | 'current'): Set<string> {
  const ids = new Set<string>();
  for (const [i, server] of servers.entries()) {
    const id = isPlainObject(server) ? server['id'] : undefined;
    if (typeof id !== 'string' || id === '') throw invalid(`${INVALID_PREFIX}${what}.servers[${i}] needs a non-empty string id`);
    if (ids.has(id)) throw invalid(`Duplicate upstream id '${clipClientInput(id)}' in ${what} configuration`);
    ids.add(id);
  }
  return ids;
}

/** The diff from this process's view, except that stored OAuth is only cleared for a transport move this save made. */
function planFrom(live: UpstreamConfig, before: UpstreamConfig, after: UpstreamConfig): UpstreamDiffPlan {
  const plan = diffUpstreams(live, after);
  // A transport another process changed was already handled there, and the tokens stored since
  // may be the fresh ones for the new server: never clear them on its behalf.
  const ours = new Map(diffUpstreams(before, after).reconnect.map((r) => [r.after.id, r.clearStoredAuth]));
  for (const r of plan.reconnect) r.clearStoredAuth &&= ours.get(r.after.id) ?? false;
  return plan;
}

function serialize(config: UpstreamConfig): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

interface DiskState {
  /** Raw text, undefined when the file does not exist. */
  text: string | undefined;
  /** Parsed with defaults; Bearer tokens as found (a hand-written file may hold one). */
  config: UpstreamConfig;
}

export class UpstreamStore {
  readonly path: string;
  private current: UpstreamConfig | undefined;
  /** Tail of this store's FIFO of loads and saves. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: UpstreamStoreOptions) {
    this.path = resolve(join(opts.configDir, UPSTREAMS_FILE));
  }

  /**
   * Reads the file into this process's view (boot; what the hub is then given). A missing file is
   * `{servers: []}` and is not created; bad JSON or a wrong shape throws CONFIG_CORRUPT naming the
   * file, which is left untouched.
   */
  load(): Promise<UpstreamConfig> {
    return this.sequenced(async () => {
      this.current = deepFreeze(withoutBearerTokens((await this.readDisk()).config));
      return this.current;
    });
  }

  /** This process's view: the last loaded or saved file, defaults applied, tokens blanked (deep-frozen). */
  get(): UpstreamConfig {
    if (this.current === undefined) throw new Error('UpstreamStore.get() called before load()');
    return this.current;
  }

  /** The file as it is now (tokens blanked), without touching this process's view: GET /mcp/upstreams. */
  async read(): Promise<UpstreamConfig> {
    return withoutBearerTokens((await this.readDisk()).config);
  }

  /**
   * Applies `requested − base` to the latest file. Refusals: invalid_input (`Invalid upstream
   * config: …` with every rule violation, or `Duplicate upstream id …`; nothing written),
   * UpstreamIdConflictError, CONFIG_CORRUPT for an unreadable file, CONFIG_IO_FAILED for lock or
   * write failures, UpstreamApplyError when the file was saved but the hub refused the plan.
   */
  save(base: unknown, requested: unknown, options: UpstreamSaveOptions): Promise<UpstreamSaveResult> {
    return this.sequenced(async () => {
      const baseServers = serversOf(base, 'base');
      const requestedServers = serversOf(requested, 'requested');
      const live = this.current;
      let committed: { before: UpstreamConfig; after: UpstreamConfig };
      try {
        // The lock lives next to the file, so the directory must exist before locking.
        await mkdir(this.opts.configDir, { recursive: true, mode: DIR_MODE });
        committed = await withFileLock(this.path, (lock) => this.commit(baseServers, requestedServers, options, lock.assertHeld));
      } catch (err) {
        throw this.ioError('save', err);
      }
      this.current = deepFreeze(structuredClone(committed.after));
      const result: UpstreamSaveResult = { ...committed, plan: planFrom(live ?? committed.before, committed.before, committed.after) };
      if (options.applyPlan) {
        try {
          await options.applyPlan(result.plan);
        } catch (err) {
          throw new UpstreamApplyError(result, err);
        }
      }
      return result;
    });
  }

  /** Under both file locks: read latest, check, merge, validate, store tokens, write. */
  private async commit(
    baseServers: unknown[],
    requestedServers: unknown[],
    ctx: ValidationContext,
    assertHeld: () => void,
  ): Promise<{ before: UpstreamConfig; after: UpstreamConfig }> {
    const disk = await this.readDisk();
    const baseIds = checkIds(baseServers, 'base');
    checkIds(requestedServers, 'requested');
    const currentIds = checkIds(disk.config.servers, 'current');
    for (const server of requestedServers) {
      const id = (server as { id: string }).id;
      if (!baseIds.has(id) && currentIds.has(id)) throw new UpstreamIdConflictError(id);
    }

    let after: UpstreamConfig;
    try {
      after = parseUpstreamConfig({ servers: applyUpstreamDelta(disk.config.servers, baseServers, requestedServers) });
    } catch (err) {
      if (err instanceof UpstreamShapeError) throw invalid(`${INVALID_PREFIX}${err.message}`);
      throw err;
    }
    const errors = validateUpstreamConfig(after, ctx);
    if (errors.length > 0) throw invalid(`${INVALID_PREFIX}${errors.join('; ')}`);

    const { tokens } = takeBearerTokens(after);
    const undoTokens = await storeBearerTokens(this.opts.credentials(), tokens);
    const text = serialize(after);
    if (text !== disk.text) {
      try {
        await atomicWriteFile(this.path, text, { mode: FILE_MODE, beforeRename: assertHeld });
      } catch (err) {
        await undoTokens();
        throw err;
      }
    }
    return { before: withoutBearerTokens(disk.config), after };
  }

  private sequenced<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async readDisk(): Promise<DiskState> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { text: undefined, config: { servers: [] } };
      throw this.ioError('read', err);
    }
    const corrupt = (reason: string) =>
      new SupervisorError(ErrorCode.CONFIG_CORRUPT, `Upstream config file ${this.path} ${reason}; it was left untouched: fix or remove it`, {
        path: this.path,
      });
    let doc: unknown;
    try {
      doc = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (err) {
      throw corrupt(`is not valid JSON (${(err as Error).message})`);
    }
    try {
      return { text, config: parseUpstreamConfig(doc) };
    } catch (err) {
      if (err instanceof UpstreamShapeError) throw corrupt(`is invalid (${err.message})`);
      throw err;
    }
  }

  /** Lock, read and write failures become CONFIG_IO_FAILED naming the file; refusals pass through. */
  private ioError(action: string, err: unknown): Error {
    if (err instanceof SupervisorError || err instanceof ApiError || err instanceof BearerTokenStoreError) return err;
    const cause = err as NodeJS.ErrnoException;
    return new SupervisorError(ErrorCode.CONFIG_IO_FAILED, `Could not ${action} ${this.path}: ${cause?.message ?? String(err)}`, {
      path: this.path,
      ...(cause?.code === undefined ? {} : { errno: cause.code }),
    });
  }
}
