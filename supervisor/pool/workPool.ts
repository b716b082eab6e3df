/**
 * The piscina pool for CPU-heavy request work (content search, big diffs, diff-stats batches), so the
 * supervisor's loop keeps serving streams while it runs. Threads start on first use and idle out.
 */
import { availableParallelism } from 'node:os';

import { Piscina } from 'piscina';

import type { BatchStats, ContentMatch, SearchQuery } from './poolTasks.js';

/** The compiled worker module, beside this one in dist. */
const TASKS_FILE = new URL('./poolTasks.js', import.meta.url).href;

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

  gitText(cwd: string, args: string[]): Promise<string> {
    return this.pool.run({ cwd, args }, { name: 'gitText' });
  }

  diffStatsBatch(paths: string[]): Promise<BatchStats> {
    return this.pool.run({ paths }, { name: 'diffStatsBatch' });
  }

  /** Searches the repository in one shard per thread; matches come back in listing order. */
  async searchContent(repoPath: string, q: SearchQuery, limit: number): Promise<{ matches: ContentMatch[]; files_searched: number; bytes_searched: number; truncated: boolean }> {
    const shards = this.pool.options.maxThreads;
    const parts = await Promise.all(
      Array.from({ length: shards }, (_, shard) => this.pool.run({ repoPath, shard, shards, q, limit }, { name: 'searchShard' }) as Promise<{ matches: ContentMatch[]; bytes: number; truncated: boolean; files: number }>),
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

  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}
