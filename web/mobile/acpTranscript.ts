/**
 * One ACP session's conversation, built from the stream's frames: the person's prompts, the agent's
 * message chunks merged into messages, its thoughts, tool calls with their latest status, its plan,
 * each turn's end, and the questions waiting on a person.
 */

export type TranscriptItem =
  | { kind: 'user'; text: string }
  | { kind: 'agent'; text: string }
  | { kind: 'thought'; text: string }
  | { kind: 'tool'; toolCallId: string; title: string; status: string; toolKind: string }
  | { kind: 'plan'; entries: Array<{ content: string; status: string }> }
  | { kind: 'turn-end'; stopReason: string; error?: string }
  | { kind: 'notice'; text: string };

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: string;
}

export interface Pending {
  requestId: string;
  kind: 'permission' | 'elicitation';
  sessionId: string | null;
  title: string;
  options: PermissionOption[];
}

// biome-ignore lint/suspicious/noExplicitAny: ACP content blocks and updates are checked field by field
type Json = any;

/** The text of a content block (or a list of them); other kinds show as a short placeholder. */
export function blockText(content: Json): string {
  if (Array.isArray(content)) return content.map(blockText).join('');
  if (content === null || typeof content !== 'object') return '';
  if (content.type === 'text') return String(content.text ?? '');
  if (content.type === 'resource_link') return `[${content.name ?? content.uri ?? 'link'}]`;
  if (content.type === 'resource') return `[${content.resource?.uri ?? 'resource'}]`;
  if (content.type === 'content') return blockText(content.content);
  return `[${String(content.type)}]`;
}

export function pendingFrom(interaction: Json): Pending {
  const request = interaction.request ?? {};
  const permission = interaction.kind === 'permission';
  return {
    requestId: String(interaction.requestId),
    kind: permission ? 'permission' : 'elicitation',
    sessionId: interaction.sessionId ?? null,
    title: permission
      ? String(request.toolCall?.title ?? request.toolCall?.toolCallId ?? 'The agent asks for permission')
      : String(request.message ?? 'The agent asks'),
    options:
      permission && Array.isArray(request.options)
        ? request.options.map((o: Json) => ({ optionId: String(o.optionId), name: String(o.name ?? o.optionId), kind: String(o.kind ?? '') }))
        : [],
  };
}

export class Transcript {
  readonly items: TranscriptItem[] = [];
  readonly pending = new Map<string, Pending>();
  /** A turn is running (started, not ended): the composer offers Cancel. */
  turnRunning = false;
  private readonly tools = new Map<string, Extract<TranscriptItem, { kind: 'tool' }>>();

  constructor(readonly sessionId: string) {}

  /** Applies one stream event; events of other sessions are ignored. Returns whether anything changed. */
  apply(event: Json): boolean {
    switch (event.type) {
      case 'session_update':
        if (event.sessionId !== this.sessionId) return false;
        this.update(event.notification?.update ?? {});
        return true;
      case 'turn_started':
        if (event.sessionId !== this.sessionId) return false;
        this.turnRunning = true;
        this.items.push({ kind: 'user', text: blockText(event.prompt) });
        return true;
      case 'turn_ended':
        if (event.sessionId !== this.sessionId) return false;
        this.turnRunning = false;
        this.items.push({ kind: 'turn-end', stopReason: String(event.stopReason ?? 'error'), ...(event.error ? { error: String(event.error.message) } : {}) });
        return true;
      case 'interaction_raised':
        if (event.interaction?.sessionId !== this.sessionId && event.interaction?.sessionId !== null) return false;
        this.pending.set(String(event.interaction.requestId), pendingFrom(event.interaction));
        return true;
      case 'interaction_settled':
        return this.pending.delete(String(event.requestId));
      case 'generation':
        this.turnRunning = false;
        this.items.push({ kind: 'notice', text: 'The agent was restarted: load the session to go on.' });
        return true;
      case 'state':
        if (event.state === 'closed' || event.state === 'failed') {
          this.turnRunning = false;
          this.items.push({ kind: 'notice', text: `The agent ${event.state === 'failed' ? 'failed' : 'closed'}${event.reason ? `: ${event.reason}` : ''}` });
          return true;
        }
        return false;
      default:
        return false;
    }
  }

  private addTool(u: Json): void {
    const item = {
      kind: 'tool' as const,
      toolCallId: String(u.toolCallId),
      title: String(u.title ?? u.toolCallId),
      status: String(u.status ?? 'pending'),
      toolKind: String(u.kind ?? 'other'),
    };
    this.tools.set(item.toolCallId, item);
    this.items.push(item);
  }

  private update(u: Json): void {
    const last = this.items[this.items.length - 1];
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'user_message_chunk':
      case 'agent_thought_chunk': {
        // In a turn started here the prompt is shown from turn_started; an agent that echoes it
        // would show it twice. Outside a turn (a load replaying history) these are the history.
        if (u.sessionUpdate === 'user_message_chunk' && this.turnRunning) return;
        const kind = u.sessionUpdate === 'agent_message_chunk' ? 'agent' : u.sessionUpdate === 'user_message_chunk' ? 'user' : 'thought';
        const text = blockText(u.content);
        // Chunks of one message arrive back to back: they extend the message being written.
        if (last !== undefined && last.kind === kind) last.text += text;
        else this.items.push({ kind, text });
        return;
      }
      case 'tool_call':
        this.addTool(u);
        return;
      case 'tool_call_update': {
        const item = this.tools.get(String(u.toolCallId));
        // An update for a call whose start was not seen (dropped from the journal) shows as the call.
        if (item === undefined) return this.addTool(u);
        if (u.status) item.status = String(u.status);
        if (u.title) item.title = String(u.title);
        return;
      }
      case 'plan': {
        const entries = Array.isArray(u.entries)
          ? u.entries.map((e: Json) => ({ content: String(e.content ?? ''), status: String(e.status ?? 'pending') }))
          : [];
        // A plan update replaces the plan: show the newest in place of the previous one when it is the last thing shown.
        if (last?.kind === 'plan') last.entries = entries;
        else this.items.push({ kind: 'plan', entries });
        return;
      }
      default:
        return;
    }
  }
}
