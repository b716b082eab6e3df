/** What the page knows about sessions and pending confirms, and the list's attention order. */

export interface ChoiceOption {
  key: string;
  label: string;
  destructive?: boolean;
}

export interface SessionState {
  awaiting_input?: boolean;
  rate_limited?: boolean;
  last_activity_ms?: number;
  question_text?: string;
  last_error?: string;
  agent_intent?: string;
  agent_state?: string;
  agent_type?: string;
  suggested_actions?: string[];
  choice_prompt?: { title: string; options: ChoiceOption[] };
  shell_state?: string;
}

export interface SessionRow {
  session_id: string;
  display_name: string;
  alias: string;
  cwd: string;
  rows: number;
  cols: number;
  total_written: number;
  state: SessionState;
  exit?: { exit_code: number | null; reason: string };
}

export interface Confirm {
  request_id: string;
  title: string;
  message?: string;
  origin_session_id?: string;
}

export type Attention = 'awaiting' | 'rate-limited' | 'errored' | 'completed' | 'working' | 'idle' | 'exited';

/** The badge a row shows; the first four are the ones that need the user, in that order. */
export function attentionOf(row: SessionRow): Attention {
  const s = row.state;
  if (s.awaiting_input || s.agent_state === 'awaiting_input' || s.choice_prompt) return 'awaiting';
  if (s.rate_limited) return 'rate-limited';
  if (s.last_error || (row.exit && row.exit.exit_code !== 0 && row.exit.exit_code !== null)) return 'errored';
  if (s.agent_state === 'completed') return 'completed';
  if (row.exit) return 'exited';
  if (s.agent_state === 'working' || s.shell_state === 'busy') return 'working';
  return 'idle';
}

const RANK: Record<Attention, number> = { awaiting: 0, 'rate-limited': 1, errored: 2, completed: 3, working: 4, idle: 5, exited: 6 };

export const BADGE_TEXT: Record<Attention, string> = {
  awaiting: 'needs you',
  'rate-limited': 'rate-limited',
  errored: 'error',
  completed: 'done',
  working: 'working',
  idle: 'idle',
  exited: 'exited',
};

/** Attention first, then the most recently active. */
export function sortForList(rows: SessionRow[]): SessionRow[] {
  return [...rows].sort((a, b) => RANK[attentionOf(a)] - RANK[attentionOf(b)] || (b.state.last_activity_ms ?? 0) - (a.state.last_activity_ms ?? 0));
}

export function ago(ms: number | undefined, now = Date.now()): string {
  if (!ms) return '';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}
