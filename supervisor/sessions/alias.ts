/** Short human aliases for sessions: a prefix of the directory's name (its initials, or its first two letters) and a number, `tu-1` in tuicommander. */
import { basename } from 'node:path';

/** Prefixes grow to at most this many characters when two repositories collide. */
const MAX_PREFIX_CHARS = 5;

/** Splits a directory name into lower-cased segments on -, _, . and lower→upper camelCase boundaries (`Web3Auth` is one). */
export function segments(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[-_.\s]+/)
    .map((s) => s.toLowerCase().replace(/[^a-z0-9]/g, ''))
    .filter((s) => s.length > 0);
}

/** The base prefix: one segment → itself if under 3 chars else its first 2; several → initials. */
export function basePrefix(name: string): string {
  const segs = segments(name);
  if (segs.length === 0) return 'sh';
  if (segs.length === 1) {
    const only = segs[0]!;
    return only.length < 3 ? only : only.slice(0, 2);
  }
  return segs.map((s) => s[0]).join('');
}

export class AliasAllocator {
  /** repo name → prefix, stable for the process lifetime. */
  private readonly prefixByRepo = new Map<string, string>();
  private readonly repoByPrefix = new Map<string, string>();
  private readonly counters = new Map<string, number>();
  private readonly live = new Set<string>();

  prefixFor(cwd: string): string {
    const repo = basename(cwd) || 'sh';
    const known = this.prefixByRepo.get(repo);
    if (known) return known;
    const base = basePrefix(repo);
    let prefix = base;
    if (this.repoByPrefix.has(prefix)) {
      const segs = segments(repo);
      const longest = [...segs].sort((a, b) => b.length - a.length)[0] ?? '';
      // One segment: the base already is its first characters, so continue after them (tumbler: tu → tum).
      // Several: the base holds each initial, so continue after the longest segment's first one.
      const extension = segs.length === 1 ? longest.slice(base.length) : longest.slice(1);
      for (const ch of extension) {
        if (!this.repoByPrefix.has(prefix)) break;
        if (prefix.length >= MAX_PREFIX_CHARS) break;
        prefix += ch;
      }
      for (let n = 2; this.repoByPrefix.has(prefix) && n <= 9; n++) prefix = `${base}${n}`;
      // Past 9 (rare): count on until free; the number must move, a taken one would spin forever.
      for (let n = 10; this.repoByPrefix.has(prefix); n++) prefix = `${base}${n}`;
    }
    this.prefixByRepo.set(repo, prefix);
    this.repoByPrefix.set(prefix, repo);
    return prefix;
  }

  /** Next `<prefix>-<n>`, or the requested alias when it fits the prefix and is free. */
  assign(cwd: string, requested?: string): string {
    const prefix = this.prefixFor(cwd);
    if (requested) {
      const m = /^(.+)-(\d+)$/.exec(requested);
      if (m && m[1] === prefix && !this.live.has(requested)) {
        const n = Number(m[2]);
        this.counters.set(prefix, Math.max(this.counters.get(prefix) ?? 0, n));
        this.live.add(requested);
        return requested;
      }
    }
    let n = (this.counters.get(prefix) ?? 0) + 1;
    while (this.live.has(`${prefix}-${n}`)) n++;
    this.counters.set(prefix, n);
    const alias = `${prefix}-${n}`;
    this.live.add(alias);
    return alias;
  }

  release(alias: string): void {
    this.live.delete(alias);
  }
}
