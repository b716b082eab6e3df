/**
 * Questions an ACP agent asks a person — `session/request_permission` and `elicitation/create` —
 * while they wait. Each has an id of ours (the agent's JSON-RPC id is the SDK's business), is
 * answered exactly once (a second answer is a conflict), and is settled `cancelled` when its turn is
 * cancelled, the agent withdraws the request, or the connection's generation ends.
 */
import { randomUUID } from 'node:crypto';

import type { CreateElicitationRequest, CreateElicitationResponse, RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk';

import { ApiError } from '../../shared/apiError.js';
import { quoteClientInput } from '../../shared/quoteClientInput.js';

export type InteractionKind = 'permission' | 'elicitation';

export interface PendingInteraction {
  requestId: string;
  kind: InteractionKind;
  sessionId: string | null;
  generation: number;
  createdAtMs: number;
  /** Permission: the agent's request as sent (toolCall, options); elicitation: its request (mode, message, schema). */
  request: RequestPermissionRequest | CreateElicitationRequest;
}

type Answer = RequestPermissionResponse | CreateElicitationResponse;

interface Waiting {
  interaction: PendingInteraction;
  resolve(answer: Answer): void;
}

/** Settled ids remembered so a late second answer is told 409, not 404. */
const SETTLED_KEPT = 4096;

export type SettleReason = 'answered' | 'cancelled' | 'withdrawn' | 'closed';

export class AcpInteractions {
  private readonly waiting = new Map<string, Waiting>();
  /** Ids answered or settled, so a late second answer is a conflict rather than not found. */
  private readonly settled = new Set<string>();

  constructor(
    private readonly onRaised: (interaction: PendingInteraction) => void,
    private readonly onSettled: (interaction: PendingInteraction, reason: SettleReason, answer: Answer) => void,
  ) {}

  list(): PendingInteraction[] {
    return [...this.waiting.values()].map((w) => w.interaction);
  }

  /** Raises a question and resolves with its answer; an aborted `signal` (the agent withdrew it) settles it cancelled. */
  ask(kind: 'permission', sessionId: string, generation: number, request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  ask(
    kind: 'elicitation',
    sessionId: string | null,
    generation: number,
    request: CreateElicitationRequest,
    signal: AbortSignal,
  ): Promise<CreateElicitationResponse>;
  ask(kind: InteractionKind, sessionId: string | null, generation: number, request: PendingInteraction['request'], signal: AbortSignal): Promise<Answer> {
    const interaction: PendingInteraction = { requestId: randomUUID(), kind, sessionId, generation, createdAtMs: Date.now(), request };
    return new Promise<Answer>((resolve) => {
      this.waiting.set(interaction.requestId, { interaction, resolve });
      this.onRaised(interaction);
      signal.addEventListener('abort', () => this.settle(interaction.requestId, 'withdrawn', cancelledAnswer(kind)), { once: true });
    });
  }

  /** A person's answer to a permission: one of its options, or cancelled. */
  answerPermission(requestId: string, answer: { optionId?: string | undefined; cancelled?: boolean | undefined }): PendingInteraction {
    const { interaction } = this.pending(requestId, 'permission');
    let response: RequestPermissionResponse;
    if (answer.cancelled === true) response = { outcome: { outcome: 'cancelled' } };
    else {
      const options = (interaction.request as RequestPermissionRequest).options;
      if (answer.optionId === undefined) throw new ApiError('invalid_input', 'answer with {optionId} or {cancelled: true}');
      if (!options.some((o) => o.optionId === answer.optionId))
        throw new ApiError('invalid_input', `optionId ${quoteClientInput(answer.optionId)} is not one of the request's options`, {
          extra: { options: options.map((o) => o.optionId) },
        });
      response = { outcome: { outcome: 'selected', optionId: answer.optionId } };
    }
    this.settle(requestId, 'answered', response);
    return interaction;
  }

  answerElicitation(requestId: string, answer: { action: string; content?: Record<string, unknown> | undefined }): PendingInteraction {
    const { interaction } = this.pending(requestId, 'elicitation');
    const response = (
      answer.action === 'accept' ? { action: 'accept', content: answer.content ?? {} } : { action: answer.action }
    ) as CreateElicitationResponse;
    this.settle(requestId, 'answered', response);
    return interaction;
  }

  /** Settles a session's questions cancelled (its turn was cancelled); all of them when `sessionId` is undefined. */
  cancelAll(reason: 'cancelled' | 'closed', sessionId?: string): void {
    for (const { interaction } of [...this.waiting.values()])
      if (sessionId === undefined || interaction.sessionId === sessionId) this.settle(interaction.requestId, reason, cancelledAnswer(interaction.kind));
  }

  private pending(requestId: string, kind: InteractionKind): Waiting {
    const waiting = this.waiting.get(requestId);
    if (waiting === undefined) {
      if (this.settled.has(requestId)) throw new ApiError('conflict', `interaction ${quoteClientInput(requestId)} was already answered or settled`);
      throw new ApiError('not_found', `no pending interaction ${quoteClientInput(requestId)}`);
    }
    if (waiting.interaction.kind !== kind)
      throw new ApiError('not_found', `interaction ${quoteClientInput(requestId)} is a ${waiting.interaction.kind}, not a ${kind}`);
    return waiting;
  }

  private settle(requestId: string, reason: SettleReason, answer: Answer): void {
    const waiting = this.waiting.get(requestId);
    if (waiting === undefined) return;
    this.waiting.delete(requestId);
    this.settled.add(requestId);
    // Remembered for a late answer's 409, within a bound (the oldest forgotten first).
    if (this.settled.size > SETTLED_KEPT) this.settled.delete(this.settled.values().next().value!);
    waiting.resolve(answer);
    this.onSettled(waiting.interaction, reason, answer);
  }
}

function cancelledAnswer(kind: InteractionKind): Answer {
  return kind === 'permission' ? { outcome: { outcome: 'cancelled' } } : { action: 'cancel' };
}
