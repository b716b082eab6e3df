/**
 * The piscina pool for CPU-heavy request work (content search, big diffs, diff-stats batches), so the
 * supervisor's loop keeps serving streams while it runs. Threads start on first use and idle out.
 */
import { availableParallelism } from 'node:os';

import { Piscina } from 'piscina';

import type { BatchStats, CheckoutStats, ContentMatch, DiffStatsShardResult, DiffStatsShardTask, SearchQuery } from './poolTasks.js';

/** The compiled worker module, beside this one in dist. */
const TASKS_FILE = new URL('./poolTasks.js', import.meta.url).href;

/** Git processes one diff-stats batch keeps running at once, over all its shards. */
const BATCH_GIT_CONCURRENCY = 16;
/** Checkouts whose last diff stats are remembered (with their fingerprints); the oldest go first. */
const MAX_REMEMBERED_CHECKOUTS = 4_096;

export class WorkPool {
  private readonly pool = new Piscina({
    filename: TASKS_FILE,
    minThreads: 0,
    maxThreads: Math.max(2, availableParallelism()),
    idleTimeout: 30_000,
  });

  listFiles(repoPath: string): Promise<string[]> {
    return this.pool.run({ repoPath }, { name: 'listFiles' });
  }

  searchFiles(repoPath: string, query: string, limit: number): Promise<string[]> {
    return this.pool.run({ repoPath, query, limit }, { name: 'searchFiles' });
  }

  /** A big file read and JSON-encoded on a pool thread; the bytes are moved here, not copied. */
  async readFileJson(path: string, cap: number): Promise<{ json: Buffer } | { over: number }> {
    const r = (await this.pool.run({ path, cap }, { name: 'readFileJson' })) as Uint8Array | { over: number };
    return ArrayBuffer.isView(r) ? { json: Buffer.from(r.buffer, r.byteOffset, r.byteLength) } : r;
  }

  gitText(cwd: string, args: string[]): Promise<string> {
    return this.pool.run({ cwd, args }, { name: 'gitText' });
  }

  /** Last answers per checkout, reused while the checkout's fingerprint is unchanged (see checkoutFingerprint). */
  private readonly rememberedStats = new Map<string, CheckoutStats & { fingerprint: string }>();

  /**
   * Diff stats, last-commit times and clean/dirty for many checkouts: split in one shard per
   * thread; a checkout unchanged since an earlier batch is answered from it without running git.
   */
  async diffStatsBatch(paths: string[]): Promise<BatchStats> {
    const unique = [...new Set(paths)];
    const shards = Math.max(1, Math.min(this.pool.options.maxThreads, unique.length));
    const tasks: DiffStatsShardTask[] = Array.from({ length: shards }, (_, i) => ({
      paths: [],
      known: {},
      concurrency: Math.ceil(BATCH_GIT_CONCURRENCY / shards),
      ...(i === 0 ? { commitTimesFor: unique } : {}),
    }));
    unique.forEach((path, i) => {
      const task = tasks[i % shards]!;
      task.paths.push(path);
      const known = this.rememberedStats.get(path);
      if (known) task.known[path] = known.fingerprint;
    });
    const parts = await Promise.all(tasks.map((task) => this.pool.run(task, { name: 'diffStatsShard' }) as Promise<DiffStatsShardResult>));
    const answers = new Map<string, CheckoutStats>();
    for (const part of parts) {
      for (const path of part.unchanged) {
        const known = this.rememberedStats.get(path);
        if (known) answers.set(path, known);
      }
      for (const [path, fresh] of Object.entries(part.fresh)) {
        answers.set(path, fresh);
        this.remember(path, fresh);
      }
    }
    const times = parts[0]?.commitTimes ?? {};
    const result: BatchStats = { diff_stats: {}, last_commit_ts: {}, workspace_statuses: {}, errors: {} };
    for (const path of unique) {
      // A remembered answer forgotten while the shards ran (evicted by a parallel batch) is read again.
      const answer =
        answers.get(path) ??
        ((await this.pool.run({ paths: [path], known: {}, concurrency: 1 } satisfies DiffStatsShardTask, { name: 'diffStatsShard' })) as DiffStatsShardResult)
          .fresh[path]!;
      result.diff_stats[path] = answer.stats;
      result.workspace_statuses[path] = answer.status;
      if (answer.error !== undefined) result.errors[path] = answer.error;
      result.last_commit_ts[path] = answer.status === 'error' ? null : (times[path] ?? null);
    }
    return result;
  }

  private remember(path: string, answer: CheckoutStats): void {
    this.rememberedStats.delete(path); // re-inserted last: the map's order is its age
    if (answer.fingerprint === null) return;
    this.rememberedStats.set(path, { ...answer, fingerprint: answer.fingerprint });
    if (this.rememberedStats.size > MAX_REMEMBERED_CHECKOUTS) this.rememberedStats.delete(this.rememberedStats.keys().next().value!);
  }

  /** Searches the repository in one shard per thread; matches come back in listing order. */
  async searchContent(
    repoPath: string,
    q: SearchQuery,
    limit: number,
  ): Promise<{ matches: ContentMatch[]; files_searched: number; bytes_searched: number; truncated: boolean }> {
    const shards = this.pool.options.maxThreads;
    const parts = await Promise.all(
      Array.from(
        { length: shards },
        (_, shard) =>
          this.pool.run({ repoPath, shard, shards, q, limit }, { name: 'searchShard' }) as Promise<{
            matches: ContentMatch[];
            bytes: number;
            truncated: boolean;
            files: number;
          }>,
      ),
    );
    const matches: ContentMatch[] = [];
    let bytes = 0;
    let files = 0;
    let truncated = false;
    for (const p of parts) {
      if (matches.length <= limit) matches.push(...p.matches);
      bytes += p.bytes;
      files += p.files;
      truncated ||= p.truncated;
    }
    return { matches: matches.slice(0, limit), files_searched: files, bytes_searched: bytes, truncated: truncated || matches.length > limit };
  }

  /** Searches the given files (relative to `root`) on one pool thread, symlinks skipped: a sandbox's listing the caller already narrowed. */
  searchIn(root: string, files: string[], q: SearchQuery, limit: number, context = 0): Promise<{ matches: ContentMatch[]; bytes: number; truncated: boolean }> {
    return this.pool.run({ repoPath: root, files, q, limit, noFollow: true, context }, { name: 'searchContent' });
  }

  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}
