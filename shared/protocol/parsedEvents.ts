/**
 * The output parser's events (JSON tag `type`): found by the pty host, applied to a
 * session's state by the supervisor, and published as `pty-parsed` and raw-mode `parsed` frames.
 */
import { Type } from 'typebox';

export interface ChoiceOption {
  key: string;
  label: string;
  highlighted: boolean;
  destructive: boolean;
  hint?: string;
}

export interface SlashMenuItem {
  command: string;
  description: string;
  highlighted: boolean;
}

export type ParsedEvent =
  | { type: 'rate-limit'; pattern_name: string; matched_text: string; retry_after_ms: number }
  | { type: 'status-line'; task_name: string; full_line: string; time_info?: string; token_info?: string }
  | { type: 'pr-url'; number: number; url: string; platform: 'github' | 'gitlab' }
  | { type: 'progress'; state: number; value: number }
  | { type: 'question'; prompt_text: string; confident: boolean }
  | { type: 'question-cleared' }
  | { type: 'usage-limit'; percentage: number; limit_type: 'weekly' | 'session' }
  | { type: 'usage-exhausted'; reset_time?: string }
  | { type: 'plan-file'; path: string }
  | { type: 'user-input'; content: string; line: number }
  | { type: 'api-error'; pattern_name: string; matched_text: string; error_kind: 'server' | 'auth' | 'unknown' }
  | { type: 'tool-error'; matched_text: string }
  | { type: 'intent'; text: string; title?: string }
  | { type: 'suggest'; items: string[] }
  | { type: 'slash-menu'; items: SlashMenuItem[] }
  | { type: 'choice-prompt'; title: string; options: ChoiceOption[]; dismiss_key?: string; amend_key?: string }
  | { type: 'choice-cleared' }
  | { type: 'active-subtasks'; count: number; task_type: string }
  | { type: 'shell-state'; state: 'busy' | 'idle'; agent_type?: string }
  | { type: 'agent-block'; action: 'start' | 'end'; line: number; exit_code?: number }
  | { type: 'agent-session-conflict'; matched_text: string; kind: 'in-use' | 'not-found' };

export type ParsedEventType = ParsedEvent['type'];

/** On the pty channel each event is checked for its tag only: both ends are built from this file. */
/** Its static type is the full union above, so listeners on the supervisor side get ParsedEvent. */
export const ParsedEventSchema = Type.Unsafe<ParsedEvent>(Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true }));
