/**
 * Output watchers in the pty host: the clients' patterns (POST /api/plugins/output-watchers, all
 * clients' sets as one list) matched against every session's stripped lines in the text stage, the
 * matches sent to the supervisor as `watcherLines` events, one per session per turn of the loop.
 *
 * With no watcher set, a session's text stage is exactly what it was: its pipeline has no line tap
 * (textPipeline.ts), so not even a check runs per line. Pipelines are held weakly: a session that
 * exits drops its pipeline, and nothing here keeps it.
 */
import { PtyConstants } from '../../shared/protocol/pty.js';
import { redactLineText } from '../../shared/redactor.js';
import { compileWatcherPattern, enableBacktrackFallback } from '../../shared/watcherPatterns.js';
import type { TextPipeline } from './textPipeline.js';

export interface WatcherSpec {
  id: string;
  pattern: string;
  flags: string;
}

export interface MatchedLine {
  text: string;
  matched_ids: string[];
}

export type WatcherLinesSink = (sessionId: string, lines: MatchedLine[], dropped: number) => void;

interface Compiled {
  id: string;
  re: RegExp;
}

/**
 * Watchers of the same flags, with one alternation of all of them: a line none matches (nearly
 * every line) costs one scan per group instead of one per watcher. `any` is null when the patterns
 * cannot share one expression (two define the same group name): each is then tried on its own.
 * `block` is the same alternation in multi-line mode, run once over a push's lines joined by `\n`:
 * whatever matches a line matches there too (`^`/`$` match at each line), so a push it does not
 * match has no matching line and its lines are not looked at one by one.
 */
interface Group {
  any: RegExp | null;
  block: RegExp | null;
  members: Compiled[];
}

function alternation(members: readonly Compiled[], flags: string): RegExp | null {
  try {
    return new RegExp(members.map((m) => `(?:${m.re.source})`).join('|'), flags);
  } catch {
    return null;
  }
}

function groupByFlags(compiled: readonly Compiled[]): Group[] {
  const byFlags = new Map<string, Compiled[]>();
  for (const c of compiled) {
    const list = byFlags.get(c.re.flags);
    if (list === undefined) byFlags.set(c.re.flags, [c]);
    else list.push(c);
  }
  return [...byFlags].map(([flags, members]) => ({
    any: members.length === 1 ? null : alternation(members, flags),
    block: alternation(members, flags.includes('m') ? flags : `${flags}m`),
    members,
  }));
}

interface Pending {
  lines: MatchedLine[];
  dropped: number;
}

export class OutputWatchers {
  private groups: Group[] = [];
  private count = 0;
  private readonly pipelines: Array<{ ref: WeakRef<TextPipeline>; sessionId: string }> = [];
  private readonly pending = new Map<string, Pending>();
  private flushScheduled = false;

  constructor(private readonly sink: WatcherLinesSink) {}

  get size(): number {
    return this.count;
  }

  /** Replaces every watcher; a pattern that does not compile here is left out (the supervisor refused it already). */
  set(watchers: readonly WatcherSpec[]): void {
    if (watchers.length > 0) enableBacktrackFallback();
    const compiled: Compiled[] = [];
    for (const w of watchers) {
      const re = compileWatcherPattern(w.pattern, w.flags);
      if (typeof re === 'string') process.stderr.write(`pty host: output watcher ${w.id} left out: ${re}\n`);
      else compiled.push({ id: w.id, re });
    }
    this.groups = groupByFlags(compiled);
    this.count = compiled.length;
    let kept = 0;
    for (const entry of this.pipelines) {
      const pipeline = entry.ref.deref();
      if (pipeline === undefined) continue;
      this.pipelines[kept++] = entry;
      this.tap(pipeline, entry.sessionId);
    }
    this.pipelines.length = kept;
  }

  /** A new session's pipeline: tapped now if any watcher is set, and whenever the set changes. */
  attach(sessionId: string, pipeline: TextPipeline): TextPipeline {
    // Dead entries go as sessions come, so the list stays as long as the live sessions.
    if (this.pipelines.length >= 64 && this.pipelines.length % 64 === 0) {
      for (let i = this.pipelines.length - 1; i >= 0; i--) if (this.pipelines[i]!.ref.deref() === undefined) this.pipelines.splice(i, 1);
    }
    this.pipelines.push({ ref: new WeakRef(pipeline), sessionId });
    this.tap(pipeline, sessionId);
    return pipeline;
  }

  private tap(pipeline: TextPipeline, sessionId: string): void {
    pipeline.setLineTap(
      this.count === 0 ? undefined : { block: (text) => this.mayMatch(text), line: (text, redacted) => this.match(sessionId, text, redacted) },
    );
  }

  /** False when no line of the block can match any watcher. */
  private mayMatch(text: string): boolean {
    for (const g of this.groups) if (g.block === null || g.block.test(text)) return true;
    return false;
  }

  /** One completed line as printed; sent redacted (`redacted`, or redacted here) if some watcher matched. */
  private match(sessionId: string, line: string, redacted: string | undefined): void {
    let ids: string[] | undefined;
    for (const g of this.groups) {
      if (g.any !== null && !g.any.test(line)) continue;
      for (const w of g.members) if (w.re.test(line)) (ids ??= []).push(w.id);
    }
    if (ids === undefined) return;
    let pending = this.pending.get(sessionId);
    if (pending === undefined) this.pending.set(sessionId, (pending = { lines: [], dropped: 0 }));
    if (pending.lines.length >= PtyConstants.WATCHER_LINES_PER_EVENT) {
      pending.dropped++;
      return;
    }
    const text = redacted ?? redactLineText(line);
    pending.lines.push({ text: text.length > PtyConstants.WATCHER_LINE_CHARS ? text.slice(0, PtyConstants.WATCHER_LINE_CHARS) : text, matched_ids: ids });
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    for (const [sessionId, p] of this.pending) this.sink(sessionId, p.lines, p.dropped);
    this.pending.clear();
  }
}
