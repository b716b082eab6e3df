/**
 * What the output parser told the supervisor about one session's agent (the inputs of agent_state): the
 * accumulator applies each parsed event, in order, straight from the pty host's channel (the
 * lossless per-session queue: nothing between host and record can drop a SET or a CLEAR), and
 * SessionState reads it back as wire fields.
 */
import type { ChoiceOption, ParsedEvent, SlashMenuItem } from '../../shared/protocol/parsedEvents.js';

export const SignalConstants = {
  /** RATE_LIMIT_DEFAULT_EXPIRY_MS: a rate limit whose text named no wait ends after this. */
  RATE_LIMIT_DEFAULT_EXPIRY_MS: 120_000,
  /** SUBTASK_STALE_MS: a subtask count not seen again for this long no longer counts. */
  SUBTASK_STALE_MS: 30_000,
  /** AGENT_RETRY_HOLD: an API retry line holds the agent working this long. */
  AGENT_RETRY_HOLD_MS: 15_000,
  /** Text fields on the wire are cut to this many characters. */
  MAX_TEXT_CHARS: 500,
} as const;

export interface ChoicePromptState {
  title: string;
  options: ChoiceOption[];
  dismiss_key?: string;
  amend_key?: string;
}

export interface AgentSignals {
  question: { text: string; confident: boolean } | null;
  choice: ChoicePromptState | null;
  rateLimit: { pattern_name: string; retry_after_ms: number; until_ms: number } | null;
  usagePct: number | null;
  lastError: string | null;
  intent: string | null;
  currentTask: string | null;
  progress: { state: number; value: number } | null;
  subtasks: { count: number; task_type: string; at_ms: number } | null;
  suggested: string[] | null;
  /** The turn (SessionInput.turnEpoch) a suggest marker closed; completed while no newer turn began. */
  completedEpoch: number | null;
  slashMenu: SlashMenuItem[] | null;
  /** An API retry line was seen: working until then. */
  retryHoldUntil: number;
}

export function emptySignals(): AgentSignals {
  return {
    question: null,
    choice: null,
    rateLimit: null,
    usagePct: null,
    lastError: null,
    intent: null,
    currentTask: null,
    progress: null,
    subtasks: null,
    suggested: null,
    completedEpoch: null,
    slashMenu: null,
    retryHoldUntil: 0,
  };
}

/** What the accumulator needs to know about the session when an event arrives. */
export interface ApplyContext {
  now: number;
  turnEpoch: number;
  /** An agent is detected and working on a task: rate-limit text counts only then. */
  taskActive: boolean;
  /** Marker settings in force (config `intent_tab_title`, `suggest_followups`). */
  intents: boolean;
  suggests: boolean;
}

const cut = (s: string): string => (s.length <= SignalConstants.MAX_TEXT_CHARS ? s : s.slice(0, SignalConstants.MAX_TEXT_CHARS));

/** Applies one event; true when the wire state may have changed. */
export function applyParsed(s: AgentSignals, e: ParsedEvent, ctx: ApplyContext): boolean {
  switch (e.type) {
    case 'question':
      s.question = { text: cut(e.prompt_text), confident: e.confident };
      return true;
    case 'question-cleared':
      if (s.question === null || s.question.confident) return false;
      s.question = null;
      return true;
    case 'choice-prompt': {
      const c: ChoicePromptState = { title: cut(e.title), options: e.options };
      if (e.dismiss_key !== undefined) c.dismiss_key = e.dismiss_key;
      if (e.amend_key !== undefined) c.amend_key = e.amend_key;
      s.choice = c;
      return true;
    }
    case 'choice-cleared':
      if (s.choice === null) return false;
      s.choice = null;
      return true;
    case 'status-line':
      // The agent is working again: a low-confidence question is answered, a rate limit is over.
      s.currentTask = cut(e.task_name);
      if (s.question !== null && !s.question.confident) s.question = null;
      s.rateLimit = null;
      return true;
    case 'rate-limit': {
      if (!ctx.taskActive) return false;
      const named = e.pattern_name === 'retry-after-header' || e.pattern_name === 'openai-retry-after' || /retry[- ]after/i.test(e.matched_text);
      const expiry = named ? e.retry_after_ms : SignalConstants.RATE_LIMIT_DEFAULT_EXPIRY_MS;
      s.rateLimit = { pattern_name: e.pattern_name, retry_after_ms: e.retry_after_ms, until_ms: ctx.now + expiry };
      return true;
    }
    case 'usage-limit':
      s.usagePct = e.percentage;
      return true;
    case 'usage-exhausted':
      s.lastError = e.reset_time ? `usage exhausted (resets ${cut(e.reset_time)})` : 'usage exhausted';
      return true;
    case 'api-error':
      s.lastError = cut(e.matched_text);
      if (e.pattern_name === 'api-retrying' || e.pattern_name === 'api-unreachable') s.retryHoldUntil = ctx.now + SignalConstants.AGENT_RETRY_HOLD_MS;
      return true;
    case 'tool-error':
      s.lastError = cut(e.matched_text);
      return true;
    case 'intent':
      if (!ctx.intents) return false;
      s.intent = cut(e.title ? `${e.text} (${e.title})` : e.text);
      return true;
    case 'suggest':
      if (!ctx.suggests) return false;
      s.suggested = e.items;
      s.completedEpoch = ctx.turnEpoch;
      return true;
    case 'progress':
      s.progress = e.state === 0 ? null : { state: e.state, value: e.value };
      return true;
    case 'active-subtasks':
      s.subtasks = e.count > 0 ? { count: e.count, task_type: e.task_type, at_ms: ctx.now } : null;
      return true;
    case 'slash-menu':
      s.slashMenu = e.items.length > 0 ? e.items : null;
      return true;
    default:
      // pr-url, plan-file, user-input, shell-state, agent-block, agent-session-conflict: events only.
      return false;
  }
}

/**
 * Input reached the session: any of it answers an open question; Enter, Esc, Ctrl-C or an option's
 * digit answers a choice prompt (arrow keys only move its highlight); Enter or Esc closes the slash menu.
 */
export function applyInput(s: AgentSignals, bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false;
  const enter = bytes.includes(0x0d) || bytes.includes(0x0a);
  const single = bytes.length === 1 ? bytes[0]! : -1;
  const isEscape = single === 0x1b;
  const picks = enter || isEscape || bytes.includes(0x03) || (single >= 0x30 && single <= 0x39);
  let changed = false;
  if (s.question !== null) {
    s.question = null;
    changed = true;
  }
  if (s.choice !== null && picks) {
    s.choice = null;
    changed = true;
  }
  if (s.slashMenu !== null && (enter || isEscape)) {
    s.slashMenu = null;
    changed = true;
  }
  return changed;
}

/** The agent left (exited, or its shell took the foreground back): nothing of it stays open. */
export function clearAgent(s: AgentSignals): void {
  Object.assign(s, emptySignals());
}

export function rateLimited(s: AgentSignals, now: number): boolean {
  return s.rateLimit !== null && s.rateLimit.until_ms > now;
}

export function activeSubtasks(s: AgentSignals, now: number): number {
  return s.subtasks !== null && now - s.subtasks.at_ms <= SignalConstants.SUBTASK_STALE_MS ? s.subtasks.count : 0;
}

export function awaitingInput(s: AgentSignals): boolean {
  return s.question !== null;
}

/** The optional SessionState wire fields this accumulator owns (absent = zero/unknown). */
export function signalFields(s: AgentSignals, now: number, turnEpoch: number): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  if (s.question !== null) {
    f['question_text'] = s.question.text;
    if (s.question.confident) f['question_confident'] = true;
  }
  if (rateLimited(s, now)) f['retry_after_ms'] = s.rateLimit!.retry_after_ms;
  if (s.usagePct !== null) f['usage_limit_pct'] = s.usagePct;
  if (s.lastError !== null) f['last_error'] = s.lastError;
  if (s.intent !== null) f['agent_intent'] = s.intent;
  if (s.currentTask !== null) f['current_task'] = s.currentTask;
  if (s.progress !== null) f['progress'] = s.progress;
  const subtasks = activeSubtasks(s, now);
  if (subtasks > 0) f['active_sub_tasks'] = subtasks;
  if (s.suggested !== null && s.completedEpoch === turnEpoch) f['suggested_actions'] = s.suggested;
  if (s.slashMenu !== null) f['slash_menu_items'] = s.slashMenu;
  if (s.choice !== null) f['choice_prompt'] = s.choice;
  return f;
}
