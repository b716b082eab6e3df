/**
 * What an ACP connection's stream carries, one JSON text frame each. Every frame has the
 * connection's `seq` (1, 2, … with no holes) except a `gap`, which is terminal and says where the
 * viewer's cursor fell out of the journal. docs/acp.md shows each with an example.
 */
import type { ContentBlock, SessionNotification, StopReason } from '@agentclientprotocol/sdk';

import type { PendingInteraction, SettleReason } from './acpInteractions.js';

export type AcpState = 'starting' | 'ready' | 'closed' | 'failed';

export type AcpEvent =
  /** A `session/update` notification's params exactly as the agent sent them. */
  | { type: 'session_update'; sessionId: string; notification: SessionNotification }
  | { type: 'turn_started'; sessionId: string; turnId: string; prompt: ContentBlock[] }
  /** `stopReason` when the agent answered the prompt; `error` (code and message, as the routes' errors) when it failed or the agent went away. */
  | { type: 'turn_ended'; sessionId: string; turnId: string; stopReason: StopReason | null; error?: { code: string; message: string } }
  | { type: 'interaction_raised'; interaction: PendingInteraction }
  | { type: 'interaction_settled'; requestId: string; sessionId: string | null; reason: SettleReason; answer: unknown }
  /** The connection's state changed (ready, closed with why). */
  | { type: 'state'; state: AcpState; reason?: string; exitCode?: number | null; signal?: string | null }
  /** A reconnect started a new generation; sessions of the old one need `load` or `resume`. */
  | { type: 'generation'; previous: number };

export interface AcpEventFrame {
  kind: 'event';
  seq: number;
  connectionId: string;
  generation: number;
  atMs: number;
  event: AcpEvent;
}

export interface AcpEndFrame {
  kind: 'end';
  seq: number;
  connectionId: string;
  generation: number;
  reason: string;
}

export interface AcpGapFrame {
  kind: 'gap';
  connectionId: string;
  /** The viewer's cursor. */
  after: number;
  /** The oldest seq the journal still holds. */
  firstAvailable: number;
  message: string;
}
