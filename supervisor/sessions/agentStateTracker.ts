/**
 * The supervisor's side of agent state: applies the pty host's parsed events and the session's
 * input to each record's AgentSignals, tells the host which agent runs where, publishes
 * `pty-parsed` and deduplicated `session-state-changed`, and expires rate limits on time.
 */
import { addKeyed } from '../../shared/keyedSets.js';
import type { Disposable } from '../../shared/disposable.js';
import { toDisposable } from '../../shared/disposable.js';
import type { ParsedEvent } from '../../shared/protocol/parsedEvents.js';
import type { EventBus } from '../events/eventBus.js';
import { applyInput, applyParsed, clearAgent } from './agentSignals.js';
import { type SessionRecord, sessionState, taskActive } from './sessionRecord.js';

/** A submitted line of at least this many words is the session's last_prompt (shorter ones are answers, not prompts). */
const LAST_PROMPT_MIN_WORDS = 10;
export const LAST_PROMPT_MAX_CHARS = 2_000;
/** Parsed events kept per session for diagnostics. */
const RECENT_EVENTS = 8;

/** A batch's events, in stream order, once the batch has been applied (one call per batch, not per event). */
export type ParsedListener = (events: readonly ParsedEvent[]) => void;
/** An intent marker the session's agent printed (for the progress journal). */
export type IntentListener = (record: SessionRecord, text: string) => void;

export interface AgentStateTrackerOptions {
  bus: EventBus;
  /** Lines the session's log holds now (a user-input event's `line`). */
  lineCount(sessionId: string): Promise<number>;
  /** Tells the pty host the agent now running in a session (null: none). */
  sendAgent(sessionId: string, agentType: string | null): void;
  /** Marker settings in force for an agent type: config `intent_tab_title` and `suggest_followups`, with agents.json. */
  markers(agentType: string | null): { intents: boolean; suggests: boolean };
}

export class AgentStateTracker {
  private readonly parsedListeners = new Map<string, Set<ParsedListener>>();
  private readonly intentListeners = new Set<IntentListener>();
  /** The last session-state-changed payload per session, without last_activity_ms (which moves with every byte). */
  private readonly published = new Map<string, string>();
  private readonly expiryTimers = new Map<string, NodeJS.Timeout>();
  /** The last few events per session, with their arrival time (debug agent_detection). */
  private readonly recent = new Map<string, Array<{ at_ms: number; event: ParsedEvent }>>();

  constructor(private readonly opts: AgentStateTrackerOptions) {}

  /** Events of one batch, in stream order: each is applied before the next is looked at. */
  parsed(record: SessionRecord, events: readonly ParsedEvent[]): void {
    const markers = this.opts.markers(record.agent_type);
    let changed = false;
    for (const event of events) {
      const now = Date.now();
      const ctx = { now, turnEpoch: record.turn_epoch, taskActive: taskActive(record), intents: markers.intents, suggests: markers.suggests };
      if (!record.exit && applyParsed(record.signals, event, ctx)) changed = true;
      if (event.type === 'rate-limit' && record.signals.rateLimit !== null) this.armExpiry(record, record.signals.rateLimit.until_ms - now);
      if (event.type === 'intent' && markers.intents) {
        const text = event.title ? `${event.text} (${event.title})` : event.text;
        for (const fn of this.intentListeners) fn(record, text);
      }
      this.remember(record.session_id, now, event);
      this.opts.bus.publish('pty-parsed', { session_id: record.session_id, parsed: event });
    }
    const set = this.parsedListeners.get(record.session_id);
    if (set) for (const fn of set) fn(events);
    if (changed) this.publish(record);
  }

  /**
   * Bytes written to the session (every input path), after its turn epoch advanced; `submitted` is
   * the line an Enter in them sent. A substantial line becomes last_prompt; to an agent it is a
   * `user-input` event (with the log line it was typed at).
   */
  input(record: SessionRecord, bytes: Uint8Array, submitted: string | null): void {
    let changed = applyInput(record.signals, bytes);
    const line = submitted?.trim() ?? '';
    if (line.split(/\s+/).length >= LAST_PROMPT_MIN_WORDS) {
      record.last_prompt = line.length <= LAST_PROMPT_MAX_CHARS ? line : line.slice(0, LAST_PROMPT_MAX_CHARS);
      changed = true;
    }
    if (changed) this.publish(record);
    if (line.length > 0 && record.agent_type !== null && !record.exit) {
      const content = line.length <= LAST_PROMPT_MAX_CHARS ? line : line.slice(0, LAST_PROMPT_MAX_CHARS);
      void this.opts.lineCount(record.session_id).then(
        (at) => this.parsed(record, [{ type: 'user-input', content, line: at }]),
        () => this.parsed(record, [{ type: 'user-input', content, line: 0 }]),
      );
    }
  }

  /** The detected agent changed (record.agent_type already set): the host learns it; a departed agent's state is dropped. */
  agentChanged(record: SessionRecord): void {
    if (record.agent_type === null) clearAgent(record.signals);
    if (!record.exit) this.opts.sendAgent(record.session_id, record.agent_type);
  }

  /** The session ended: no question, prompt or limit stays open on a dead terminal. */
  exited(record: SessionRecord): void {
    const lastError = record.signals.lastError;
    clearAgent(record.signals);
    record.signals.lastError = lastError;
    this.clearExpiry(record.session_id);
  }

  /** The session's latest parsed events, oldest first. */
  recentEvents(sessionId: string): Array<{ at_ms: number; event: ParsedEvent }> {
    return this.recent.get(sessionId) ?? [];
  }

  forget(sessionId: string): void {
    this.clearExpiry(sessionId);
    this.recent.delete(sessionId);
    this.published.delete(sessionId);
    this.parsedListeners.delete(sessionId);
  }

  /** session-state-changed with the full SessionState, unless it equals the last one sent. */
  publish(record: SessionRecord): void {
    const state = sessionState(record);
    const { last_activity_ms: _moving, ...compared } = state;
    const key = JSON.stringify(compared);
    if (this.published.get(record.session_id) === key) return;
    this.published.set(record.session_id, key);
    this.opts.bus.publish('session-state-changed', { session_id: record.session_id, state });
  }

  /** Raw-mode viewers' `parsed` frames. */
  onParsed(sessionId: string, fn: ParsedListener): Disposable {
    return addKeyed(this.parsedListeners, sessionId, fn);
  }

  onIntent(fn: IntentListener): Disposable {
    this.intentListeners.add(fn);
    return toDisposable(() => this.intentListeners.delete(fn));
  }

  dispose(): void {
    for (const t of this.expiryTimers.values()) clearTimeout(t);
    this.expiryTimers.clear();
  }

  private remember(sessionId: string, at_ms: number, event: ParsedEvent): void {
    let list = this.recent.get(sessionId);
    if (!list) this.recent.set(sessionId, (list = []));
    list.push({ at_ms, event });
    if (list.length > RECENT_EVENTS) list.shift();
  }

  /** A rate limit ends by itself: the state is published again when it does. */
  private armExpiry(record: SessionRecord, ms: number): void {
    this.clearExpiry(record.session_id);
    const timer = setTimeout(() => {
      this.expiryTimers.delete(record.session_id);
      this.publish(record);
    }, Math.max(0, ms) + 5);
    timer.unref();
    this.expiryTimers.set(record.session_id, timer);
  }

  private clearExpiry(sessionId: string): void {
    clearTimeout(this.expiryTimers.get(sessionId));
    this.expiryTimers.delete(sessionId);
  }
}
