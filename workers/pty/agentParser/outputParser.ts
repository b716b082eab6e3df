/**
 * One session's output parser, in the pty host where every byte already passes.
 * Three inputs, three costs:
 * - completed lines, per batch: one regex pass finds the rare lines any rule could match (LINE_TRIGGER);
 * - OSC strings (777, 9;4, 133, 7770), handed over by the stripper as they end;
 * - the screen, for agent sessions only: read at most every SCREEN_PARSE_MS while output flows, for
 *   what agents draw in place (choice prompts, status lines, footers, questions).
 * Time comes from an injectable clock and timers, so tests replay hours of silence in microseconds.
 */
import type { ParsedEvent } from '../../../shared/protocol/parsedEvents.js';
import { LINE_TRIGGER, TOOL_ERROR, agentLineEvents, looksLikeCode, markerOf, parseIntent, parseSuggest, sessionLineEvents } from './lineRules.js';
import { notifyQuestion, parseOsc } from './oscRules.js';
import { chromeStart, findChoicePrompt, findSlashMenu, findStatusLine, findSubtasks, isQuestionCandidate, latestChat } from './screenRules.js';

export const ParserConstants = {
  /** How often an agent's screen is read while output flows (and once after it stops). */
  SCREEN_PARSE_MS: 100,
  /**
   * More output than this since the last read is a flood (a long diff, a log dump): the screen is
   * read only once output pauses for FLOOD_QUIET_MS. Nothing on a screen that scrolls at megabytes
   * a second waits for an answer (the output alone keeps the session busy), and a read during a
   * flood replays the whole 2 MB output ring into the grid.
   */
  FLOOD_BYTES: 256 * 1024,
  FLOOD_QUIET_MS: 50,
  /** A status line unchanged this long (spinner and timer frozen) no longer holds the session busy. */
  STATUS_STALE_MS: 10_000,
  /** SILENCE_QUESTION_THRESHOLD: a candidate question fires after this much quiet. */
  SILENCE_QUESTION_MS: 10_000,
  /** STALE_QUESTION_CHUNKS: more output chunks than this after a candidate make it stale. */
  STALE_QUESTION_CHUNKS: 10,
  /** A candidate must still be among this many latest chat rows when it fires. */
  QUESTION_VISIBLE_ROWS: 5,
  /** Rows that change this soon after input are the echo of what was typed. */
  ECHO_WINDOW_MS: 500,
  RESIZE_GRACE_MS: 1_000,
  /** STARTUP_SETTLE_SILENCE / STARTUP_GRACE_MAX: replayed history (`--continue`) raises no question. */
  STARTUP_SETTLE_MS: 5_000,
  STARTUP_GRACE_MAX_MS: 120_000,
  /** A tool error line is reported once the agent stayed quiet this long after it. */
  TOOL_ERROR_CONFIRM_MS: 5_000,
  /** A subtask count still on screen is re-sent this often, so the supervisor's 30 s staleness holds only for vanished ones. */
  SUBTASK_REFRESH_MS: 10_000,
  /** Soft-wrap rejoin of a `suggest:` marker: at most this many more lines and bytes. */
  SUGGEST_REJOIN_LINES: 4,
  SUGGEST_REJOIN_BYTES: 512,
  /** The same rate-limit text repainted within this long is one event. */
  REPEAT_SUPPRESS_MS: 2_000,
  /** PR links remembered per session, so repaints do not repeat them. */
  SEEN_URLS: 64,
} as const;

export interface ParserScreen {
  rows: string[];
}

export interface ParserTimers {
  now(): number;
  /** `fn(arg)` after `ms`: the parser passes static callbacks and itself, not a closure per instance. */
  setTimeout<A>(fn: (arg: A) => void, ms: number, arg: A): unknown;
  clearTimeout(handle: unknown): void;
}

/** Where the real clock's `now` counts from. */
const TIME_ORIGIN = Date.now();
/**
 * A time before any `now`: an instant that never happened. A small integer, as the real clock's times
 * are (ms since TIME_ORIGIN: small integers for 12 days), so the parser's six timestamps are stored in
 * the object, not as a boxed number each (as -Infinity and Date.now() values were).
 */
const NEVER = -(2 ** 30);

export const realTimers: ParserTimers = {
  now: () => Date.now() - TIME_ORIGIN,
  setTimeout: (fn, ms, arg) => {
    const t = setTimeout(fn, ms, arg);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface OutputParserOptions {
  /** Events found, in order; called synchronously from the input that produced them. */
  emit(events: ParsedEvent[]): void;
  /** The session's current screen (rendered on demand). */
  readScreen(): ParserScreen;
  /** Completed lines so far (agent-block `line`). */
  lineCount(): number;
  /** The agent shows it is working (status line, hook, OSC 133 C) or stopped showing it. */
  onWorking?(working: boolean): void;
  timers?: ParserTimers;
}

type Question = { text: string; confident: boolean };

// Timer callbacks shared by every parser (the parser is the timer's argument): no closures per session.
const parseScreenNow = (p: OutputParser): void => p.parseScreen();
const screenTimerFired = (p: OutputParser): void => p.onScreenTimer();
const quietCheckDue = (p: OutputParser): void => p.quietCheck();

export class OutputParser {
  private agent: string | null = null;
  private readonly t: ParserTimers;
  private readonly startedAt: number;
  private settled = false;
  private lastOutputAt: number;
  private lastInputAt = NEVER;
  private lastResizeAt = NEVER;
  private lastStatusAt = NEVER;
  private statusChangedAt = NEVER;
  /** OSC 7770 `state=` seen: the agent reports itself, the silence heuristic stands down. */
  private hooked = false;
  private epoch = 0;

  private screenTimer: unknown;
  private bytesSinceParse = 0;
  /** Re-reads the screen when a frozen status line would go stale (no output comes to trigger it). */
  private staleTimer: unknown;
  private quietTimer: unknown;
  private prevRows: string[] = [];
  private candidate: { text: string; chunks: number } | null = null;
  /** Output chunks since the last one holding a `?`. */
  private plainChunks = 0;
  /** The low-confidence question the heuristic raised, watched until it leaves the screen. */
  private heuristicOpen: string | null = null;
  /** Questions already answered: the agent repainting its transcript does not ask them again. Made on first use, as the two below (most sessions never need one). */
  private answered: Set<string> | undefined;
  private choiceKey: string | null = null;
  private statusKey: string | null = null;
  private working = false;
  private subtasks: { key: string; at: number } | null = null;
  private slashKey: string | null = null;
  private toolError: string | null = null;

  private pendingSuggest: { text: string; lines: number } | null = null;
  private suggestSeen: Map<string, number> | undefined;
  private lastIntent: string | null = null;
  private lastPlan: string | null = null;
  private lastProgress = '';
  private seenUrls: Set<string> | undefined;
  private lastRepeat: { key: string; at: number } | null = null;
  private disposed = false;

  constructor(private readonly opts: OutputParserOptions) {
    this.t = opts.timers ?? realTimers;
    this.startedAt = this.lastOutputAt = this.t.now();
  }

  get agentType(): string | null {
    return this.agent;
  }

  /** The agent running in the session (null: a plain shell or program). Agent-only rules follow it. */
  setAgent(type: string | null): void {
    if (type === this.agent) return;
    this.agent = type;
    if (type === null) this.resetAgentState();
    else {
      // What the agent drew before it was recognised is on screen already: read it now.
      this.prevRows = [];
      this.screenTimer ??= this.t.setTimeout(parseScreenNow, 0, this);
      this.armQuiet();
    }
  }

  /**
   * Whether `lines` would do anything with these lines: a plain session only looks for PR links, so
   * most of its output is never decoded to a string (`includes` searches the stripper's bytes).
   */
  wantsText(lines: { includes(ascii: string): boolean }): boolean {
    return this.agent !== null || (lines.includes('://') && (lines.includes('/pull/') || lines.includes('/merge_requests/')));
  }

  /** A batch's completed lines, joined by `\n` (the stripper's decode of one push). */
  lines(text: string): void {
    const out: ParsedEvent[] = [];
    let from = 0;
    if (this.pendingSuggest !== null && this.agent !== null) from = this.continueSuggest(text, out);
    if (this.agent === null) {
      // Plain sessions only look for PR links: one search for `://` (a memchr for `:`, which base64 and
      // most build output lack), no regex pass.
      if (text.includes('://') && (text.includes('/pull/') || text.includes('/merge_requests/'))) this.scanLines(text, from, out, false);
    } else {
      this.scanLines(text, from, out, true);
    }
    if (out.length > 0) this.send(out);
  }

  /** An OSC string the stripper saw end (only 777, 9;4, 133 and 7770 reach here). */
  osc(payload: string): void {
    const sig = parseOsc(payload);
    if (sig === null) return;
    const out: ParsedEvent[] = [];
    if (sig.kind === 'notify') {
      const confident = notifyQuestion(sig.body);
      if (confident !== null && this.startupOver()) out.push({ type: 'question', prompt_text: sig.body.slice(0, 500), confident });
    } else if (sig.kind === 'progress') {
      const key = `${sig.state};${sig.value}`;
      if (key !== this.lastProgress) {
        this.lastProgress = key;
        out.push({ type: 'progress', state: sig.state, value: sig.value });
      }
    } else if (sig.kind === 'osc133') {
      if (sig.mark === 'C') {
        out.push({ type: 'agent-block', action: 'start', line: this.opts.lineCount() });
        this.setWorking(true);
      } else if (sig.mark === 'D') {
        const e: ParsedEvent = { type: 'agent-block', action: 'end', line: this.opts.lineCount() };
        if (sig.exitCode !== undefined) e.exit_code = sig.exitCode;
        out.push(e);
        this.setWorking(false);
      }
    } else {
      const f = sig.fields;
      const state = f['state'];
      if (state === 'busy' || state === 'idle') {
        this.hooked = true;
        const e: ParsedEvent = { type: 'shell-state', state };
        if (f['agent']) e.agent_type = f['agent'];
        out.push(e);
        this.setWorking(state === 'busy');
      }
      const block = f['block'];
      if (block === 'start' || block === 'end') {
        const e: ParsedEvent = { type: 'agent-block', action: block, line: this.opts.lineCount() };
        const code = Number(f['exit']);
        if (block === 'end' && f['exit'] !== undefined && Number.isInteger(code)) e.exit_code = code;
        out.push(e);
      }
    }
    if (out.length > 0) this.send(out);
  }

  /** After every output batch (its lines and OSC already handed over). */
  batchEnd(batch: Uint8Array): void {
    const now = this.t.now();
    this.lastOutputAt = now;
    if (!this.settled && now - this.startedAt >= ParserConstants.STARTUP_GRACE_MAX_MS) this.settled = true;
    if (this.agent === null) return;
    // Staleness counts chunks without a `?` since the question was drawn, found before the screen is read.
    if (batch.includes(0x3f)) this.plainChunks = 0;
    else {
      this.plainChunks++;
      if (this.candidate !== null && ++this.candidate.chunks > ParserConstants.STALE_QUESTION_CHUNKS) this.candidate = null;
    }
    this.bytesSinceParse += batch.length;
    this.screenTimer ??= this.t.setTimeout(screenTimerFired, ParserConstants.SCREEN_PARSE_MS, this);
    this.armQuiet();
  }

  /** Bytes typed into the session: the echo window starts, Enter closes the turn's open question. */
  input(bytes: Uint8Array): void {
    this.lastInputAt = this.t.now();
    if (bytes.includes(0x0d) || bytes.includes(0x0a)) {
      this.epoch++;
      for (const q of [this.candidate?.text, this.heuristicOpen]) {
        if (q === undefined || q === null) continue;
        this.answered ??= new Set();
        if (this.answered.size >= 64) this.answered.clear();
        this.answered.add(q);
      }
      this.candidate = null;
      this.heuristicOpen = null;
      this.toolError = null;
      // A prompt still drawn after the answer is a new one once the echo window is over.
      this.choiceKey = null;
    }
  }

  resized(): void {
    this.lastResizeAt = this.t.now();
  }

  /** The screen read, unless a flood still runs: then once it pauses. */
  /** @internal (timer) */
  onScreenTimer(): void {
    this.screenTimer = undefined;
    const quietAt = this.lastOutputAt + ParserConstants.FLOOD_QUIET_MS;
    const now = this.t.now();
    if (this.bytesSinceParse > ParserConstants.FLOOD_BYTES && now < quietAt) {
      this.screenTimer = this.t.setTimeout(screenTimerFired, quietAt - now, this);
      return;
    }
    this.parseScreen();
  }

  /** Reads the screen now (tests; and the screen timer). */
  parseScreen(): void {
    this.t.clearTimeout(this.screenTimer);
    this.screenTimer = undefined;
    if (this.agent === null || this.disposed) return;
    const rows = this.opts.readScreen().rows;
    const now = this.t.now();
    this.bytesSinceParse = 0;
    const out: ParsedEvent[] = [];
    const chrome = chromeStart(rows);

    const status = findStatusLine(rows, this.agent, chrome);
    if (status !== null) {
      this.lastStatusAt = now;
      if (status.full_line !== this.statusKey) {
        out.push(status);
        this.statusChangedAt = now;
      }
    }
    this.statusKey = status?.full_line ?? null;
    // A status line holds the session busy while it animates; one left frozen on screen stops counting.
    const liveFor = status === null ? 0 : this.statusChangedAt + ParserConstants.STATUS_STALE_MS - now;
    this.setWorking(liveFor > 0);
    this.t.clearTimeout(this.staleTimer);
    this.staleTimer = liveFor > 0 ? this.t.setTimeout(parseScreenNow, liveFor, this) : undefined;

    // Within the echo window (after input) or the resize grace, what changed may be the echo or a
    // reflow: new prompts and question rows are looked at again once the window is over.
    const settleAt = Math.max(this.lastInputAt + ParserConstants.ECHO_WINDOW_MS, this.lastResizeAt + ParserConstants.RESIZE_GRACE_MS);
    const settling = now < settleAt;
    if (settling) this.screenTimer = this.t.setTimeout(parseScreenNow, settleAt - now, this);

    const choice = findChoicePrompt(rows);
    const choiceKey = choice === null ? null : JSON.stringify(choice);
    if (choiceKey !== this.choiceKey) {
      if (choice === null) {
        out.push({ type: 'choice-cleared' });
        this.choiceKey = null;
      } else if (!settling) {
        out.push(choice);
        this.choiceKey = choiceKey;
      }
    }

    const sub = findSubtasks(rows);
    const subKey = sub === null ? null : `${sub.count} ${sub.task_type}`;
    if (sub !== null && (this.subtasks?.key !== subKey || now - this.subtasks.at >= ParserConstants.SUBTASK_REFRESH_MS)) {
      out.push({ type: 'active-subtasks', count: sub.count, task_type: sub.task_type });
      this.subtasks = { key: subKey!, at: now };
    } else if (sub === null && this.subtasks !== null) {
      out.push({ type: 'active-subtasks', count: 0, task_type: this.subtasks.key.replace(/^\d+ /, '') });
      this.subtasks = null;
    }

    const slash = findSlashMenu(rows, chrome);
    const slashKey = slash === null ? null : JSON.stringify(slash);
    if (slashKey !== this.slashKey) {
      out.push({ type: 'slash-menu', items: slash ?? [] });
      this.slashKey = slashKey;
    }

    if (!settling) {
      this.findCandidate(rows, chrome);
      // A prompt's title asks already: the prompt, not the silence heuristic, reports it.
      if (choice !== null && this.candidate?.text === choice.title) this.candidate = null;
    }
    if (this.heuristicOpen !== null && !latestChat(rows, chrome, ParserConstants.QUESTION_VISIBLE_ROWS).includes(this.heuristicOpen)) {
      this.heuristicOpen = null;
      out.push({ type: 'question-cleared' });
    }
    // After input, rows are compared with the screen before it, so a question drawn in the echo window
    // still counts as changed; a resize's reflow is absorbed (moved rows are not new ones).
    if (!settling || now < this.lastResizeAt + ParserConstants.RESIZE_GRACE_MS) this.prevRows = rows;
    if (out.length > 0) this.send(out);
  }

  dispose(): void {
    this.disposed = true;
    this.t.clearTimeout(this.screenTimer);
    this.t.clearTimeout(this.quietTimer);
    this.t.clearTimeout(this.staleTimer);
    this.screenTimer = this.quietTimer = this.staleTimer = undefined;
  }

  /** Runs the rules on each line LINE_TRIGGER hits (once per line, however many hits it has). */
  private scanLines(text: string, from: number, out: ParsedEvent[], agent: boolean): void {
    const trigger = LINE_TRIGGER;
    trigger.lastIndex = from;
    let m: RegExpExecArray | null;
    while ((m = trigger.exec(text)) !== null) {
      const start = text.lastIndexOf('\n', m.index) + 1;
      let end = text.indexOf('\n', m.index);
      if (end < 0) end = text.length;
      this.lineEvents(text.slice(start, end), out, agent, text, end);
      trigger.lastIndex = end + 1;
      if (end >= text.length) break;
    }
  }

  private lineEvents(line: string, out: ParsedEvent[], agent: boolean, text: string, end: number): void {
    const found: ParsedEvent[] = [];
    sessionLineEvents(line, found);
    if (agent) {
      const marker = markerOf(line);
      if (marker !== null) this.marker(marker.kind, marker.rest, found, text, end);
      else {
        agentLineEvents(line, found);
        if (TOOL_ERROR.test(line) && !looksLikeCode(line)) {
          this.toolError = line.trim().slice(0, 300);
          this.armQuiet();
        }
      }
    }
    for (const e of found) if (this.fresh(e)) out.push(e);
  }

  private marker(kind: 'intent' | 'suggest', rest: string, out: ParsedEvent[], text: string, end: number): void {
    if (kind === 'intent') {
      const intent = parseIntent(rest);
      if (intent !== null) out.push(intent);
      return;
    }
    const s = parseSuggest(rest);
    if (s === 'open') {
      this.pendingSuggest = { text: rest.trim(), lines: 0 };
      // The rest of the marker may be in this very batch: rejoin from the next line on.
      if (end < text.length) this.continueSuggest(text.slice(end + 1), out);
    } else if (s !== null) this.suggest(s, out);
  }

  /** Appends the lines that continue a wrapped `suggest: [ …`; returns where regular scanning resumes. */
  private continueSuggest(text: string, out: ParsedEvent[]): number {
    let pos = 0;
    while (this.pendingSuggest !== null && pos <= text.length) {
      let end = text.indexOf('\n', pos);
      if (end < 0) end = text.length;
      const p = this.pendingSuggest;
      p.text += ' ' + text.slice(pos, end).trim();
      p.lines++;
      pos = end + 1;
      const s = parseSuggest(p.text);
      if (s !== 'open' || p.lines >= ParserConstants.SUGGEST_REJOIN_LINES || p.text.length > ParserConstants.SUGGEST_REJOIN_BYTES) {
        this.pendingSuggest = null;
        if (s !== null && s !== 'open') this.suggest(s, out);
      }
      if (end >= text.length) break;
    }
    return Math.min(pos, text.length);
  }

  /** A suggest marker closes the current turn; the same items seen in an earlier turn are a repaint. */
  private suggest(s: Extract<ParsedEvent, { type: 'suggest' }>, out: ParsedEvent[]): void {
    const key = s.items.join('|');
    // Seen in this turn: a repaint, already reported; in an earlier turn: history redrawn.
    this.suggestSeen ??= new Map();
    if (this.suggestSeen.has(key)) return;
    if (this.suggestSeen.size >= 32) this.suggestSeen.delete(this.suggestSeen.keys().next().value!);
    this.suggestSeen.set(key, this.epoch);
    out.push(s);
  }

  /** Drops repeats that come from repaints: the same link, intent, plan file or rate-limit text. */
  private fresh(e: ParsedEvent): boolean {
    if (e.type === 'pr-url') {
      this.seenUrls ??= new Set();
      if (this.seenUrls.has(e.url)) return false;
      if (this.seenUrls.size >= ParserConstants.SEEN_URLS) this.seenUrls.clear();
      this.seenUrls.add(e.url);
    } else if (e.type === 'intent') {
      const key = `${e.text}\u0000${e.title ?? ''}`;
      if (key === this.lastIntent) return false;
      this.lastIntent = key;
    } else if (e.type === 'plan-file') {
      if (e.path === this.lastPlan) return false;
      this.lastPlan = e.path;
    } else if (e.type === 'rate-limit' || e.type === 'api-error' || e.type === 'usage-limit' || e.type === 'usage-exhausted') {
      const key = JSON.stringify(e);
      const now = this.t.now();
      if (this.lastRepeat !== null && this.lastRepeat.key === key && now - this.lastRepeat.at < ParserConstants.REPEAT_SUPPRESS_MS) return false;
      this.lastRepeat = { key, at: now };
    }
    return true;
  }

  /** A changed chat row ending in `?` (outside the echo and resize windows) becomes the candidate. */
  private findCandidate(rows: readonly string[], chrome: number): void {
    for (let y = Math.min(chrome, rows.length) - 1; y >= 0; y--) {
      const row = rows[y]!;
      if (row === this.prevRows[y] || !isQuestionCandidate(row)) continue;
      const text = row.trim();
      if (this.answered?.has(text)) return;
      this.candidate = { text, chunks: this.plainChunks };
      if (this.plainChunks > ParserConstants.STALE_QUESTION_CHUNKS) this.candidate = null;
      this.armQuiet();
      return;
    }
  }

  private startupOver(): boolean {
    if (!this.settled && this.t.now() - this.startedAt >= ParserConstants.STARTUP_GRACE_MAX_MS) this.settled = true;
    return this.settled;
  }

  /** The quiet timer runs only while something waits on silence; it re-arms for the remainder. */
  private armQuiet(): void {
    if (this.quietTimer !== undefined || this.disposed) return;
    const wait = this.nextQuietCheck();
    if (wait === null) return;
    this.quietTimer = this.t.setTimeout(quietCheckDue, wait, this);
  }

  /** Ms of further quiet the earliest pending check needs, or null when nothing waits. */
  private nextQuietCheck(): number | null {
    const quiet = this.t.now() - this.lastOutputAt;
    let need = Infinity;
    if (!this.settled && this.agent !== null) need = Math.min(need, ParserConstants.STARTUP_SETTLE_MS);
    if (this.toolError !== null) need = Math.min(need, ParserConstants.TOOL_ERROR_CONFIRM_MS);
    if (this.candidate !== null) need = Math.min(need, ParserConstants.SILENCE_QUESTION_MS);
    return need === Infinity ? null : Math.max(0, need - quiet);
  }

  /** @internal (timer) */
  quietCheck(): void {
    this.quietTimer = undefined;
    if (this.disposed) return;
    const now = this.t.now();
    const quiet = now - this.lastOutputAt;
    const out: ParsedEvent[] = [];
    if (!this.settled && quiet >= ParserConstants.STARTUP_SETTLE_MS) this.settled = true;
    if (this.toolError !== null && quiet >= ParserConstants.TOOL_ERROR_CONFIRM_MS) {
      out.push({ type: 'tool-error', matched_text: this.toolError });
      this.toolError = null;
    }
    if (this.candidate !== null && quiet >= ParserConstants.SILENCE_QUESTION_MS) {
      const q = this.silenceQuestion(now);
      if (q !== null) out.push({ type: 'question', prompt_text: q.text, confident: q.confident });
    }
    if (out.length > 0) this.send(out);
    this.armQuiet();
  }

  /**
   * The candidate, if it is still a question after SILENCE_QUESTION_MS of quiet: an agent without
   * hooks, past its startup, no status line for that long, and the text still among the last chat rows.
   */
  private silenceQuestion(now: number): Question | null {
    const c = this.candidate!;
    this.candidate = null;
    if (this.agent === null || this.hooked || !this.startupOver()) return null;
    if (now - this.lastStatusAt < ParserConstants.SILENCE_QUESTION_MS) return null;
    const rows = this.opts.readScreen().rows;
    if (!latestChat(rows, chromeStart(rows), ParserConstants.QUESTION_VISIBLE_ROWS).includes(c.text)) return null;
    this.heuristicOpen = c.text;
    return { text: c.text, confident: false };
  }

  private setWorking(working: boolean): void {
    if (working === this.working) return;
    this.working = working;
    this.opts.onWorking?.(working);
  }

  private resetAgentState(): void {
    this.t.clearTimeout(this.screenTimer);
    this.t.clearTimeout(this.staleTimer);
    this.screenTimer = this.staleTimer = undefined;
    this.candidate = null;
    this.heuristicOpen = null;
    this.choiceKey = this.statusKey = this.slashKey = null;
    this.subtasks = null;
    this.toolError = null;
    this.pendingSuggest = null;
    this.prevRows = [];
    this.setWorking(false);
  }

  private send(events: ParsedEvent[]): void {
    if (!this.disposed) this.opts.emit(events);
  }
}
