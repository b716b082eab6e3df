/**
 * The progress journal (what agents report with the progress tool, and what tuicd observes): one JSON line per entry in the config
 * dir, append-only and owner-only (0600). Bounded: each project keeps its newest KEEP_PER_PROJECT
 * entries; the file is compacted atomically once a project overflows by COMPACT_SLACK, so the
 * rewrite cost is paid once per slack appends, not on every append.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, chmod, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import { redactSecrets } from '../../shared/redactor.js';
import { atomicWriteFile } from '../config/atomicWrite.js';

/** The journal's file name inside the config dir. */
export const PROGRESS_JOURNAL_FILE = 'progress.jsonl';

export const ProgressConstants = {
  /** Bounds on what is stored: text / step / names (longer input is cut, not refused). */
  TEXT_MAX_CHARS: 500,
  STEP_MAX_CHARS: 80,
  NAME_MAX_CHARS: 80,
  /** A project path is a key, not a display name: bounded only against abuse (PATH_MAX). */
  PROJECT_MAX_CHARS: 4096,
  /** Newest entries kept per project. */
  KEEP_PER_PROJECT: 1000,
  /** Extra entries a project may hold before the file is rewritten down to KEEP_PER_PROJECT. */
  COMPACT_SLACK: 250,
  /** The journal holds agent output: owner read/write only. */
  FILE_MODE: 0o600,
  /** Page size of a listing: 8 by default, 1..100. */
  LIST_DEFAULT: 8,
  LIST_MAX: 100,
} as const;

/** done/blocked are reported by agents; intent/delegated/message are written by TUICommander itself. */
export const PROGRESS_KINDS = ['done', 'blocked', 'intent', 'delegated', 'message'] as const;
export type ProgressKind = (typeof PROGRESS_KINDS)[number];

export interface ProgressEntry {
  id: string;
  at_ms: number;
  kind: ProgressKind;
  /** The repo path the report belongs to, or "unknown". */
  project: string;
  /** Who reported: a tuic_session or an MCP client name. */
  agent: string;
  text: string;
  step?: string;
  /** The PTY the reporter runs in, when it runs in one of ours. */
  session_id?: string;
}

export type NewProgressEntry = Omit<ProgressEntry, 'id' | 'at_ms'>;

export interface ProgressPage {
  entries: ProgressEntry[];
  /** Entries matching the filter, all pages. */
  total: number;
}

/** Cuts to `max` characters without splitting a surrogate pair. */
export function boundChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

function isEntry(value: unknown): value is ProgressEntry {
  if (typeof value !== 'object' || value === null) return false;
  const e = value as Record<string, unknown>;
  return (
    typeof e['id'] === 'string' &&
    typeof e['at_ms'] === 'number' &&
    typeof e['project'] === 'string' &&
    typeof e['agent'] === 'string' &&
    typeof e['text'] === 'string' &&
    (PROGRESS_KINDS as readonly unknown[]).includes(e['kind'])
  );
}

export interface ProgressJournalOptions {
  /** progress.jsonl in the config dir. */
  path: string;
  /** Tests use small bounds; defaults from ProgressConstants. */
  keepPerProject?: number;
  compactSlack?: number;
}

export class ProgressJournal {
  /** Oldest first, as on disk. */
  private entries: ProgressEntry[] = [];
  private readonly perProject = new Map<string, number>();
  private loaded: Promise<void> | undefined;
  /** Appends and compactions run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The file may end mid-line (a crash or a failed append cut a line short): the next append starts
   * with a newline, else its line is glued onto the torn one and lost at the next load. A spare
   * newline only makes an empty line, which load skips.
   */
  private tailMayBeTorn = false;

  readonly path: string;
  private readonly keepPerProject: number;
  private readonly compactSlack: number;

  constructor(options: ProgressJournalOptions) {
    this.path = options.path;
    this.keepPerProject = options.keepPerProject ?? ProgressConstants.KEEP_PER_PROJECT;
    this.compactSlack = options.compactSlack ?? ProgressConstants.COMPACT_SLACK;
  }

  /**
   * Redacts and bounds every field (whoever the writer is), stamps id and time, appends one line.
   * Length *validation* with a caller-facing error is the tool's job; here over-long text is cut.
   */
  append(input: NewProgressEntry): Promise<ProgressEntry> {
    const entry: ProgressEntry = {
      id: randomUUID(),
      at_ms: Date.now(),
      kind: input.kind,
      project: boundChars(input.project, ProgressConstants.PROJECT_MAX_CHARS),
      agent: boundChars(redactSecrets(input.agent), ProgressConstants.NAME_MAX_CHARS),
      text: boundChars(redactSecrets(input.text), ProgressConstants.TEXT_MAX_CHARS),
    };
    if (input.step !== undefined) entry.step = boundChars(redactSecrets(input.step), ProgressConstants.STEP_MAX_CHARS);
    if (input.session_id !== undefined) entry.session_id = input.session_id;
    return this.serialized(async () => {
      await this.load();
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      const line = `${this.tailMayBeTorn ? '\n' : ''}${JSON.stringify(entry)}\n`;
      try {
        await appendFile(this.path, line, { mode: ProgressConstants.FILE_MODE });
      } catch (err) {
        this.tailMayBeTorn = true; // part of the line may have been written (e.g. ENOSPC)
        throw err;
      }
      this.tailMayBeTorn = false;
      this.entries.push(entry);
      const count = (this.perProject.get(entry.project) ?? 0) + 1;
      this.perProject.set(entry.project, count);
      if (count > this.keepPerProject + this.compactSlack) await this.compact();
      return entry;
    });
  }

  /** Newest first; `project` undefined lists every project. */
  async list(options: { project?: string; limit?: number } = {}): Promise<ProgressPage> {
    await this.serialized(() => this.load());
    const limit = options.limit ?? ProgressConstants.LIST_DEFAULT;
    const matching = options.project === undefined ? this.entries : this.entries.filter((e) => e.project === options.project);
    return { entries: matching.slice(-limit).reverse(), total: matching.length };
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private load(): Promise<void> {
    this.loaded ??= this.readFile();
    return this.loaded;
  }

  private async readFile(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.loaded = undefined; // retry the read next time instead of caching the failure
      throw err;
    }
    // An older file might have been created with a wider mode: tighten it.
    await chmod(this.path, ProgressConstants.FILE_MODE);
    this.tailMayBeTorn = text.length > 0 && !text.endsWith('\n');
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed: unknown = JSON.parse(line);
        // A torn last line (crash mid-append) or a foreign line is skipped, never fatal.
        if (isEntry(parsed)) this.entries.push(parsed);
      } catch {}
    }
    for (const e of this.entries) this.perProject.set(e.project, (this.perProject.get(e.project) ?? 0) + 1);
    if ([...this.perProject.values()].some((n) => n > this.keepPerProject)) await this.compact();
  }

  /** Keeps the newest keepPerProject entries of every project; replaces the file atomically. */
  private async compact(): Promise<void> {
    const seen = new Map<string, number>();
    const kept: ProgressEntry[] = [];
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      const n = (seen.get(e.project) ?? 0) + 1;
      seen.set(e.project, n);
      if (n <= this.keepPerProject) kept.push(e);
    }
    kept.reverse();
    await atomicWriteFile(this.path, kept.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: ProgressConstants.FILE_MODE });
    this.tailMayBeTorn = false;
    this.entries = kept;
    this.perProject.clear();
    for (const [project, n] of seen) this.perProject.set(project, Math.min(n, this.keepPerProject));
  }
}
